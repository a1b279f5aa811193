"""The docker backend against a Docker engine's real response shapes (tests/fake_docker.py: the docker
SDK 7.2.0's own models over a fake transport; shapes and sources cited there).

A "running" fake container publishes the port of the test server (the stand-in), so the backend's
readiness, checkpoint and stop run against a real wire-protocol server.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fake_docker import (
    DOCKER_ROOTFUL,
    DOCKER_ROOTLESS,
    DOCKER_SELINUX,
    DOCKER_USERNS_REMAP,
    PODMAN_COMPAT_ROOTLESS_SELINUX,
    PODMAN_LIBPOD,
    Behaviour,
    FakeDockerClient,
)
from mongod_logs import DBPATH_IN_USE, DBPATH_IN_USE_ERROR, PERMISSION_DENIED
from pymongo import MongoClient, monitoring

from costlab.server import ServerStartError, ServerUnavailable, docker_backend, start_server
from costlab.server.docker_backend import EngineFacts, container_spec, engine_facts
from costlab.server.profiles import get_profile
from costlab.server.shutdown import stop_grace_seconds

DOCKER_CONFIG = {"backend": "docker", "image": "mongo:8.0", "startup_timeout_s": 20}


@pytest.fixture
def engine(monkeypatch):
    """Install a fake engine: engine(info, behaviour) -> FakeDockerClient used by the next start_server."""
    made = []

    def install(info=DOCKER_ROOTFUL, behaviour=None, timeline=None):
        fake = FakeDockerClient(info, behaviour or Behaviour(), timeline)
        made.append(fake)
        monkeypatch.setattr(docker_backend, "engine_client", lambda timeout_s=5: fake)
        return fake

    return install


def _port(uri: str) -> int:
    return urlsplit(uri).port


def _created(fake: FakeDockerClient) -> dict:
    assert len(fake.api.created) == 1
    return fake.api.created[0].create_kwargs


# --- point 2 and 3: a container that dies at start-up
# --------------------------------------------------------


def test_container_that_exits_at_start_raises_its_cause_before_cleanup(engine, tmp_path):
    fake = engine(behaviour=Behaviour(host_port=None, exit_code=100, logs=DBPATH_IN_USE))
    with pytest.raises(ServerStartError) as err:
        with start_server(DOCKER_CONFIG, "standalone", tmp_path / "data"):
            pass
    message = str(err.value)
    assert "exit code 100" in message and "status exited" in message
    assert f"cause: DBException in initAndListen, terminating: {DBPATH_IN_USE_ERROR}" in message
    # the logs were read while the container existed, and it was removed afterwards
    calls = [call for _, call in fake.timeline]
    assert calls.index("logs") < calls.index("remove")
    assert all(c.removed for c in fake.api.created)
    assert fake.closed


def test_out_of_memory_and_permission_denied_say_what_to_change(engine, tmp_path):
    engine(behaviour=Behaviour(host_port=None, exit_code=137, oom_killed=True, logs="Killed\n"))
    with pytest.raises(ServerStartError, match="OOMKilled.*|memory limit"):
        with start_server(DOCKER_CONFIG, "standalone-small-cache", tmp_path / "a"):
            pass
    engine(info=DOCKER_SELINUX, behaviour=Behaviour(host_port=None, exit_code=14, logs=PERMISSION_DENIED))
    with pytest.raises(ServerStartError) as err:
        with start_server(DOCKER_CONFIG, "standalone", tmp_path / "b"):
            pass
    message = str(err.value)
    assert "Permission denied" in message.splitlines()[1]        # the cause line
    assert "what to change:" in message and ":z" in message and "SELinux" in message


def test_engine_refusing_to_start_the_container_is_a_start_error_and_leaves_nothing(engine, tmp_path):
    fake = engine(
        behaviour=Behaviour(
            start_error="error while creating mount source path '/srv/x': mkdir /srv/x: permission denied"
        )
    )
    with pytest.raises(
        ServerStartError,
        match=r"could not start the container costlab-standalone-\w+: error while creating mount source",
    ):
        with start_server(DOCKER_CONFIG, "standalone", tmp_path / "data"):
            pass
    assert all(c.removed for c in fake.api.created)


# --- point 4: rootless, userns-remap, SELinux, Podman
# --------------------------------------------------------


@pytest.mark.parametrize("info, expected", [
    (DOCKER_ROOTFUL, EngineFacts("docker", False, False, False)),
    (DOCKER_ROOTLESS, EngineFacts("docker", True, False, False)),
    (DOCKER_USERNS_REMAP, EngineFacts("docker", False, True, False)),
    (DOCKER_SELINUX, EngineFacts("docker", False, False, True)),
    (PODMAN_COMPAT_ROOTLESS_SELINUX, EngineFacts("podman", True, False, True)),
    (PODMAN_LIBPOD, EngineFacts("podman", True, False, True)),
    ({"SecurityOptions": ["apparmor", "seccomp"]}, EngineFacts("docker", False, False, False)),   # API < 1.26
])
def test_engine_facts_from_info(info, expected):
    facts = engine_facts(info)
    assert (facts.product, facts.rootless, facts.userns_remap, facts.selinux) == \
        (expected.product, expected.rootless, expected.userns_remap, expected.selinux)


def _host_config_of(info: dict, uid: int, tmp_path) -> tuple[dict, dict]:
    """The create_container arguments the SDK sends for this engine (real SDK translation)."""
    fake = FakeDockerClient(info, Behaviour())
    spec = container_spec(get_profile("standalone"), "mongo:8.0", tmp_path, uid, 1000, "r1", 1,
                          engine=engine_facts(info))
    fake.containers.create(**spec)
    kwargs = fake.api.created[0].create_kwargs
    return kwargs, kwargs["host_config"]


def test_rootful_docker_runs_mongod_as_the_caller_through_the_image_entrypoint(tmp_path):
    kwargs, host = _host_config_of(DOCKER_ROOTFUL, 1000, tmp_path)
    assert kwargs["user"] == "1000:1000" and kwargs.get("entrypoint") is None
    assert host["Binds"] == [f"{tmp_path.resolve()}:/data/db:rw"]
    assert host["PortBindings"] == {"27017/tcp": [{"HostIp": "127.0.0.1", "HostPort": ""}]}
    assert "UsernsMode" not in host


def test_rootless_engine_runs_mongod_as_container_root_without_the_chowning_entrypoint(tmp_path):
    # docker-library/mongo docker-entrypoint.sh: as uid 0 it runs
    # `find /data/configdb /data/db \! -user mongodb -exec chown mongodb '{}' +` then `exec gosu mongodb`.
    for info in (DOCKER_ROOTLESS, PODMAN_COMPAT_ROOTLESS_SELINUX):
        kwargs, host = _host_config_of(info, 1000, tmp_path)
        assert kwargs["user"] == "0:0"
        assert kwargs["entrypoint"] == ["mongod"] and kwargs["command"][0] == "--bind_ip_all"


def test_root_on_a_rootful_engine_bypasses_the_chown_to_999(tmp_path):
    kwargs, _ = _host_config_of(DOCKER_ROOTFUL, 0, tmp_path)
    assert kwargs["user"] == "0:0" and kwargs["entrypoint"] == ["mongod"]


def test_userns_remap_and_selinux_are_handled_in_the_host_config(tmp_path):
    _, host = _host_config_of(DOCKER_USERNS_REMAP, 1000, tmp_path)
    assert host["UsernsMode"] == "host"
    _, host = _host_config_of(DOCKER_SELINUX, 1000, tmp_path)
    assert host["Binds"] == [f"{tmp_path.resolve()}:/data/db:rw,z"]
    _, host = _host_config_of(PODMAN_COMPAT_ROOTLESS_SELINUX, 1000, tmp_path)
    assert host["Binds"] == [f"{tmp_path.resolve()}:/data/db:rw,z"] and "UsernsMode" not in host


def _in_child_as(uid: int, fn) -> str:
    """Run fn() in a forked child with uid/gid `uid` (root only); the error message it raised, or ''."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:   # child: modules are already imported, only the data directory is touched
        os.close(read_end)
        message = ""
        try:
            os.setgid(uid)
            os.setuid(uid)
            fn()
        except BaseException as err:   # noqa: BLE001 - report anything to the parent
            message = f"{type(err).__name__}: {err}"
        os.write(write_end, message.encode())
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as fh:
        message = fh.read()
    os.waitpid(pid, 0)
    return message


def test_a_data_directory_you_cannot_use_stops_before_any_container(engine, tmp_path):
    """A directory left by an earlier run as root through the image's entrypoint: files owned by uid 999."""
    if os.geteuid() == 0:
        # Root may read anything: check as an ordinary user (1000) a directory whose file belongs to 999,
        # in a directory uid 1000 can reach (pytest's tmp_path is private to root).
        top = Path(tempfile.mkdtemp(prefix="costlab-test-"))
        try:
            top.chmod(0o755)
            data = top / "data"
            data.mkdir(mode=0o777)
            data.chmod(0o777)
            (data / "WiredTiger.wt").write_bytes(b"x")
            (data / "WiredTiger.wt").chmod(0o600)
            os.chown(data / "WiredTiger.wt", 999, 999)
            message = _in_child_as(1000, lambda: docker_backend.check_data_dir_access(data))
        finally:
            shutil.rmtree(top)
        assert message.startswith("ServerUnavailable:"), message
        assert "WiredTiger.wt (owner uid 999)" in message and "chown -R 1000:1000" in message
        return
    data = tmp_path / "data"
    data.mkdir()
    wt = data / "WiredTiger.wt"
    wt.write_bytes(b"x")
    wt.chmod(0)    # what a file owned by uid 999 is to this user
    fake = engine()
    try:
        with pytest.raises(ServerUnavailable, match="cannot read and write: .*WiredTiger.wt.*chown -R"):
            with start_server(DOCKER_CONFIG, "standalone", data):
                pass
    finally:
        wt.chmod(0o600)
    assert fake.api.created == []


# --- point 5 (and 6): checkpoint, grace period, client closed
# -------------------------------------------------


class _Commands(monitoring.CommandListener):
    def __init__(self, timeline):
        self.timeline = timeline

    def started(self, event):
        self.timeline.append(("server", event.command_name))

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


def test_checkpoint_then_stop_with_a_grace_that_fits_the_data(engine, tmp_path, server_uri, monkeypatch):
    timeline: list = []
    fake = engine(behaviour=Behaviour(host_port=_port(server_uri)), timeline=timeline)
    listener = _Commands(timeline)
    monkeypatch.setattr(docker_backend, "MongoClient",
                        lambda *a, **kw: MongoClient(*a, event_listeners=[listener], **kw))
    data = tmp_path / "data"
    data.mkdir()
    with open(data / "collection-7-1.wt", "wb") as fh:   # 5 GiB as sizes go, sparse on disk
        fh.truncate(5 * 1024 ** 3)
    with start_server(DOCKER_CONFIG, "standalone", data) as server:
        assert server.client.admin.command("ping")["ok"] == 1
        expected_user = "0:0" if os.getuid() == 0 else f"{os.getuid()}:{os.getgid()}"
        assert server.applied["container_user"] == expected_user
    calls = [call for _, call in timeline]
    assert calls.index("fsync") < calls.index("stop")
    expected = stop_grace_seconds(5 * 1024 ** 3)
    assert expected == 30 + 103 and fake.api.created[0].stop_timeouts == [expected]
    assert fake.closed                                       # the engine client is closed after the job


def test_stop_grace_grows_with_data_and_is_bounded():
    assert stop_grace_seconds(0) == 30
    assert stop_grace_seconds(50 * 1024 ** 2) == 31
    assert stop_grace_seconds(10 * 1024 ** 4) == 900
    with pytest.raises(ValueError, match="-1"):
        stop_grace_seconds(-1)
