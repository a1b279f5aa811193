"""Engine scratch homes (hundreds of MB each) are removed on every exit path, and a home whose
owner process is gone is swept at the next run (costlab/engine/runs.py)."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from costlab.engine.runs import engine_home, sweep_orphan_homes

HOLD = """
import sys, time
from costlab.engine.runs import engine_home
with engine_home(sys.argv[1], "arraygrowth") as home:
    (home / "WiredTigerLog.0000000001").write_bytes(b"x" * 4096)
    print(home, flush=True)
    time.sleep(60)
"""


def _holder(base: Path) -> tuple[subprocess.Popen, Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(base)], stdout=subprocess.PIPE, text=True)
    home = Path(proc.stdout.readline().strip())
    assert home.is_dir() and home.parent == base
    return proc, home


def test_sigterm_of_an_engine_job_removes_its_home(tmp_path):
    proc, home = _holder(tmp_path)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 128 + signal.SIGTERM
    assert not home.exists()                      # was: left behind (800 MB, 301 MB, 206 MB seen)


def test_a_home_left_by_kill_9_is_swept_at_the_next_run_and_a_live_ones_is_not(tmp_path):
    dead, dead_home = _holder(tmp_path)
    alive, alive_home = _holder(tmp_path)
    try:
        dead.send_signal(signal.SIGKILL)
        dead.wait(10)
        assert dead_home.exists()                     # kill -9 runs no cleanup
        with engine_home(tmp_path, "docsize-64k") as mine:
            assert not dead_home.exists() and alive_home.exists() and mine.exists()
        assert not mine.exists()
        stranger = tmp_path / "costlab-engine-x-999999999.1-abc"   # a pid that cannot run
        stranger.mkdir()
        (tmp_path / "unrelated").mkdir()
        assert sweep_orphan_homes(tmp_path) == [stranger]
        assert (tmp_path / "unrelated").exists() and alive_home.exists()
    finally:
        alive.send_signal(signal.SIGTERM)
        alive.wait(10)
    assert not alive_home.exists()
