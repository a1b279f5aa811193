"""The server setup step (results/servers/<profile>.json) and the no-server decision, unit by unit.

No Docker engine runs here: the docker record is checked against a test double of the SDK's
client (what the step asks the engine, what it writes from the answers); the same step against a
real engine is in tests/test_docker_engine.py (make test-docker).
"""
from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from costlab.server import ServerUnavailable, resolve_backend
from costlab.server.availability import available_backend, check_configured, server_identity
from costlab.server.setup import (
    binary_record,
    docker_record,
    not_run_record,
    parse_mongod_version,
    remove_stale_not_run,
    run_setup_step,
    setup_record,
    split_image,
    topology,
    version_container_spec,
    write_not_run,
    write_setup,
)

MONGOD_VERSION_OUTPUT = """db version v7.0.14
Build Info: {
    "version": "7.0.14",
    "gitVersion": "ce59cfc6a3c5e5c067dca0d30697edd68d4f5188",
    "openSSLVersion": "OpenSSL 3.0.2 15 Mar 2022",
    "modules": [],
    "allocator": "tcmalloc",
    "environment": {"distmod": "ubuntu2204", "distarch": "x86_64", "target_arch": "x86_64"}
}
"""
SECRET = "s3cr3t-pw"


@pytest.fixture
def no_server_here(monkeypatch, tmp_path):
    """This process sees no Docker engine and no mongod (none on PATH, no bundled one)."""
    from costlab.server import availability

    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(availability, "wheel_mongod", lambda: None)


def fake_mongod(directory: Path, output: str = MONGOD_VERSION_OUTPUT, code: int = 0) -> str:
    """A TEST AID executable named mongod that prints `output` for --version."""
    path = directory / "mongod"
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}EOF\nexit {code}\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


# ---------------------------------------------------------------- which backend, and "none"

def test_none_and_auto_without_a_server_mean_no_server(no_server_here):
    assert available_backend({"backend": "none"}) is None
    assert available_backend({"backend": "auto", "mongod": None}) is None
    with pytest.raises(ServerUnavailable, match="server.backend is none"):
        resolve_backend({"backend": "none"})


def test_auto_finds_a_mongod_on_path(no_server_here, tmp_path):
    fake_mongod(tmp_path)
    assert available_backend({"backend": "auto", "mongod": None}) == "binary"


def test_an_explicit_backend_is_taken_at_its_word_and_checked(no_server_here):
    assert available_backend({"backend": "docker"}) == "docker"
    with pytest.raises(ServerUnavailable, match="no Docker engine answers"):
        check_configured({"backend": "docker"}, "docker")
    with pytest.raises(ServerUnavailable, match="no mongod is on PATH"):
        check_configured({"backend": "binary", "mongod": None}, "binary")


def test_none_is_a_valid_backend_in_the_schema():
    from costlab.config import load_config

    assert load_config(overrides={"server": {"backend": "none"}})["server"]["backend"] == "none"


# ---------------------------------------------------------------- what the setup step depends on

def test_identity_holds_only_what_decides_the_server():
    docker = server_identity(
        {"image": "mongo:7.0", "uri": "mongodb://x/"}, "docker", "standalone-small-cache"
    )
    from costlab.namespaces import run_id

    assert docker == {"backend": "docker", "image": "mongo:7.0", "run": run_id({"server": {}}),
                      "profile": {"name": "standalone-small-cache", "cache_size_gb": 0.25,
                                  "memory_limit_bytes": 1024 ** 3, "replica_set": None, "cpus": None}}
    on_a = server_identity({"uri": "mongodb://a:1/", "image": "mongo:7.0"}, "external", "standalone")
    # another image does not change an external server; another URI does
    assert on_a == server_identity({"uri": "mongodb://a:1/", "image": "mongo:8.0"}, "external", "standalone")
    assert on_a != server_identity({"uri": "mongodb://b:1/", "image": "mongo:7.0"}, "external", "standalone")
    assert on_a != server_identity({"uri": "mongodb://a:1/", "image": "mongo:7.0"}, "external", "replset-1")


def test_host_networking_is_another_docker_server_and_pull_policy_is_not():
    """server.network: host takes docker-proxy out of the timings: the measurements rerun; when to pull does
    not
    change the image, so it reruns nothing (the record says whether it was pulled)."""
    bridge = server_identity({"image": "mongo:8.0"}, "docker", "standalone")
    assert bridge == server_identity(
        {"image": "mongo:8.0", "network": "bridge", "pull": "always"}, "docker", "standalone"
    )
    host = server_identity({"image": "mongo:8.0", "network": "host"}, "docker", "standalone")
    assert host != bridge and host["network"] == "host"


def test_identity_never_carries_a_password():
    uri = f"mongodb://alice:{SECRET}@db.example:27017/?authSource=admin&tlsCertificateKeyFilePassword={SECRET}"
    identity = server_identity({"uri": uri}, "external", "standalone")
    assert SECRET not in json.dumps(identity)
    assert identity["uri"].startswith("mongodb://alice@db.example:27017/")


def test_binary_identity_is_the_resolved_mongod(no_server_here, tmp_path):
    path = fake_mongod(tmp_path)
    assert server_identity({"mongod": None}, "binary", "standalone")["mongod"] == path


# ---------------------------------------------------------------- mongod --version

def test_parse_mongod_version():
    parsed = parse_mongod_version(MONGOD_VERSION_OUTPUT)
    assert parsed["version"] == "7.0.14"
    assert parsed["git_version"] == "ce59cfc6a3c5e5c067dca0d30697edd68d4f5188"
    with pytest.raises(ValueError, match="no 'db version' line"):
        parse_mongod_version("mongod: command not found\n")


def test_binary_record_runs_mongod_version(tmp_path):
    record = binary_record(fake_mongod(tmp_path))
    assert record == {"mongod": str(tmp_path / "mongod"), "version": "7.0.14",
                      "git_version": "ce59cfc6a3c5e5c067dca0d30697edd68d4f5188", "server_kind": "mongod",
                      "source": f"binary {tmp_path / 'mongod'}"}


def test_binary_record_fails_clearly(tmp_path):
    with pytest.raises(ServerUnavailable, match="exited 3"):
        binary_record(fake_mongod(tmp_path, "broken\n", code=3))
    with pytest.raises(ServerUnavailable, match="no mongod is on PATH"):
        binary_record(None)


# ---------------------------------------------------------------- docker, at its seams

class FakeImage:
    def __init__(self, digests=("mongo@sha256:2222bbbb",)):
        self.id = "sha256:1111aaaa"
        self.attrs = {"RepoDigests": list(digests)}


# What docker's API answers a pull when the registry cannot be reached (issue #22: an air-gapped host).
REGISTRY_UNREACHABLE = (
    "500 Server Error for http+docker://localhost/v1.41/images/create?tag=8.0&fromImage=mongo: "
    "Internal Server Error",
    'Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host',
)


class FakeEngine:
    """Test double of docker.DockerClient: records what the step asks, answers like an engine.

    local: whether the image is on the engine (images.get raises ImageNotFound otherwise, as the SDK does);
    pull_error: the APIError the pull raises; a pull that succeeds puts the image there.
    """

    def __init__(self, events=(), local=True, pull_error=None, digests=("mongo@sha256:2222bbbb",),
                 version_output=None, version_code=0):
        from docker.errors import APIError, ImageNotFound

        self.events, self.local, self.calls, self.closed = list(events), local, [], False
        outer = self

        class Api:
            def pull(self, repository, tag=None, stream=False, decode=False):
                outer.calls.append(("pull", repository, tag, stream, decode))
                if pull_error:
                    raise APIError(pull_error[0], explanation=pull_error[1])

                def events():
                    yield from outer.events
                    outer.local = True
                return events()

        class Images:
            def get(self, name):
                outer.calls.append(("get", name))
                if not outer.local:
                    raise ImageNotFound(f"No such image: {name}")
                return FakeImage(digests)

        class Container:   # the detached version container: wait, logs, remove (with its volumes)
            def wait(self, timeout=None):
                outer.calls.append(("wait",))
                return {"StatusCode": version_code, "Error": None}

            def logs(self, stdout=True, stderr=True):
                return (version_output or MONGOD_VERSION_OUTPUT).encode()

            def remove(self, **kwargs):
                outer.calls.append(("remove", kwargs))

        class Containers:
            def run(self, **spec):
                outer.calls.append(("run", spec))
                return Container()

        self.api, self.images, self.containers = Api(), Images(), Containers()

    def close(self):
        self.closed = True

    def pulls(self) -> int:
        return sum(call[0] == "pull" for call in self.calls)


PULL_EVENTS = [
    {"status": "Pulling from library/mongo", "id": "8.0"},
    {"status": "Pulling fs layer", "id": "abc"},
    *({"status": "Downloading", "id": "abc", "progressDetail": {"current": c, "total": 100_000_000}}
      for c in range(0, 100_000_001, 5_000_000)),
    {"status": "Download complete", "id": "abc"},
    {"status": "Extracting", "id": "abc", "progressDetail": {"current": 1, "total": 2}},
    {"status": "Pull complete", "id": "abc"},
    {"status": "Digest: sha256:2222bbbb"},
    {"status": "Status: Downloaded newer image for mongo:8.0"},
]


def test_docker_record_pulls_a_missing_image_with_progress_and_reads_the_version():
    engine, lines = FakeEngine(PULL_EVENTS, local=False), []
    record = docker_record(engine, "mongo:8.0", lines.append)
    assert record == {
        "image": "mongo:8.0",
        "image_id": "sha256:1111aaaa",
        "repo_digests": ["mongo@sha256:2222bbbb"],
        "digest_note": None,
        "pulled": True,
        "pull_policy": "missing",
        "version": "7.0.14",
        "git_version": "ce59cfc6a3c5e5c067dca0d30697edd68d4f5188",
        "server_kind": "mongod",
    }
    assert ("pull", "mongo", "8.0", True, True) in engine.calls
    assert engine.calls[-3:] == [("run", version_container_spec("mongo:8.0")), ("wait",),
                                 ("remove", {"force": True, "v": True})]   # its anonymous volumes too
    downloads = [line for line in lines if "% of 100.0 MB" in line]
    assert [line.split("layer abc ")[1].split("%")[0] for line in downloads] == ["0", "25", "50", "75", "100"]
    assert any(line.endswith("layer abc pull complete") for line in lines)
    assert any("downloaded newer image" in line for line in lines)


def test_missing_policy_uses_a_local_image_as_it_is_and_never_asks_the_registry():
    """Issue #22 defect 1: the step always pulled, so a local image on a host without the registry crashed
    it."""
    engine = FakeEngine(local=True, pull_error=REGISTRY_UNREACHABLE, digests=())
    record = docker_record(engine, "mongo:8.0", lambda line: None)   # server.pull defaults to missing
    assert engine.pulls() == 0
    assert record["pulled"] is False and record["image_id"] == "sha256:1111aaaa"
    assert record["repo_digests"] == [] and "no registry digest" in record["digest_note"]


def test_missing_image_and_no_registry_is_one_line_naming_the_image_and_the_fix():
    engine = FakeEngine(local=False, pull_error=REGISTRY_UNREACHABLE)
    with pytest.raises(ServerUnavailable) as err:
        docker_record(engine, "mongo:8.0", lambda line: None, pull="missing")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("image mongo:8.0 is not on this Docker engine and pulling it failed")
    assert "no such host" in message and "docker load -i" in message and "server.image" in message


def test_always_falls_back_to_the_local_image_in_one_line_when_the_registry_cannot_be_reached():
    engine, lines = FakeEngine(local=True, pull_error=REGISTRY_UNREACHABLE), []
    record = docker_record(engine, "mongo:8.0", lines.append, pull="always")
    assert engine.pulls() == 1 and record["pulled"] is False and record["pull_policy"] == "always"
    fallback = [line for line in lines if "failed" in line]
    assert len(fallback) == 1
    assert "no such host" in fallback[0] and "using the local image sha256:1111aaaa" in fallback[0]


def test_always_pulls_even_when_the_image_is_local():
    engine = FakeEngine(PULL_EVENTS, local=True)
    record = docker_record(engine, "mongo:8.0", lambda line: None, pull="always")
    assert engine.pulls() == 1 and record["pulled"] is True


def test_never_uses_only_a_local_image_and_says_how_to_get_a_missing_one():
    engine = FakeEngine(PULL_EVENTS, local=False)
    with pytest.raises(ServerUnavailable) as err:
        docker_record(engine, "registry.lab:5000/mongo:8.0", lambda line: None, pull="never")
    message = str(err.value)
    assert engine.pulls() == 0 and "\n" not in message
    assert (
        "image registry.lab:5000/mongo:8.0 is not on this Docker engine and server.pull is never" in message
    )
    assert "docker pull registry.lab:5000/mongo:8.0" in message and "server.pull: missing" in message
    assert (
        docker_record(FakeEngine(local=True), "mongo:8.0", lambda line: None, pull="never")["pulled"] is False
    )


def test_an_unknown_pull_policy_names_the_allowed_ones():
    with pytest.raises(
        ServerUnavailable, match="server.pull is 'sometimes'; allowed: missing, always, never"
    ):
        docker_record(FakeEngine(), "mongo:8.0", lambda line: None, pull="sometimes")


def test_the_setup_step_without_a_registry_fails_in_one_line_not_a_traceback(monkeypatch, tmp_path):
    """The issue's first crash, end to end through the rule's body: a line in the log, exit 1, no record."""
    from costlab.server import docker_backend

    engine = FakeEngine(local=False, pull_error=REGISTRY_UNREACHABLE)
    monkeypatch.setattr(docker_backend, "engine_client", lambda *args, **kwargs: engine)
    out, log = tmp_path / "standalone.json", tmp_path / "setup.log"
    echoed = []
    code = run_setup_step(out, {"image": "mongo:8.0"}, "docker", "standalone", log, echoed.append)
    assert code == 1 and not out.exists() and engine.closed
    logged = log.read_text().strip().splitlines()
    assert len(logged) == 2 and logged[0].startswith("pull mongo:8.0: asking the registry")
    assert logged[1].startswith("image mongo:8.0 is not on this Docker engine and pulling it failed")
    assert "Traceback" not in log.read_text()


def test_a_stand_in_image_is_recorded_as_the_stand_in():
    engine = FakeEngine(digests=(), version_output="db version v0.7.0b3-standin\nstand-in: SecantusDB ...\n")
    record = docker_record(engine, "costlab-test-standin/mongod:x", lambda line: None)
    assert record["server_kind"] == "stand-in" and record["version"] == "0.7.0b3-standin"


def test_an_image_whose_mongod_version_fails_names_the_exit_code_and_what_it_said():
    engine = FakeEngine(digests=(), version_output="exec: \"mongod\": executable file not found in $PATH\n",
                        version_code=127)
    with pytest.raises(ServerUnavailable) as err:
        docker_record(engine, "busybox:1", lambda line: None)
    assert str(err.value).startswith(
        '`mongod --version` in image busybox:1 (sha256:1111aaaa) exited 127: exec: "mongod": executable file '
        "not found in $PATH; is it a MongoDB image?")
    assert engine.calls[-1] == ("remove", {"force": True, "v": True})


def test_version_container_is_throwaway_and_labelled():
    spec = version_container_spec("mongo:7.0")
    assert spec["command"] == ["mongod", "--version"] and spec["detach"] is True and "remove" not in spec
    assert spec["network_disabled"] is True and spec["labels"]["costlab"] == "1"


def test_a_version_container_of_a_running_setup_step_is_no_leftover_for_another_job(monkeypatch):
    """Another job's start sweeps costlab containers whose owner is gone; the setup step's is not one of
    them."""
    import os
    from types import SimpleNamespace

    from costlab.server import docker_backend

    removed = []

    def container(name, labels):
        return SimpleNamespace(name=name, labels=labels, remove=lambda **kw: removed.append(name))

    version = container("version", version_container_spec("mongo:7.0")["labels"])
    unowned = container("unowned", {"costlab": "1"})
    engine = SimpleNamespace(containers=SimpleNamespace(list=lambda **kw: [version, unowned]))
    setup_pid = os.getpid()
    monkeypatch.setattr(docker_backend.os, "getpid", lambda: setup_pid + 1)   # the sweep runs in another job
    assert docker_backend.remove_leftovers(engine) == ["unowned"] and removed == ["unowned"]


def test_pull_error_is_an_error():
    with pytest.raises(
        ServerUnavailable,
        match="image mongo:9.9 is not on this Docker engine and pulling it failed "
        r"\(docker pull mongo:9.9 failed: manifest unknown\)",
    ):
        docker_record(
            FakeEngine([{"error": "manifest unknown"}], local=False), "mongo:9.9", lambda line: None
        )


@pytest.mark.parametrize("image, expected", [
    ("mongo:8.0", ("mongo", "8.0")), ("mongo", ("mongo", "latest")),
    ("registry.local:5000/mongo", ("registry.local:5000/mongo", "latest")),
    ("registry.local:5000/mongo:7.0", ("registry.local:5000/mongo", "7.0")),
    ("mongo@sha256:2222bbbb", ("mongo@sha256:2222bbbb", None)),
])
def test_split_image(image, expected):
    assert split_image(image) == expected


def test_setup_record_for_docker_names_profile_and_identity():
    record = setup_record({"image": "mongo:8.0"}, "docker", "replset-1", lambda line: None,
                          docker_engine=FakeEngine(PULL_EVENTS, local=False))
    assert record["profile"] == "replset-1" and record["backend"] == "docker"
    assert record["identity"]["profile"]["replica_set"] == "rs0"
    assert record["server"]["repo_digests"] == ["mongo@sha256:2222bbbb"]


# ---------------------------------------------------------------- external (the stand-in)

def test_topology_from_hello():
    assert topology({"msg": "isdbgrid"}) == "sharded"
    assert topology({"setName": "rs0"}) == "replica set rs0"
    assert topology({"isWritablePrimary": True}) == "standalone"


def test_external_record_from_the_test_server(server_uri, real_mongod, tmp_path):
    path = tmp_path / "servers" / "standalone.json"
    logged = []
    record = write_setup(path, {"backend": "external", "uri": server_uri, "startup_timeout_s": 10},
                         "external", "standalone", logged.append)
    # the console line names the stand-in (it answers as "8.2.11", which alone reads as MongoDB 8.2.11)
    assert ("stand-in: not a MongoDB measurement" in logged[-1]) == (
        record["server"]["server_kind"] == "stand-in"
    )
    assert json.loads(path.read_text()) == record
    server = record["server"]
    assert server["version"] and server["storage_engine"]
    assert server["topology"] in ("standalone", "sharded") or server["topology"].startswith("replica set ")
    assert server["server_kind"] == ("mongod" if real_mongod else "stand-in")


def test_external_that_does_not_answer_is_an_error_without_the_password(tmp_path):
    config = {"uri": f"mongodb://alice:{SECRET}@127.0.0.1:1/", "startup_timeout_s": 0.5}
    path = tmp_path / "standalone.json"
    with pytest.raises(ServerUnavailable) as err:
        write_setup(path, config, "external", "standalone", lambda line: None)
    assert "did not answer" in str(err.value) and SECRET not in str(err.value)
    assert "mongodb://alice@127.0.0.1:1/" in str(err.value)
    assert not path.exists()  # nothing half-written


def test_setup_step_without_a_server_says_what_to_do_in_one_line(tmp_path):
    """`snakemake <a mongod figure>` with no server: one line in the job log and on the console, no
    traceback."""
    path, log_path, echoed = tmp_path / "standalone.json", tmp_path / "setup.log", []
    assert run_setup_step(path, {}, None, "standalone", log_path, echoed.append) == 1
    assert not path.exists()
    logged = log_path.read_text().strip()
    # the log used to be empty and the console a traceback; Snakemake shows the log under the job's error
    assert echoed == [] and "\n" not in logged
    assert str(path) in logged and "standalone" in logged and "no MongoDB server" in logged
    assert "Docker" in logged and "server.uri" in logged and "make all" in logged


def test_setup_step_with_an_external_server_that_does_not_answer(tmp_path):
    config = {"uri": f"mongodb://alice:{SECRET}@127.0.0.1:1/", "startup_timeout_s": 0.5}
    path, log_path = tmp_path / "standalone.json", tmp_path / "setup.log"
    assert run_setup_step(path, config, "external", "standalone", log_path, lambda line: None) == 1
    logged = log_path.read_text()
    assert "did not answer" in logged and "mongodb://alice@127.0.0.1:1/" in logged and SECRET not in logged
    assert not path.exists()


# ---------------------------------------------------------------- not_run.json

def test_not_run_record_is_the_contract(tmp_path):
    path = tmp_path / "docsize" / "not_run.json"
    write_not_run(path)
    record = json.loads(path.read_text())
    assert record == not_run_record()
    assert set(record) == {"part", "reason", "fix"}
    assert record["part"] == "mongod" and record["reason"] == "no MongoDB server"
    assert "\n" not in record["fix"] and "Docker" in record["fix"] and "server.uri" in record["fix"]


def test_stale_not_run_removed_only_for_measured_studies(tmp_path):
    for study in ("docsize", "uniqueidx"):
        write_not_run(tmp_path / study / "not_run.json")
    removed = remove_stale_not_run(tmp_path, ["docsize", "flatnested"])
    assert removed == [tmp_path / "docsize" / "not_run.json"]
    assert (tmp_path / "uniqueidx" / "not_run.json").exists()


def test_rules_ask_for_the_profile_the_code_measures_on():
    """The server input of a measuring rule names the profile its costlab code starts."""
    from costlab.config import ROOT
    from costlab.flatnested import run as fn_run
    from costlab.uniqueidx import check as ui_check

    flatnested = (ROOT / "rules" / "flatnested.smk").read_text()
    assert flatnested.count(f'server=server_json("{fn_run.PROFILE}")') == 2
    uniqueidx = (ROOT / "rules" / "uniqueidx.smk").read_text()
    assert f'server=server_json("{ui_check.PROFILE}")' in uniqueidx
    docsize_load = (ROOT / "costlab" / "docsize" / "load.py").read_text()
    assert re.search(r'measuring_job\(\s*run,\s*"standalone"', docsize_load)
    assert 'server=server_json("standalone")' in (ROOT / "rules" / "docsize.smk").read_text()


def test_another_namespace_is_another_server_identity_so_measurements_rerun():
    base = {"uri": "mongodb://a:1/"}
    plain = server_identity(base, "external", "standalone")
    ours = server_identity(base | {"namespace": "lab_a"}, "external", "standalone")
    theirs = server_identity(base | {"namespace": "lab_b"}, "external", "standalone")
    assert ours["run"] == "lab_a" and len({plain["run"], ours["run"], theirs["run"]}) == 3
    assert server_identity(base | {"namespace": "lab_a"}, "docker", "standalone")["run"] == "lab_a"
