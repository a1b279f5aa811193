"""The docker backend's container spec as data, and its error when no engine answers."""
from pathlib import Path

import pytest

from costlab.server import ServerUnavailable, resolve_backend
from costlab.server.docker_backend import CONTAINER_PORT, LABEL, container_spec, engine_client
from costlab.server.profiles import GIB, get_profile


def spec(profile="standalone", data_dir=Path("/tmp/costlab-data")):
    return container_spec(
        get_profile(profile), "mongo:8.0", data_dir, uid=1234, gid=567, run_id="abc", owner_pid=42
    )


def test_port_published_on_loopback_only():
    assert spec()["ports"] == {CONTAINER_PORT: ("127.0.0.1", None)}


def test_data_directory_bind_mounted_and_runs_as_caller():
    s = spec(data_dir=Path("/tmp/costlab-data"))
    assert s["volumes"] == {"/tmp/costlab-data": {"bind": "/data/db", "mode": "rw"}}
    assert s["user"] == "1234:567"
    assert s["image"] == "mongo:8.0"


def test_small_cache_profile_limits_memory_and_cache():
    s = spec("standalone-small-cache")
    assert s["mem_limit"] == 1 * GIB and s["memswap_limit"] == 1 * GIB
    assert s["command"][s["command"].index("--wiredTigerCacheSizeGB") + 1] == "0.25"


def test_default_profile_sets_no_limits():
    s = spec("standalone")
    assert "mem_limit" not in s
    assert "--wiredTigerCacheSizeGB" not in s["command"]


def test_replica_set_profile_names_the_set():
    s = spec("replset-1")
    assert s["command"][s["command"].index("--replSet") + 1] == "rs0"


def test_every_container_is_labelled_for_cleanup():
    s = spec()
    assert s["labels"][LABEL] == "1"
    assert s["labels"][f"{LABEL}.owner_pid"] == "42"
    assert s["name"].startswith("costlab-")


def test_no_engine_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(ServerUnavailable, match="no Docker engine answers"):
        engine_client(timeout_s=1)


def test_auto_without_docker_or_mongod_says_what_to_do(monkeypatch, tmp_path):
    from costlab.server import availability

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(availability, "wheel_mongod", lambda: None)
    with pytest.raises(ServerUnavailable) as err:
        resolve_backend({"backend": "auto", "mongod": None})
    message = str(err.value)
    assert "\n" not in message
    assert "server.backend: external" in message and "server.uri" in message and "Docker" in message


def test_loadtest_profile_is_the_articles_machine():
    """Issue #12: 2 CPUs, a 4 GB memory limit and a 1.5 GB WiredTiger cache on the docker backend."""
    from costlab.server.docker_backend import applied_options

    s = spec("standalone-2cpu-4gb")
    assert s["nano_cpus"] == 2_000_000_000
    assert s["mem_limit"] == 4 * GIB and s["memswap_limit"] == 4 * GIB
    assert s["command"][s["command"].index("--wiredTigerCacheSizeGB") + 1] == "1.5"
    applied = applied_options(get_profile("standalone-2cpu-4gb"), "mongo:8.0")
    assert applied["cpus"] == 2.0 and applied["memory_limit_bytes"] == 4 * GIB
    assert "nano_cpus" not in spec("standalone")


def test_loadtest_profile_is_the_default():
    from costlab.config import load_config

    assert load_config()["appversions"]["loadtest"]["profile"] == "standalone-2cpu-4gb"


def test_the_published_scale_load_test_runs_on_the_authors_deployment():
    """Issue #24: the authors' driver writes {w: majority, j: true} on a one-node replica set of the
    article's machine."""
    from costlab.config import ROOT, load_config

    profile = load_config(ROOT / "config" / "full.yaml")["appversions"]["loadtest"]["profile"]
    s = spec(profile)
    assert s["command"][s["command"].index("--replSet") + 1] == "rs0"
    assert s["nano_cpus"] == 2_000_000_000 and s["mem_limit"] == 4 * GIB
    assert s["command"][s["command"].index("--wiredTigerCacheSizeGB") + 1] == "1.5"


def test_host_network_binds_mongod_to_loopback_on_the_given_port():
    """server.network: host (no docker-proxy): nothing is published; mongod itself listens on 127.0.0.1
    only."""
    from costlab.server.docker_backend import applied_options, host_port

    s = container_spec(
        get_profile("replset-1"),
        "mongo:8.0",
        None,
        uid=1234,
        gid=567,
        run_id="abc",
        owner_pid=42,
        network="host",
        host_port=31017,
    )
    assert s["network_mode"] == "host" and "ports" not in s
    assert (
        s["command"][:4] == ["--bind_ip", "127.0.0.1", "--port", "31017"]
        and "--bind_ip_all" not in s["command"]
    )
    assert s["command"][s["command"].index("--replSet") + 1] == "rs0"
    assert applied_options(get_profile("replset-1"), "mongo:8.0", s)["network"].startswith("host")

    class Running:
        status = "running"

        def reload(self):
            pass
    assert host_port(Running(), spec=s) == 31017
    assert "network_mode" not in spec() and spec()["command"][0] == "--bind_ip_all"


def test_an_unknown_network_names_the_allowed_ones():
    with pytest.raises(ValueError, match="server.network is 'overlay'; allowed: bridge, host"):
        container_spec(get_profile("standalone"), "mongo:8.0", None, 1, 1, "abc", 42, network="overlay")
