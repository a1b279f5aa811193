"""The binary backend's real process lifecycle, on the real mongod (the bundled 6.0.5).

tests/shims/mongod (the stand-in under mongod's options) stays only where a server must fail at start on
purpose, which a real mongod does not do on request.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from costlab.server import ServerStartError, ServerUnavailable, start_server
from costlab.server.binary import find_mongod, mongod_command
from costlab.server.profiles import get_profile

# restarts and lost servers: `make test-lifecycle` (about a minute of waiting), not `make test`
pytestmark = pytest.mark.lifecycle


@pytest.fixture
def shim_config(mongod_binary):
    return {"backend": "binary", "mongod": mongod_binary, "startup_timeout_s": 60}


@pytest.fixture
def failing_shim_config(mongod_shim, monkeypatch):
    # The shim execs secantusd-py, which lives beside this interpreter.
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    return {"backend": "binary", "mongod": mongod_shim, "startup_timeout_s": 30}


def _shim_processes(data_dir: Path) -> list[psutil.Process]:
    """The mongod processes serving `data_dir`."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if str(data_dir) in " ".join(cmdline) and cmdline and cmdline[0].endswith("mongod"):
            found.append(proc)
    return found


def test_command_line_binds_loopback_and_applies_profile(tmp_path):
    cmd = mongod_command(
        "/usr/bin/mongod", get_profile("standalone-small-cache"), 28001, tmp_path, tmp_path / "l"
    )
    assert cmd[cmd.index("--bind_ip") + 1] == "127.0.0.1"
    assert cmd[cmd.index("--wiredTigerCacheSizeGB") + 1] == "0.25"
    assert cmd[cmd.index("--dbpath") + 1] == str(tmp_path)
    assert "--replSet" not in cmd
    rs = mongod_command("mongod", get_profile("replset-1"), 1, tmp_path, tmp_path / "l")
    assert rs[rs.index("--replSet") + 1] == "rs0"


def test_missing_configured_mongod_is_a_clear_error(tmp_path):
    with pytest.raises(ServerUnavailable, match="not-a-mongod"):
        find_mongod(str(tmp_path / "not-a-mongod"))


def test_start_query_stop_leaves_no_process(shim_config, tmp_path):
    data_dir = tmp_path / "data"
    with start_server(shim_config, "standalone-small-cache", data_dir) as server:
        assert server.backend == "binary"
        server.client.costlab_t.c.insert_one({"x": 1})
        assert server.client.costlab_t.c.count_documents({}) == 1
        running = _shim_processes(data_dir)
        assert running, "the server should be running inside the block"
        assert server.applied["wiredTigerCacheSizeGB"] == 0.25
        # the profile's 1 GiB (1024**3 = 1073741824 bytes), through a memory cgroup where this user may
        limit = server.applied["memory_limit_bytes"]
        if os.geteuid() == 0 and not str(limit).startswith("not applied"):
            group = Path(str(limit).split("(cgroup ", 1)[1].rstrip(")"))
            assert str(limit).startswith("1073741824 ")
            limit_file = group / ("memory.limit_in_bytes" if (group / "memory.limit_in_bytes").exists()
                                  else "memory.max")
            assert limit_file.read_text().strip() == "1073741824"
            assert str(running[0].pid) in (group / "cgroup.procs").read_text().split()
        cache = server.client.admin.command("serverStatus")["wiredTiger"]["cache"]
        assert cache["maximum bytes configured"] == 0.25 * 1024**3   # 268435456
    assert not _shim_processes(data_dir)
    assert (data_dir / "mongod.log").exists()


def test_data_directory_is_reused_across_restarts(shim_config, tmp_path):
    data_dir = tmp_path / "data"
    with start_server(shim_config, "standalone", data_dir) as server:
        server.client.costlab_t.c.insert_many([{"i": i} for i in range(10)])
    with start_server(shim_config, "standalone", data_dir) as server:
        assert server.client.costlab_t.c.count_documents({}) == 10


def test_restart_stops_the_process_and_keeps_the_data(shim_config, tmp_path):
    """restart() (a cold WiredTiger cache for docsize's small-cache blocks): a new process, same data."""
    data_dir = tmp_path / "data"
    with start_server(shim_config, "standalone-small-cache", data_dir) as server:
        server.client.costlab_t.c.insert_many([{"i": i} for i in range(10)])
        before = {p.pid for p in _shim_processes(data_dir)}
        old_client = server.client
        assert server.restart() is True and server.restarts == 1
        after = {p.pid for p in _shim_processes(data_dir)}
        assert after and not (before & after), "restart must stop the old process"
        assert server.client is not old_client
        assert server.client.costlab_t.c.count_documents({}) == 10
        assert server.applied["wiredTigerCacheSizeGB"] == 0.25
    assert not _shim_processes(data_dir)


def test_binary_and_external_record_what_the_loadtest_profile_could_not_apply(external_server_config):
    from costlab.server.binary import applied_options

    applied = applied_options(get_profile("standalone-2cpu-4gb"))   # no process limits given
    assert applied["wiredTigerCacheSizeGB"] == 1.5
    assert applied["cpus"] == "not applied (binary backend)"
    assert applied["memory_limit_bytes"] == "not applied (binary backend)"
    with start_server(external_server_config, "standalone-2cpu-4gb") as server:
        assert (
            server.applied["cpus"]
            == server.applied["memory_limit_bytes"]
            == "as configured by the deployment"
        )


def test_external_server_cannot_restart(external_server_config):
    with start_server(external_server_config, "standalone-small-cache") as server:
        client = server.client
        assert server.restart() is False and server.restarts == 0 and server.client is client


def test_no_process_left_after_the_job_raises(shim_config, tmp_path):
    data_dir = tmp_path / "data"
    with pytest.raises(RuntimeError, match="boom"):
        with start_server(shim_config, "standalone", data_dir):
            assert _shim_processes(data_dir)
            raise RuntimeError("boom")
    assert not _shim_processes(data_dir)


def test_server_that_dies_at_start_reports_its_log(failing_shim_config, tmp_path, monkeypatch):
    monkeypatch.setenv("COSTLAB_SHIM_FAIL", "1")
    with pytest.raises(ServerStartError, match="failing on purpose"):
        with start_server(failing_shim_config, "standalone", tmp_path / "data"):
            pass


def test_no_process_left_after_sigterm(shim_config, tmp_path):
    """A job killed with SIGTERM (as Snakemake does) still stops its server."""
    data_dir = tmp_path / "data"
    ready = tmp_path / "ready"
    script = textwrap.dedent(f"""
        import time
        from costlab.server import start_server
        with start_server({shim_config!r}, "standalone", {str(data_dir)!r}) as s:
            open({str(ready)!r}, "w").write(s.uri)
            time.sleep(120)
    """)
    env = os.environ | {"PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
    job = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert job.poll() is None, "the job died before its server was ready"
        assert time.monotonic() < deadline, "server never became ready"
        time.sleep(0.1)
    assert _shim_processes(data_dir)
    job.send_signal(signal.SIGTERM)
    assert job.wait(60) == 128 + signal.SIGTERM
    assert not _shim_processes(data_dir)
