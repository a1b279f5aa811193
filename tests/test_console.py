"""The console of a run: one line per job, the bookkeeping dropped, warnings and errors kept; the summary."""
from __future__ import annotations

import io
import json
import logging
import re

import polars as pl

from costlab.console import OneLinePerJob
from costlab.registry import STUDY_NAMES
from costlab.summary import summary_lines


class FakeDefaultFilter(logging.Filter):
    def __init__(self, dryrun: bool) -> None:
        super().__init__()
        self.dryrun = dryrun


def console(dryrun: bool = False) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.name = "DefaultStreamHandler"
    handler.addFilter(FakeDefaultFilter(dryrun))
    handler.addFilter(OneLinePerJob(handler))
    log = logging.getLogger(f"test-console-{id(stream)}")
    log.propagate = False
    log.setLevel(logging.INFO)
    log.addHandler(handler)
    return log, stream


def snakemake_job_records(log: logging.Logger) -> None:
    """What Snakemake logs for a run of two jobs (the events its DefaultFormatter expands to ~25 lines)."""
    log.info("Building DAG of jobs...")
    log.info("Job stats:\njob    count\n-----  -----\na      1\nb      1\nall    1\ntotal      3\n",
             extra={"event": "run_info", "stats": {"a": 1, "b": 1, "all": 1, "total": 3}})
    log.info("Select jobs to execute...")
    log.info("Execute 1 jobs...")
    log.info(
        None,
        extra={
            "event": "job_info",
            "rule_name": "docsize_load",
            "wildcards": {"dataset": "orders_1k"},
            "input": ["x"],
            "output": ["y"],
            "log": ["z"],
            "jobid": 1,
        },
    )
    log.info(None, extra={"event": "shellcmd", "cmd": None})
    log.info("Finished jobid: 1 (Rule: docsize_load)", extra={"event": "job_finished", "job_id": 1})
    log.info(None, extra={"event": "progress", "done": 1, "total": 3})
    log.info(None, extra={"event": "job_info", "rule_name": "report", "wildcards": {}, "jobid": 2})
    log.warning("the server fell behind, see the log")
    log.info("Finished jobid: 2 (Rule: report)", extra={"event": "job_finished", "job_id": 2})
    log.info(None, extra={"event": "progress", "done": 2, "total": 3})
    log.info(None, extra={"event": "job_info", "rule_name": "all", "wildcards": {}, "jobid": 3})
    log.info("Finished jobid: 3 (Rule: all)", extra={"event": "job_finished", "job_id": 3})
    log.info("Complete log(s): /x/.snakemake/log/run.snakemake.log")


def test_one_line_per_job_and_no_shell_command_none():
    log, stream = console()
    snakemake_job_records(log)
    lines = stream.getvalue().splitlines()
    # `all` runs nothing: 2 jobs, not 3, and the counter of finished jobs ends at 2/2 (it stopped at 19/20)
    assert lines[0] == "2 jobs to run (detail of each: results/logs/ and .snakemake/log/)"
    assert lines[1].endswith("[1/2] docsize_load dataset=orders_1k")
    assert re.search(r"\[1/2\] done docsize_load dataset=orders_1k in \d+\.\d s$", lines[2]), lines[2]
    assert lines[3].endswith("[2/2] report")
    assert lines[4] == "the server fell behind, see the log"
    assert re.search(r"\[2/2\] done report in \d+\.\d s$", lines[5]), lines[5]
    assert len(lines) == 6
    assert "Shell command" not in stream.getvalue() and "None" not in stream.getvalue()


def test_durations_read_as_a_person_says_them():
    from costlab.console import duration_text

    assert [duration_text(s) for s in (0.04, 36.24, 125, 3725)] == [
        "0.0 s",
        "36.2 s",
        "2 min 05 s",
        "1 h 02 min",
    ]


def test_a_config_error_is_one_line():
    """Snakemake used to add two traceback lines under the message."""
    log, stream = console()
    log.error(
        'ConfigError in file "/x/rules/common.smk", line 13:\n'
        "invalid config key server.backend: 'dockr' is not one of ['auto', 'none'] (allowed: auto, none)\n"
        '  File "/x/rules/common.smk", line 13, in <module>\n  File "/x/costlab/config.py", line 129, in '
        'validate'
    )
    assert stream.getvalue().splitlines() == [
        "costlab: invalid config key server.backend: 'dockr' is not one of ['auto', 'none'] (allowed: auto, "
        "none)"
    ]


def test_dry_run_keeps_snakemakes_plan():
    log, stream = console(dryrun=True)
    snakemake_job_records(log)
    assert "Select jobs to execute..." in stream.getvalue()
    assert "Building DAG of jobs..." in stream.getvalue()


def test_errors_are_kept():
    log, stream = console()
    log.error("Error in rule docsize_load:", extra={"event": "job_error", "rule_name": "docsize_load"})
    assert "Error in rule docsize_load" in stream.getvalue()


def write_verdicts(results, study, verdicts, kind="mongod", reason=None):
    folder = results / study / "tables"
    folder.mkdir(parents=True)
    pl.DataFrame({"finding": [f"f{i}" for i in range(len(verdicts))], "verdict": verdicts,
                  "reason": [reason] * len(verdicts), "server_kind": [kind] * len(verdicts)},
                 schema_overrides={"reason": pl.Utf8}).write_csv(folder / "published_vs_reproduced.csv")


def test_summary_counts_verdicts_names_parts_not_run_and_the_report(tmp_path):
    results = tmp_path / "results"
    write_verdicts(results, "docsize", ["reproduced", "not reproduced", "reproduced"])
    write_verdicts(results, "uniqueidx", ["not comparable"] * 2, kind="stand-in", reason="stand-in")
    (results / "arraygrowth").mkdir(parents=True)
    (results / "arraygrowth" / "not_run.json").write_text(json.dumps(
        {"part": "arraygrowth mongod runs", "reason": "no MongoDB server", "fix": "install Docker"}))
    (results / "report.html").write_text("<html></html>")
    lines = summary_lines(results, ["docsize", "arraygrowth", "uniqueidx"], log=["/x/run.snakemake.log"])
    text = "\n".join(lines)
    assert "docsize      2 reproduced, 1 not reproduced" in text
    assert "uniqueidx    2 not comparable (stand-in server: not a MongoDB measurement)" in text
    assert "not run: arraygrowth mongod runs: no MongoDB server" in text
    assert "to run what was not run: install Docker" in text
    assert f"report: {results / 'report.html'}" in text
    assert "full log: /x/run.snakemake.log" in lines[-1]


def test_summary_with_no_server_shows_the_engine_lab_and_the_fix_once(tmp_path):
    """make all with no server: it used to say 'no tables/published_vs_reproduced.csv yet' for every study,
    leave out the engine lab's verdicts, and repeat the same fix line five times."""
    results = tmp_path / "results"
    write_verdicts(results, "arraygrowth", ["reproduced"] * 3 + ["not reproduced"], kind="engine")
    (results / "arraygrowth" / "engine").mkdir()
    (results / "arraygrowth" / "tables" / "published_vs_reproduced.csv").rename(
        results / "arraygrowth" / "engine" / "published_vs_engine.csv")
    for study in ("arraygrowth", "uniqueidx"):
        (results / study).mkdir(parents=True, exist_ok=True)
        (results / study / "not_run.json").write_text(json.dumps(
            {"part": "mongod", "reason": "no MongoDB server", "fix": "start a Docker engine"}))
    lines = summary_lines(results, ["arraygrowth", "uniqueidx"])
    text = "\n".join(lines)
    assert "no tables/published_vs_reproduced.csv yet" not in text
    assert ("  arraygrowth  engine lab (WiredTiger, not a mongod run): 3 reproduced, 1 not reproduced\n"
            "               not run: mongod: no MongoDB server\n"
            "  uniqueidx    not run: mongod: no MongoDB server\n"
            "to run what was not run: start a Docker engine\n") in text + "\n"
    assert text.count("start a Docker engine") == 1


def test_summary_without_a_report(tmp_path):
    lines = summary_lines(tmp_path / "results", ["flatnested"])
    assert "flatnested  no tables/published_vs_reproduced.csv yet" in lines[1]
    assert lines[-1].startswith("report: not built")


def test_smoke_run_console_is_short_and_ends_with_the_summary(smoke_all):
    """Before: 816 lines (every job's block, `Shell command: None`, the load test's shortfalls)."""
    console = smoke_all.result.stderr.splitlines()
    assert len(console) < 200, "\n".join(console[:60])
    assert not any("Shell command" in line for line in console)
    assert not any("fell behind -" in line for line in console)  # the load test's detail is in its log
    start = max(i for i, line in enumerate(console) if line.startswith("costlab summary:"))
    summary = console[start:]
    for study in STUDY_NAMES:
        assert any(line.strip().startswith(study) for line in summary), summary
    assert "report: results/report.html" in summary
    assert summary[-1].startswith("full log: ")
    jobs = [line for line in console if re.match(r"\d\d:\d\d:\d\d \[\s*\d+/\d+\] \w+", line)]
    assert len(jobs) >= 30  # one line per job


def test_default_profile_does_not_print_shell_commands():
    import yaml

    from costlab.config import ROOT

    profile = yaml.safe_load((ROOT / "profiles" / "default" / "config.yaml").read_text())
    assert not profile.get("printshellcmds")


def test_an_up_to_date_run_still_ends_with_the_summary():
    """A second `make all` printed "Nothing to be done" and stopped: Snakemake skips onsuccess then."""
    log, stream = console()
    handler = log.handlers[0]
    one_line = next(f for f in handler.filters if isinstance(f, OneLinePerJob))
    called = []
    one_line.on_nothing_to_do = lambda: called.append(True)
    log.info("Nothing to be done (all requested files are present and up to date).")
    assert called == [True]
    assert stream.getvalue() == "Nothing to be done (all requested files are present and up to date).\n"
    dry_log, dry_stream = console(dryrun=True)  # a dry run has no summary
    dry_filter = next(f for f in dry_log.handlers[0].filters if isinstance(f, OneLinePerJob))
    dry_filter.on_nothing_to_do = lambda: called.append("dry")
    dry_log.info("Nothing to be done (all requested files are present and up to date).")
    assert called == [True] and "Nothing to be done" in dry_stream.getvalue()



def test_a_target_needing_a_server_shows_costlabs_message_alone():
    """Snakemake wraps NoServerForTarget in an InputFunctionException (rule, wildcards, traceback)."""
    message = (
        "costlab: results/x.png needs a MongoDB server (server profile standalone) and none was found.\nfix"
    )
    wrapped = (
        f'InputFunctionException in rule server_setup in file "/w/rules/servers.smk", line 16:\nError:\n'
        f"  NoServerForTarget: {message}\nWildcards:\n  server_profile=standalone\nTraceback:\n"
        f'  File "/w/costlab/server/availability.py", line 87, in require_server'
    )
    for dryrun in (False, True):
        log, stream = console(dryrun=dryrun)
        log.error(wrapped, extra={"event": "error", "exception": "InputFunctionException"})
        assert stream.getvalue() == message + "\n"


def test_an_empty_wildcard_is_left_out_of_the_job_line():
    """Repeat 1's {rep} wildcard is '' (costlab.repeats): the line names the other wildcards, no 'rep='."""
    from costlab.console import _format_wildcards

    assert _format_wildcards({"run": "same_window", "dataset": "orders_1k", "rep": ""}) == \
        "run=same_window dataset=orders_1k"
    assert _format_wildcards({"run": "same_window", "rep": "__rep2"}) == "run=same_window rep=__rep2"
