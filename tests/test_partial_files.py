"""No partial file survives any exit: SIGTERM and Ctrl-C run every job's cleanup, the WiredTiger
connection is closed before its home is removed, and what a killed job left is swept next time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from costlab.config import ROOT
from costlab.io import atomic_path, sweep_partial_files, sweep_results

# A Snakemake script job as Snakemake runs it: the preamble defines `snakemake` in __main__, then the
# script imports costlab. This one writes events slowly through write_events (the 5.6 GB case).
JOB = textwrap.dedent("""
    import sys, time
    from snakemake.iocontainers import Namedlist as N
    from snakemake.iocontainers import Snakemake
    snakemake = Snakemake(N(), N([{out!r}]), N(), N(), 1, N(), N([{log!r}]), {{}}, "appversions_events", 0)
    from costlab.appversions.events import iter_event_chunks, write_events

    def chunks():
        chunk = next(iter_event_chunks(600, 42)).head(10)
        for i in range(1000):
            yield chunk
            print("writing", flush=True)
            time.sleep(0.2)

    write_events(chunks(), {out!r})
""")


def _start_job(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path]:
    out, log = tmp_path / "results" / "events.parquet", tmp_path / "results" / "logs" / "events.log"
    script = tmp_path / "job.py"
    script.write_text(JOB.format(out=str(out), log=str(log)))
    job = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert job.stdout.readline().strip() == "writing"
    assert [p.name for p in out.parent.glob(".events.parquet.*.tmp")], (
        "the job writes through a temporary file"
    )
    return job, out, log


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_server_free_job_stopped_by_a_signal_leaves_no_temporary_file_and_says_so_in_its_log(tmp_path, sig):
    job, out, log = _start_job(tmp_path)
    job.send_signal(sig)
    assert job.wait(timeout=60) != 0
    assert list(out.parent.iterdir()) == [out.parent / "logs"]  # no .events.parquet.*.tmp, no events.parquet
    assert f"stopped by {sig.name}" in log.read_text()


def test_a_failed_job_has_its_error_in_its_log(tmp_path):
    log = tmp_path / "logs" / "x.log"
    log.parent.mkdir()
    log.write_text("an older run's log\n")
    os.utime(log, (time.time() - 3600, time.time() - 3600))
    script = tmp_path / "job.py"
    script.write_text(
        textwrap.dedent(f"""
        from snakemake.iocontainers import Namedlist as N
        from snakemake.iocontainers import Snakemake
        snakemake = Snakemake(N(), N(), N(), N(), 1, N(), N([{str(log)!r}]), {{}}, "docsize_model", 0)
        import costlab
        raise ValueError("docsize.sizes_kb went wrong")
    """)
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 1
    text = log.read_text()
    assert text.startswith("costlab: job docsize_model failed: ValueError: docsize.sizes_kb went wrong")
    assert "Traceback" in text and "an older run's log" not in text
    # the console gets one line: what failed, the fix, where the traceback is
    assert done.stderr.strip().splitlines() == [
        "costlab: job docsize_model failed: ValueError: docsize.sizes_kb went wrong; the fix: correct what "
        "it names (a config value: `make dryrun` checks it before any job) and rerun the same command; "
        f"finished jobs are kept (traceback: {log})"]


def test_atomic_path_sweeps_what_dead_writers_left_of_the_same_file(tmp_path):
    target = tmp_path / "stats.csv"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(dead.stdout)
    legacy = tmp_path / ".stats.csv.k2j4x_9a.tmp"  # an older costlab's: no owner in the name
    of_a_dead_job = tmp_path / f".stats.csv.{dead_pid}.12345.abcdefgh.tmp"
    from costlab.procs import start_time

    of_a_live_job = tmp_path / f".stats.csv.{os.getpid()}.{start_time(os.getpid())}.abcdefgh.tmp"
    of_another_file = tmp_path / ".other.csv.k2j4x_9a.tmp"
    for path in (legacy, of_a_dead_job, of_a_live_job, of_another_file):
        path.write_text("partial")
    with atomic_path(target) as tmp:
        tmp.write_text("a,b\n")
    assert not legacy.exists() and not of_a_dead_job.exists()
    assert of_a_live_job.exists() and of_another_file.exists()
    assert sweep_results(tmp_path) == [of_another_file]  # the next run's sweep takes the rest
    assert of_a_live_job.exists() and target.read_text() == "a,b\n"
    assert sweep_partial_files(tmp_path) == []


ENGINE_JOB = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import costlab.engine.connection as connection
    import costlab.engine.runs as runs
    from costlab.engine.connection import Engine, EngineSettings

    real_open = connection.wiredtiger_module().wiredtiger_open
    opened, closed_at_removal = [], []

    class Connection:
        def __init__(self, conn):
            self.conn, self.closed = conn, False

        def open_session(self, *args):
            return self.conn.open_session(*args)

        def close(self, *args):
            self.conn.close(*args)
            self.closed = True

    class Module:
        def __getattr__(self, name):
            return getattr(connection.wiredtiger_module(), name)

        def wiredtiger_open(self, home, config):
            conn = Connection(real_open(home, config))
            opened.append(conn)
            if len(opened) == 2:                   # Ctrl-C arrives just as the reopen's connection is made
                os.kill(os.getpid(), signal.SIGINT)
            return conn

    connection.wiredtiger_module = lambda: Module()
    real_rmtree = runs.shutil.rmtree
    def rmtree(path, **kw):
        if Path(path).name.startswith("costlab-engine-docsize-1k-"):   # the home (not Engine's fresh start)
            closed_at_removal.append([conn.closed for conn in opened])
        real_rmtree(path, **kw)
    runs.shutil.rmtree = rmtree
    base = Path(sys.argv[1])
    try:
        with runs.engine_home(base, "docsize-1k") as home:
            engine = Engine(home, EngineSettings(cache_mb=8))
            engine.reopen()
            print("not interrupted")
    except KeyboardInterrupt:
        print("interrupted", closed_at_removal, list(base.iterdir()))
""")


def test_ctrl_c_in_reopen_closes_the_connection_before_the_home_is_removed(tmp_path):
    # Ctrl-C during docsize_engine left its 201 MB scratch home in 2 of 3 tries: the KeyboardInterrupt inside
    # Engine.reopen dropped a live connection whose threads kept writing while the home was removed.
    script = tmp_path / "engine_job.py"
    script.write_text(ENGINE_JOB)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "work")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.stdout.strip() == "interrupted [[], [True, True]] []", done.stdout + done.stderr[-2000:]
