"""A console a person can follow: one line per job while Snakemake runs, detail in the log file.

Snakemake prints every job as a block (rule, input, output, log, jobid, reason, wildcards,
resources), then `Shell command: None` for script rules, a timestamp, `Finished jobid` and a
progress line: 10-15 lines a job. `quiet_console(workflow)` (called from rules/common.smk) adds a
filter to Snakemake's console handler only, so that each job prints one line

    16:17:05 [ 7/45] appversions_load version=appV4

and the bookkeeping lines are dropped. Warnings, errors (with their log excerpts) and anything
else Snakemake says stay. Snakemake's own log file (.snakemake/log/*.snakemake.log) keeps
everything, as do the jobs' logs under results/logs/. A dry run (-n) keeps Snakemake's full
plan; COSTLAB_CONSOLE=full keeps the full console for a real run too.
"""
from __future__ import annotations

import logging
import os
import re
import time
from typing import Any, Callable, TextIO

from costlab.server.errors import NoServerForTarget

CONSOLE_ENV = "COSTLAB_CONSOLE"
SNAKEMAKE_LOGGER = "snakemake.logging"
STREAM_HANDLER = "DefaultStreamHandler"

# Plain messages (no Snakemake event) that only narrate the scheduler.
NOISE = re.compile(
    r"^\s*("
    r"Select jobs to execute\.\.\.|Execute \d+ jobs\.\.\.|Building DAG of jobs\.\.\.|Using shell: .*|"
    r"Assuming unrestricted shared filesystem usage\.?|Rules claiming more threads will be scaled down\.|"
    r"Conda environments: ignored|Config file .* is extended by additional config .*|"
    r"Provided cores: \d+|Provided resources: .*|Complete log\(s\): .*|Elapsed time: .*|"
    r"Using profiles? .*|Job stats:"
    r")\s*$", re.S)

# A target that needs a server when there is none: Snakemake wraps costlab's message in an
# InputFunctionException (rule, wildcards, traceback); the console shows the message alone.
NO_SERVER_ERROR = re.compile(rf"{NoServerForTarget.__name__}: (.*?)(?:\nWildcards:|\Z)", re.S)

# Snakemake events (snakemake_interface_logger_plugins.common.LogEvent values) shown as nothing.
NOTHING_TO_DO = "Nothing to be done"   # snakemake.common.NOTHING_TO_BE_DONE_MSG's start

DROPPED_EVENTS = {"shellcmd", "job_finished", "job_started", "resources_info", "workflow_started",
                  "group_info", "rulegraph"}
KEPT_EVENTS = {"job_error", "group_error", "error"}


def _format_wildcards(wildcards: Any) -> str:
    if not wildcards:
        return ""
    items = wildcards.items() if hasattr(wildcards, "items") else []
    return " ".join(f"{k}={v}" for k, v in items)


class OneLinePerJob(logging.Filter):
    """A filter for Snakemake's console handler: writes the job lines itself, drops the rest of the noise."""

    def __init__(self, handler: logging.StreamHandler) -> None:
        super().__init__("costlab-console")
        self.handler = handler
        self.started = 0
        self.total: int | None = None
        # Called after "Nothing to be done": Snakemake returns before its onsuccess handler then, so
        # a second `make all` would end without the summary (and the report's path).
        self.on_nothing_to_do: Callable[[], None] | None = None

    @property
    def stream(self) -> TextIO:
        return self.handler.stream

    def _dry_run(self) -> bool:
        return any(getattr(f, "dryrun", False) for f in self.handler.filters if f is not self)

    def job_line(self, record: logging.LogRecord) -> str:
        self.started += 1
        total = self.total or 0
        width = len(str(total)) if total else 1
        counter = f"[{self.started:>{width}}/{total}]" if total else f"[{self.started}]"
        wildcards = _format_wildcards(getattr(record, "wildcards", None))
        name = getattr(record, "rule_name", None) or "job"
        return f"{time.strftime('%H:%M:%S')} {counter} {name}{' ' + wildcards if wildcards else ''}"

    def write(self, line: str) -> None:
        self.handler.acquire()
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        finally:
            self.handler.release()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR and isinstance(record.msg, str):
            no_server = NO_SERVER_ERROR.search(record.msg)
            if no_server:  # a dry run too: the plan cannot be made, say why in a few lines
                record.msg, record.args = no_server.group(1).strip(), ()
                return True
        if self._dry_run():
            return True
        event = str(getattr(record, "event", "") or "")
        if record.levelno >= logging.WARNING or event in KEPT_EVENTS:
            return True
        if event == "run_info":
            # The job-count table: keep its total, say it in one line.
            stats = getattr(record, "stats", None)
            if isinstance(stats, dict) and "total" in stats:
                self.total = int(stats["total"])
            else:
                found = re.search(r"^total\s+(\d+)\s*$", str(record.msg), re.M)
                if found:
                    self.total = int(found.group(1))
            if self.total is not None and self.started == 0:
                self.write(f"{self.total} jobs to run (detail of each: results/logs/ and .snakemake/log/)")
            return False
        if event == "progress":
            self.total = getattr(record, "total", self.total)
            return False
        if event == "job_info":
            if getattr(record, "rule_name", None) != "all":
                self.write(self.job_line(record))
            return False
        if event in DROPPED_EVENTS:
            return False
        message = record.getMessage() if record.msg is not None else ""
        if not message.strip() or NOISE.match(message) or re.fullmatch(r"\s*\[[^\]]+\d{4}\]\s*", message):
            return False
        if message.startswith(NOTHING_TO_DO) and self.on_nothing_to_do is not None:
            self.write(message)
            self.on_nothing_to_do()
            return False
        return True


def _print_summary(workflow: Any) -> None:
    from costlab.summary import print_summary

    print_summary("results", workflow.config.get("studies"))


def quiet_console(workflow: Any = None) -> OneLinePerJob | None:
    """Install the one-line-per-job filter on Snakemake's console handler (idempotent); None if not installed."""
    if os.environ.get(CONSOLE_ENV, "").lower() == "full":
        return None
    if workflow is not None:
        output = getattr(workflow, "output_settings", None)
        if output is not None and (getattr(output, "verbose", False) or getattr(output, "printshellcmds", False)):
            return None
    for handler in logging.getLogger(SNAKEMAKE_LOGGER).handlers:
        if getattr(handler, "name", None) != STREAM_HANDLER:
            continue
        for existing in handler.filters:
            if isinstance(existing, OneLinePerJob):
                return existing
        installed = OneLinePerJob(handler)
        if workflow is not None:
            installed.on_nothing_to_do = lambda: _print_summary(workflow)
        handler.addFilter(installed)
        return installed
    return None
