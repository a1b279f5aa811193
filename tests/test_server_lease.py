"""One measuring job at a time per server, whatever Snakemake process started it (docs/reliability.md).

`resources: mongod=1` holds inside one Snakemake invocation; two invocations with disjoint targets
on one server used to measure at the same time, both exiting 0 with overlapping started_at/ended_at.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from costlab.config import load_config
from costlab.server import measuring_job
from costlab.server.lease import LeaseHeld, host_server_lease, server_lease_key

HOLD = """
import sys, time
from costlab.server.lease import host_server_lease
with host_server_lease(sys.argv[1], "docsize_measure_orders_1k", 0, {}):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.fixture(autouse=True)
def _own_lease_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("COSTLAB_LEASE_DIR", str(tmp_path / "leases"))


def test_a_second_snakemake_process_refuses_after_waiting_naming_the_holder(tmp_path):
    key = server_lease_key({}, "binary")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, key], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        with pytest.raises(LeaseHeld) as err:
            # the backend is never asked: the lease comes before any server starts
            with measuring_job(
                {"server": {"backend": "binary", "mongod": "/nonexistent/mongod", "lease_wait_s": 0.6}},
                "standalone",
                tmp_path / "p.json",
                job="appversions_loadtest_appV4",
            ):
                pass
        assert time.monotonic() - started >= 0.6
        assert "docsize_measure_orders_1k" in str(err.value) and f"pid {holder.pid}" in str(err.value)
        assert "server.lease_wait_s" in str(err.value)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    with host_server_lease(key, "next", 0, note := {}):    # released by the kernel with the process
        assert note["held"] is True and "waited_for" not in note


def test_a_waiting_job_takes_the_lease_when_the_holder_ends_and_records_whom_it_waited_for():
    key = server_lease_key({}, "docker")
    taken, release = threading.Event(), threading.Event()

    def first():
        with host_server_lease(key, "appversions_loadtest_appV6R4", 0, {}):
            taken.set()
            release.wait(10)

    thread = threading.Thread(target=first)
    thread.start()
    taken.wait(5)
    threading.Timer(0.7, release.set).start()
    note: dict = {}
    with host_server_lease(key, "docsize_measure_orders_4k", 10, note):
        assert note["held"] is True and note["waited_s"] >= 0.5
        assert note["waited_for"]["job"] == "appversions_loadtest_appV6R4"
    thread.join()


def test_two_jobs_with_disjoint_targets_on_one_deployment_do_not_overlap(tmp_path, external_server_config):
    config = load_config(
        overrides={"server": external_server_config | {"namespace": "srvlease_t", "lease_wait_s": 0.5}}
    )
    with measuring_job(
        config, "standalone", tmp_path / "loadtest.json", study="appversions", job="loadtest_appV4"
    ):
        with pytest.raises(LeaseHeld, match="loadtest_appV4") as err:
            with measuring_job(config, "standalone", tmp_path / "measure.json", study="docsize",
                               job="docsize_measure"):
                pass
        assert "waited 0.5 s" in str(err.value)
    record = json.loads((tmp_path / "loadtest.json").read_text())
    assert record["extra"]["server_lease"]["held"] is True
    assert record["extra"]["server_lease"]["key"].startswith("external-")
    assert not (tmp_path / "measure.json").exists()
    with measuring_job(
        config, "standalone", tmp_path / "measure.json", study="docsize", job="docsize_measure"
    ):
        pass   # once the first is done, the second measures


def test_no_lease_to_be_had_is_on_record(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("COSTLAB_LEASE_DIR", str(blocker / "leases"))
    with host_server_lease("binary-x", "job", 0, note := {}):
        assert note["held"] is False and "at the same time" in note["reason"]
