"""Test fixtures. The test server is a real mongod: the bundled MongoDB 6.0.5 (make test installs it), or the
deployment COSTLAB_TEST_URI names. COSTLAB_TEST_SERVER=standin runs the SecantusDB stand-in instead (where
no mongod can be had); tests that need what mongod cannot do (hang, slow down) start the stand-in themselves
and say why.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from workflow import (
    NO_SERVER,
    TEST_SERVER_ENV,
    external,
    mongod_for_tests,
    mongod_server,
    run_workflow,
    standin,
    workflow,
)
from workflow import dry_runs as plan

ROOT = Path(__file__).resolve().parent.parent
SHIMS = Path(__file__).resolve().parent / "shims"


@pytest.fixture
def auth_server(request, tmp_path):
    """A mongod of its own with authorization on and one user, alice (password: the test module's SECRET),
    created through the localhost exception (mongod lets the first user be created from 127.0.0.1);
    yields its host:port. Skips where no mongod can be had."""
    import portpicker
    from pymongo import MongoClient

    binary = mongod_for_tests()
    if binary is None:
        pytest.skip("no mongod: make test installs the bundled one (linux x86_64); MONGOD_WHEEL=no skips it")
    port = portpicker.pick_unused_port()
    data_dir = tmp_path / "auth-db"
    data_dir.mkdir()
    server = subprocess.Popen([binary, "--auth", "--port", str(port), "--bind_ip", "127.0.0.1",
                               "--dbpath", str(data_dir), "--logpath", str(data_dir / "mongod.log")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with MongoClient("127.0.0.1", port, serverSelectionTimeoutMS=60_000) as client:
            client.admin.command("createUser", "alice", pwd=request.module.SECRET, roles=["root"])
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=60)


@pytest.fixture(scope="session")
def server_uri():
    """URI of a server for the whole test session: COSTLAB_TEST_URI, else the bundled mongod (one per xdist
    worker), else (COSTLAB_TEST_SERVER=standin, or no mongod here) the stand-in in-process."""
    uri = os.environ.get("COSTLAB_TEST_URI")
    if uri:
        yield uri
        return
    if os.environ.get(TEST_SERVER_ENV, "mongod") != "standin" and mongod_for_tests():
        with mongod_server() as uri:
            yield uri
        return
    with standin() as uri:
        yield uri


@pytest.fixture(scope="session")
def real_mongod(server_uri) -> bool:
    """True when the test server is a real mongod (assert timings/covered plans only then)."""
    from pymongo import MongoClient

    with MongoClient(server_uri) as client:
        return client.admin.command("serverStatus").get("process") != "secantus"


@pytest.fixture
def mongo_client(server_uri):
    from pymongo import MongoClient

    client = MongoClient(server_uri)
    yield client
    client.close()


@pytest.fixture
def test_db(mongo_client, request):
    """A fresh database named after the test, dropped afterwards."""
    name = "t_" + "".join(ch if ch.isalnum() else "_" for ch in request.node.name)[:50]
    mongo_client.drop_database(name)
    yield mongo_client[name]
    mongo_client.drop_database(name)


@pytest.fixture
def external_server_config(server_uri) -> dict:
    """A `server` config section pointing at the test server through the external backend."""
    return {"backend": "external", "uri": server_uri, "image": "mongo:8.0", "mongod": None,
            "startup_timeout_s": 10}


@pytest.fixture
def no_extensions(tmp_path, monkeypatch):
    """The engine lab as on a machine without libsnappy-dev / libzstd-dev: no compressor extensions."""
    from costlab.engine.wt import forget_compressors

    monkeypatch.setenv("COSTLAB_WT_EXTENSIONS", str(tmp_path / "no-extensions"))
    forget_compressors()
    yield
    monkeypatch.delenv("COSTLAB_WT_EXTENSIONS")
    forget_compressors()


@pytest.fixture
def mongod_binary() -> str:
    """The real mongod the binary backend's tests start (the bundled 6.0.5); skips where there is none."""
    binary = mongod_for_tests()
    if binary is None:
        pytest.skip("no mongod: make test installs the bundled one (linux x86_64); MONGOD_WHEEL=no skips it")
    return binary


@pytest.fixture
def mongod_shim() -> str:
    """Path of tests/shims/mongod: a test aid that runs the stand-in under mongod's options."""
    return str(SHIMS / "mongod")


# The per-version server tests (each loads a version into the stand-in: 5-20 s a version on 2 cores) run in
# `make test` on one version of each kind the stand-in can tell apart: a key-string daily document with long
# status names, a pushed quarter, daily arrays with their totals under a $reduce report, and dynamic month
# items; the smoke tree checks appV4, appV6R3 and appV6R4 the same way. `make test-versions` runs all 14
# (COSTLAB_TEST_ALL_VERSIONS=1); the server-free tests always take every version.
VERSIONS_IN_MAKE_TEST = ("appV2", "appV5R1", "appV5R4", "appV6R0")
ALL_VERSIONS_OPT_IN = "COSTLAB_TEST_ALL_VERSIONS"


def each_version(names) -> list:
    """pytest params, one per version name; those beyond VERSIONS_IN_MAKE_TEST marked `all_versions`."""
    return [pytest.param(name, marks=() if name in VERSIONS_IN_MAKE_TEST else pytest.mark.all_versions)
            for name in names]


def pytest_runtest_setup(item):
    if item.get_closest_marker("all_versions") and not os.environ.get(ALL_VERSIONS_OPT_IN):
        pytest.skip(f"opt-in: make test-versions ({ALL_VERSIONS_OPT_IN}=1; make test takes "
                    f"{', '.join(VERSIONS_IN_MAKE_TEST)})")


def run_snakemake(
    workdir: Path,
    targets: list[str],
    server_uri: str,
    configfiles: tuple[str, ...] = ("config/smoke.yaml",),
    extra_args: tuple[str, ...] = (),
):
    """Run the workflow from the repo into a scratch results dir against the test server.

    Uses --directory so results land in workdir, not the repo; returns CompletedProcess.
    """
    return run_workflow(workdir, external(server_uri), targets, configfiles=configfiles, after=extra_args,
                        hide_local_servers=False)


@dataclass
class SmokeRun:
    """The session's smoke tree (config/smoke.yaml), built as a new user builds theirs: `all` on a
    machine with no server, then `all` again once a server is configured (the test server)."""
    workdir: Path
    result: subprocess.CompletedProcess  # the second `all`, against the test server
    no_server: (
        subprocess.CompletedProcess | None
    )  # the first `all`; None when this machine has a mongod on PATH
    no_server_results: Path | None                 # a copy of results/ as the first `all` left it
    dry_runs: dict[str, subprocess.CompletedProcess]  # plans taken between the steps (test_servers_workflow)

    def results(self, study: str = "") -> Path:
        return self.workdir / "results" / study if study else self.workdir / "results"


@pytest.fixture(scope="session")
def smoke_all(tmp_path_factory, server_uri) -> SmokeRun:
    """The whole smoke DAG (every study, every figure, the report), built ONCE per test session.

    For tests that only read what a smoke run built: use this rather than starting your own
    run (each costs minutes on 2 cores). Do not write into it; a test that needs another config,
    a failure or a rerun starts its own with `snakemake_run`, or works on a copy.
    """
    workdir = tmp_path_factory.mktemp("smoke_all")
    dry_runs: dict[str, subprocess.CompletedProcess] = {}
    no_server = no_server_results = None
    if not shutil.which("mongod", path="/usr/bin:/bin"):  # else `auto` would find that server
        dry_runs |= plan(workdir, {"none_fresh": ("{backend: none}", ("all",)),
                                   "no_server_fresh": (NO_SERVER, ("all",))})
        no_server = workflow(workdir, NO_SERVER, "all")
        assert no_server.returncode == 0, no_server.stderr[-4000:]
        no_server_results = tmp_path_factory.mktemp("smoke_no_server") / "results"
        shutil.copytree(workdir / "results", no_server_results)
        dry_runs |= plan(workdir, {"no_server_again": (NO_SERVER, ("all",)),
                                   "server_appears": (external(server_uri), ("all",))})
    result = workflow(workdir, external(server_uri), "all")
    assert result.returncode == 0, result.stderr[-4000:]
    return SmokeRun(workdir, result, no_server, no_server_results, dry_runs)


SMOKE_PLAN_SERVER = "{backend: external, uri: 'mongodb://127.0.0.1:1/'}"   # a dry run connects to nothing


@pytest.fixture(scope="session")
def smoke_plan(tmp_path_factory) -> subprocess.CompletedProcess:
    """`snakemake -n all` on config/smoke.yaml with a configured server, in an empty scratch tree: every job
    of the smoke DAG with its inputs and outputs. Planned once per session for the tests that read that plan
    (each parse of the workflow costs several CPU seconds): the first xdist worker to ask makes it under a
    lock in the workers' shared temporary directory, the others read what it printed."""
    import fcntl
    import json

    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    saved = shared / "smoke_plan.json"
    with open(shared / "smoke_plan.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not saved.exists():
            proc = run_workflow(tmp_path_factory.mktemp("smoke_plan"), SMOKE_PLAN_SERVER, ("-n", "all"))
            saved.write_text(json.dumps({"args": proc.args, "returncode": proc.returncode,
                                         "stdout": proc.stdout, "stderr": proc.stderr}))
        fields = json.loads(saved.read_text())
    return subprocess.CompletedProcess(**fields)


@pytest.fixture
def snakemake_run(tmp_path, server_uri):
    """Call as snakemake_run([targets]) -> CompletedProcess; results go under tmp_path."""
    def run(targets, configfiles=("config/smoke.yaml",), extra_args=()):
        return run_snakemake(tmp_path, list(targets), server_uri, tuple(configfiles), tuple(extra_args))
    run.workdir = tmp_path
    return run


# `make test` runs on pytest-xdist workers (`--dist load`), which hand each worker a first chunk of
# consecutive tests (a quarter of its share), then one test at a time as workers free up. The order
# below makes that a good schedule:
# 1. the tests that read the session's smoke tree, so they all land on one worker, which builds the
#    tree (minutes) while the others run the rest. Were they ever split, a second worker would
#    build its own tree: slower, never wrong (each tree is built against its worker's server).
#    (xdist's `loadgroup` cannot do this: with pytest 9 its group suffix never reaches the node id.)
# 2. light tests to fill the rest of that worker's first chunk;
# 3. the modules that start servers or workflows, early, so none is left for the end;
# 4. the other light tests, which even out the end.
# Modules stay whole within each part (module-scoped fixtures are set up once per worker).
HEAVY_FIXTURES = {"server_uri", "snakemake_run", "mongod_shim"}


def uses_smoke_tree(item: pytest.Item) -> bool:
    return "smoke_all" in getattr(item, "fixturenames", ())


def pytest_collection_modifyitems(config, items):
    smoke = [item for item in items if uses_smoke_tree(item)]
    for item in smoke:   # make test-smoke runs these (-m smoke); make test leaves them out
        item.add_marker(pytest.mark.smoke)
    rest = [item for item in items if not uses_smoke_tree(item)]
    heavy_modules = {item.module.__name__ for item in rest
                     if HEAVY_FIXTURES & set(item.fixturenames) or item.get_closest_marker("workflow")}
    heavy = [item for item in rest if item.module.__name__ in heavy_modules]
    light = [item for item in rest if item.module.__name__ not in heavy_modules]
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    first_chunk = len(items) // workers // 4     # xdist's first chunk per worker (scheduler/load.py)
    fill = max(0, first_chunk - len(smoke))
    items[:] = smoke + light[:fill] + heavy + light[fill:]
