"""Test fixtures. A real mongod when COSTLAB_TEST_URI is set, otherwise the SecantusDB stand-in.

The stand-in is good for results, shapes, indexes, validators and explain shapes; never for
timings or storage sizes (see docs/development.md). Tests assert accordingly.
"""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIMS = Path(__file__).resolve().parent / "shims"


@pytest.fixture(scope="session")
def server_uri():
    """URI of a server for the whole test session (stand-in started in-process unless told)."""
    uri = os.environ.get("COSTLAB_TEST_URI")
    if uri:
        yield uri
        return
    secantus = pytest.importorskip("secantus")
    server = secantus.SecantusDBServer(storage_path=":memory:")
    server.start()
    try:
        yield server.uri
    finally:
        server.stop()


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
def mongod_shim() -> str:
    """Path of tests/shims/mongod: a test aid that runs the stand-in under mongod's options."""
    return str(SHIMS / "mongod")


def run_snakemake(workdir: Path, targets: list[str], server_uri: str, configfiles: tuple[str, ...] = ("config/smoke.yaml",),
                  extra_args: tuple[str, ...] = ()):
    """Run the workflow from the repo into a scratch results dir against the test server.

    Uses --directory so results land in workdir, not the repo; returns CompletedProcess.
    """
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles"):
        link = workdir / name
        if not link.exists():
            link.symlink_to(ROOT / name)
    cmd = [sys.executable, "-m", "snakemake", *targets, "--cores", "2", "--resources", "mongod=1",
           "--configfile", *configfiles,
           "--config", f"server={{backend: external, uri: '{server_uri}'}}",
           "--directory", str(workdir), "--snakefile", str(workdir / "Snakefile"), *extra_args]
    env = os.environ | {"XDG_CACHE_HOME": str(workdir / ".cache"), "CI": "1"}
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=env, timeout=1800)


@dataclass
class SmokeRun:
    """One finished `snakemake all` on config/smoke.yaml: its scratch directory and its console."""
    workdir: Path
    result: subprocess.CompletedProcess

    def results(self, study: str = "") -> Path:
        return self.workdir / "results" / study if study else self.workdir / "results"


@pytest.fixture(scope="session")
def smoke_all(tmp_path_factory, server_uri) -> SmokeRun:
    """The whole smoke DAG (every study, every figure, the report), run ONCE per test session.

    For tests that only read what a smoke run built: use this rather than starting your own
    run (each costs minutes on 2 cores). Do not write into it; a test that needs another config,
    a failure or a rerun starts its own with `snakemake_run`.
    """
    workdir = tmp_path_factory.mktemp("smoke_all")
    result = run_snakemake(workdir, ["all"], server_uri)
    assert result.returncode == 0, result.stderr[-4000:]
    return SmokeRun(workdir, result)


@pytest.fixture
def snakemake_run(tmp_path, server_uri):
    """Call as snakemake_run([targets]) -> CompletedProcess; results go under tmp_path."""
    def run(targets, configfiles=("config/smoke.yaml",), extra_args=()):
        return run_snakemake(tmp_path, list(targets), server_uri, tuple(configfiles), tuple(extra_args))
    run.workdir = tmp_path
    return run
