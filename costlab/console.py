"""A console a person can follow: one line per job while Snakemake runs, detail in the log file.

Snakemake prints every job as a block (rule, input, output, log, jobid, reason, wildcards,
resources), then `Shell command: None` for script rules, a timestamp, `Finished jobid` and a
progress line: 10-15 lines a job. `quiet_console(workflow)` (called from rules/common.smk) adds a
filter to Snakemake's console handler only, so that each job prints one line

    16:17:05 [ 7/45] appversions_load version=appV4
    16:17:41 [ 9/45] done appversions_load version=appV4 in 36.2 s

(the first when the job starts, counting started jobs; the second when it ends, counting finished
jobs, so the last line of a run reads [45/45]; `all`, which does nothing, is not counted), and the
bookkeeping lines are dropped. A config error prints its one-line message without Snakemake's
traceback lines. Warnings, errors (with their log excerpts) and anything
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
from costlab.summary import print_summary

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
# A config the schema refuses (costlab.config.ConfigError raised while rules/common.smk is parsed):
# Snakemake prints 'ConfigError in file ..., line N:', the message, then traceback lines.
CONFIG_ERROR = re.compile(r"ConfigError in file [^\n]*:\n(.*?)(?:\n\s+File |\Z)", re.S)
# Rules that run nothing: not counted as jobs.
NO_WORK_RULES = ("all",)

# Snakemake events (snakemake_interface_logger_plugins.common.LogEvent values) shown as nothing.
NOTHING_TO_DO = "Nothing to be done"   # snakemake.common.NOTHING_TO_BE_DONE_MSG's start

DROPPED_EVENTS = {"shellcmd", "job_finished", "job_started", "resources_info", "workflow_started",
                  "group_info", "rulegraph"}
KEPT_EVENTS = {"job_error", "group_error", "error"}


def _format_wildcards(wildcards: Any) -> str:
    if not wildcards:
        return ""
    items = wildcards.items() if hasattr(wildcards, "items") else []
    # an empty wildcard says nothing (repeat 1's {rep}, costlab.repeats): left out rather than "rep="
    return " ".join(f"{k}={v}" for k, v in items if v != "")


class OneLinePerJob(logging.Filter):
    """A filter for Snakemake's console handler: writes the job lines itself, drops the rest of the noise."""

    def __init__(self, handler: logging.StreamHandler) -> None:
        super().__init__("costlab-console")
        self.handler = handler
        self.started = 0
        self.finished = 0
        self.total: int | None = None
        self.running: dict[Any, tuple[float, str]] = {}   # jobid -> (start, "rule wildcards")
        # Called after "Nothing to be done": Snakemake returns before its onsuccess handler then, so
        # a second `make all` would end without the summary (and the report's path).
        self.on_nothing_to_do: Callable[[], None] | None = None

    @property
    def stream(self) -> TextIO:
        return self.handler.stream

    def _dry_run(self) -> bool:
        return any(getattr(f, "dryrun", False) for f in self.handler.filters if f is not self)

    def _counter(self, count: int) -> str:
        total = self.total or 0
        width = len(str(total)) if total else 1
        return f"[{count:>{width}}/{total}]" if total else f"[{count}]"

    def job_line(self, record: logging.LogRecord) -> str:
        self.started += 1
        wildcards = _format_wildcards(getattr(record, "wildcards", None))
        name = getattr(record, "rule_name", None) or "job"
        what = f"{name}{' ' + wildcards if wildcards else ''}"
        self.running[getattr(record, "jobid", None)] = (time.monotonic(), what)
        return f"{time.strftime('%H:%M:%S')} {self._counter(self.started)} {what}"

    def finished_line(self, record: logging.LogRecord) -> str | None:
        """'<time> [k/total] done <rule> in 12.3 s' for a job this console saw start (None otherwise)."""
        started = self.running.pop(getattr(record, "job_id", None), None)
        if started is None:
            return None
        self.finished += 1
        return f"{time.strftime('%H:%M:%S')} {self._counter(self.finished)} done {started[1]} in " \
               f"{duration_text(time.monotonic() - started[0])}"

    def write(self, line: str) -> None:
        # On a terminal a job's progress bar (another process) may hold the cursor's row: clear it first, so
        # the line starts at the left; the bar redraws itself below on its next update.
        clear = "\r\x1b[K" if getattr(self.stream, "isatty", lambda: False)() else ""
        self.handler.acquire()
        try:
            self.stream.write(clear + line + "\n")
            self.stream.flush()
        finally:
            self.handler.release()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR and isinstance(record.msg, str):
            no_server = NO_SERVER_ERROR.search(record.msg)
            if no_server:  # a dry run too: the plan cannot be made, say why in a few lines
                record.msg, record.args = no_server.group(1).strip(), ()
                return True
            config_error = CONFIG_ERROR.search(record.msg)
            if config_error:  # the message names the key and what is allowed: that line alone
                record.msg, record.args = f"costlab: {config_error.group(1).strip()}", ()
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
                self.total = int(stats["total"]) - sum(int(stats.get(rule, 0)) for rule in NO_WORK_RULES)
            else:
                found = re.search(r"^total\s+(\d+)\s*$", str(record.msg), re.M)
                if found:
                    idle = sum(int(m) for m in re.findall(rf"^(?:{'|'.join(NO_WORK_RULES)})\s+(\d+)\s*$",
                                                           str(record.msg), re.M))
                    self.total = int(found.group(1)) - idle
            if self.total is not None and self.started == 0:
                self.write(f"{self.total} jobs to run (detail of each: results/logs/ and .snakemake/log/)")
            return False
        if event == "progress":
            if self.total is None:   # its total counts `all` too: the job-count table's is kept
                self.total = getattr(record, "total", None)
            return False
        if event == "job_info":
            if getattr(record, "rule_name", None) not in NO_WORK_RULES:
                self.write(self.job_line(record))
            return False
        if event == "job_finished":
            line = self.finished_line(record)
            if line is not None:
                self.write(line)
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


def duration_text(seconds: float) -> str:
    """'0.4 s', '36.2 s', '2 min 05 s', '1 h 02 min'."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _print_summary(workflow: Any) -> None:
    print_summary("results", workflow.config.get("studies"))


def quiet_console(workflow: Any = None) -> OneLinePerJob | None:
    """Install the one-line-per-job filter on Snakemake's console handler (idempotent); None if not
    installed."""
    if os.environ.get(CONSOLE_ENV, "").lower() == "full":
        return None
    if workflow is not None:
        output = getattr(workflow, "output_settings", None)
        if output is not None and (
            getattr(output, "verbose", False) or getattr(output, "printshellcmds", False)
        ):
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
