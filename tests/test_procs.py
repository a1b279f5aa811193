"""Child processes die with their job, however it dies (kill -9 as the OOM killer would)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import psutil

from costlab.config import ROOT


def _wait_gone(pids: list[int], deadline_s: float) -> list[int]:
    """The pids still running after waiting up to deadline_s (a bound on waiting, not a timing)."""
    end = time.monotonic() + deadline_s
    alive = list(pids)
    while alive and time.monotonic() < end:
        alive = [pid for pid in alive if psutil.pid_exists(pid)
                 and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.2)
    return alive


def _children_when(parent: subprocess.Popen, count: int, deadline_s: float = 120) -> list[int]:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        assert parent.poll() is None, parent.stderr.read() if parent.stderr else ""
        kids = [p.pid for p in psutil.Process(parent.pid).children()
                if "resource_tracker" not in " ".join(p.cmdline())]
        if len(kids) >= count:
            return kids
        time.sleep(0.2)
    raise AssertionError(f"fewer than {count} children after {deadline_s} s")


CHILD = """
import os, sys, time
from costlab.procs import die_with_parent
die_with_parent(int(sys.argv[1]))
print("armed", flush=True)
time.sleep(300)
"""

PARENT = """
import subprocess, sys, time, os
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(os.getpid())], stdout=subprocess.PIPE, text=True)
assert child.stdout.readline().strip() == "armed"
print(child.pid, flush=True)
time.sleep(300)
"""  # noqa: E501 (code in a string, kept as it runs)


def test_a_child_dies_when_its_parent_is_killed_hard():
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, CHILD], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    child_pid = int(parent.stdout.readline())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert _wait_gone([child_pid], 10) == []


def test_a_child_whose_parent_is_already_gone_exits_at_once():
    code = (
        "import sys; from costlab.procs import die_with_parent; "
        "die_with_parent(1 if sys.argv[1] != '1' else 2); print('ran on')"
    )
    result = subprocess.run([sys.executable, "-c", code, str(os.getpid())], capture_output=True, text=True,
                            timeout=60, cwd=ROOT)
    assert result.returncode == 1 and "ran on" not in result.stdout


WATCHED = """
import sys, time
from costlab.procs import start_watchdog
watchdog = start_watchdog([sys.executable, "-c", "import sys; open(sys.argv[1], 'w').write('removed')", sys.argv[1]])
print(watchdog.pid, flush=True)
if sys.argv[2] == "release":
    watchdog.terminate(); watchdog.wait(); print("released", flush=True)
time.sleep(300)
"""  # noqa: E501 (code in a string, kept as it runs)


def test_watchdog_runs_its_command_after_a_hard_kill_only(tmp_path):
    # What the docker backend uses to remove a container that is not the job's child.
    killed, released = tmp_path / "killed", tmp_path / "released"
    parent = subprocess.Popen([sys.executable, "-c", WATCHED, str(killed), "hold"], stdout=subprocess.PIPE,
                              text=True, cwd=ROOT)
    watchdog_pid = int(parent.stdout.readline())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    assert _wait_gone([watchdog_pid], 30) == []
    assert killed.read_text() == "removed"
    normal = subprocess.Popen(
        [sys.executable, "-c", WATCHED, str(released), "release"], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        normal.stdout.readline()
        assert normal.stdout.readline().strip() == "released"
    finally:
        normal.kill()
        normal.wait()
    time.sleep(1)
    assert not released.exists()


LOADTEST = """
import sys
import polars as pl
from costlab.appversions.loadtest_plan import LoadTestPlan, loadtest_requests
from costlab.appversions.loadtest_workers import run_loadtest

if __name__ == "__main__":
    plan = LoadTestPlan(phase_seconds=120, warmup_seconds=0, upsert_rates=(10.0,), report_rates=(5.0,),
                        batch_size=5)
    key = "0" * 63 + "1"
    events = pl.DataFrame({"key": [key] * 5}).with_columns(
        pl.lit(None, pl.Datetime("ms", "UTC")).alias("date"), pl.lit("approved").alias("status"))
    sched, upserts, reports = loadtest_requests(plan, events, [key], seed=1)
    run_loadtest(sys.argv[1], "costlab_procs_t", "appV6R4", "appV6R4", plan, upserts, reports, sched,
                 upsert_workers=2, report_workers=2)
"""


def test_loadtest_workers_die_with_a_job_killed_hard(tmp_path, server_uri):
    script = tmp_path / "job.py"
    script.write_text(LOADTEST)
    job = subprocess.Popen(
        [sys.executable, str(script), server_uri], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    workers: list[int] = []
    try:
        workers = _children_when(job, 4)
        time.sleep(3)   # the workers are connected and waiting for / sending their operations
        job.send_signal(signal.SIGKILL)
        job.wait()
        # Before: they kept sending until their 2-minute schedule ended.
        assert _wait_gone(workers, 15) == []
    finally:
        if job.poll() is None:
            job.kill()
        for pid in workers:   # never leave them running, even when the assertion failed
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
