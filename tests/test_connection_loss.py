"""Losing the server during a load test fails the job in seconds, naming the server; no result is recorded.

The server is a stand-in process of its own (secantusd-py) on a fixed port and storage directory,
so the test can kill it and start it again where it was, as an outage would.
"""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from costlab.config import ROOT

# restarts and lost servers: `make test-lifecycle` (about a minute of waiting), not `make test`
pytestmark = pytest.mark.lifecycle

SECRET = "Outage-Pw-77"


class StandIn:
    def __init__(self, storage: Path):
        import portpicker

        self.port = portpicker.pick_unused_port()
        self.storage = storage
        self.proc: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/"

    def start(self) -> None:
        exe = shutil.which("secantusd-py", path=str(Path(sys.executable).parent))
        if exe is None:
            pytest.skip("secantusd-py is not installed")
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--storage-path", str(self.storage), "--log-level", "ERROR"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        from pymongo import MongoClient
        with MongoClient(self.uri, serverSelectionTimeoutMS=60000) as client:
            client.admin.command("ping")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


@pytest.fixture
def standin(tmp_path):
    server = StandIn(tmp_path / "standin-data")
    server.start()
    yield server
    if server.proc and server.proc.poll() is None:
        server.kill()


JOB = """
import json, sys
from pathlib import Path
from costlab.config import load_config

if __name__ == "__main__":
    from costlab.appversions.events import generate_events
    from costlab.appversions.load import load_job
    from costlab.appversions.loadtest import loadtest_job
    from costlab.appversions.params import LoadParams, LoadtestParams
    from costlab.config import run_facts

    work = Path(sys.argv[2])
    config = load_config(overrides=json.loads(sys.argv[1]))
    settings = config["appversions"]
    events = work / "events.parquet"
    generate_events(settings["events_per_year"], settings["seed"]).write_parquet(events)
    data = work / "data" / "appV6R4"
    run = run_facts(config, "appversions")
    load_job(LoadParams.from_config(config), run, "appV6R4", events, data, work / "collstats.parquet",
             work / "load.json")
    print("loaded", flush=True)
    loadtest_job(LoadtestParams.from_config(config), run, "appV6R4", data, work / "raw.parquet",
                 work / "loadtest.json")
"""


def _overrides(uri: str) -> dict:
    return {"server": {"backend": "external", "uri": uri, "startup_timeout_s": 300, "operation_timeout_s": 3,
                       "namespace": "outage_t"},
            "appversions": {"events_per_year": 60, "load_workers": 1, "loadtest": {
                "phase_seconds": 120, "warmup_seconds": 0, "upsert_rates": [250], "report_rates": [25],
                "rate_scale": 0.1, "batch_size": 25, "upsert_workers": 2, "report_workers": 2}}}


def _wait_for_workers(job: subprocess.Popen, count: int, deadline_s: float = 180) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if job.poll() is not None:
            raise AssertionError(f"job ended early: {job.stderr.read()[-3000:]}")
        kids = [
            p for p in psutil.Process(job.pid).children() if "resource_tracker" not in " ".join(p.cmdline())
        ]
        if len(kids) >= count:
            return
        time.sleep(0.2)
    raise AssertionError("the load test's workers did not start")


def _wait_for_operations(uri: str, job: subprocess.Popen, deadline_s: float = 180) -> None:
    """Until the load test's updates reach the server (the workers are past start-up)."""
    from pymongo import MongoClient
    with MongoClient(uri) as client:
        before = client.admin.command("serverStatus")["opcounters"]["update"]
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            assert job.poll() is None, job.stderr.read()[-3000:]
            if client.admin.command("serverStatus")["opcounters"]["update"] > before + 2:
                return
            time.sleep(0.2)
    raise AssertionError("no load-test operations reached the server")


@pytest.mark.parametrize("comes_back", [False, True], ids=["server gone", "server back after 2 s"])
def test_losing_the_server_fails_the_load_test_naming_server_and_job(
    standin, tmp_path, monkeypatch, comes_back
):
    # The password is real (a user on the stand-in) and comes from the environment.
    from pymongo import MongoClient
    with MongoClient(standin.uri) as client:
        client.admin.command("createUser", "alice", pwd=SECRET, roles=["root"])
    uri = f"mongodb://alice@127.0.0.1:{standin.port}/?authSource=admin"
    work = tmp_path / "work"
    work.mkdir()
    job = subprocess.Popen([sys.executable, "-c", JOB, json.dumps(_overrides(uri)), str(work)], cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**__import__("os").environ, "COSTLAB_MONGODB_PASSWORD": SECRET})
    try:
        assert job.stdout.readline().strip() == "loaded", job.stderr.read()[-3000:]
        _wait_for_workers(job, 4)
        _wait_for_operations(standin.uri, job)
        standin.kill()
        if comes_back:
            time.sleep(2)
            standin.start()
        # The schedule runs 120 s and used to end with rc 0; the operation timeout is 3 s.
        _, stderr = job.communicate(timeout=90)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode != 0
    lines = [line for line in stderr.splitlines() if "lost the connection to" in line]
    assert lines, stderr[-3000:]
    assert (
        f"mongodb://alice@127.0.0.1:{standin.port}/?authSource=admin during" in lines[-1]
        and "appV6R4" in lines[-1]
    )
    assert SECRET not in stderr
    assert not (work / "raw.parquet").exists() and not (work / "loadtest.json").exists()


def test_a_job_started_against_a_dead_server_names_it_in_one_line(tmp_path):
    import portpicker

    from costlab.server import ServerUnavailable, start_server

    port = portpicker.pick_unused_port()
    config = {
        "backend": "external",
        "uri": f"mongodb://bob:{SECRET}@127.0.0.1:{port}/",
        "startup_timeout_s": 1,
    }
    with pytest.raises(ServerUnavailable) as err:
        with start_server(config, "standalone"):
            pass
    assert f"mongodb://bob@127.0.0.1:{port}/" in str(err.value) and SECRET not in str(err.value)
    assert "\n" not in str(err.value)


def test_measuring_job_turns_a_lost_connection_into_one_line(tmp_path, standin):
    from pymongo.errors import AutoReconnect

    from costlab.server import measuring_job
    from costlab.server.connection import ConnectionLost

    config = {"server": {"backend": "external", "uri": standin.uri, "startup_timeout_s": 5}}
    with pytest.raises(ConnectionLost) as err:
        with measuring_job(config, "standalone", tmp_path / "p.json", job="docsize_measure_x"):
            raise AutoReconnect("connection reset")
    message = str(err.value)
    assert message.startswith("costlab: lost the connection to " + standin.uri)
    assert "docsize_measure_x" in message and "\n" not in message
    assert not (tmp_path / "p.json").exists()
