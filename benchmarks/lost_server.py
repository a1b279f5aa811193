"""Seconds from losing the server to the load-test job's exit (not part of `make bench`: it kills a server).

A stand-in process (secantusd-py) serves a small appversions load and a 120 s load-test schedule;
once operations flow the server is killed with SIGKILL, and the script prints how long the job
took to fail and its last line. Before issue 15 the job ran out its schedule and exited 0.

    .venv/bin/python benchmarks/lost_server.py [operation_timeout_s]     # default 15 (config default)
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import test_connection_loss as scenario  # noqa: E402  (the test's server, job and waits)


def main() -> None:
    timeout_s = float(sys.argv[1]) if len(sys.argv) > 1 else 15.0
    with tempfile.TemporaryDirectory(prefix="costlab-lost-server-") as tmp:
        work = Path(tmp)
        server = scenario.StandIn(work / "standin")
        server.start()
        overrides = scenario._overrides(server.uri)
        overrides["server"]["operation_timeout_s"] = timeout_s
        job = subprocess.Popen(
            [sys.executable, "-c", scenario.JOB, json.dumps(overrides), str(work)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert job.stdout.readline().strip() == "loaded", job.stderr.read()[-2000:]
            scenario._wait_for_workers(job, 4)
            scenario._wait_for_operations(server.uri, job)
            killed = time.monotonic()
            server.kill()
            _, stderr = job.communicate(timeout=600)
        finally:
            if job.poll() is None:
                job.kill()
    lines = [line for line in stderr.splitlines() if "lost the connection" in line]
    print(f"operation_timeout_s {timeout_s:g}: job exit code {job.returncode}, "
          f"{time.monotonic() - killed:.1f} s from server kill to job exit (schedule 120 s)")
    print(lines[-1] if lines else stderr[-2000:])


if __name__ == "__main__":
    main()
