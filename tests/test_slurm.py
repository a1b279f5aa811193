"""Opt-in: the smoke workflow through Snakemake's Slurm executor on a single-node cluster.

Runs only with COSTLAB_TEST_SLURM=1 (`make test-slurm`), as root, with Debian's slurm-wlm and
munge installed (`apt-get install -y slurm-wlm munge`) and requirements-slurm.txt in the venv;
skipped otherwise, so `make test` neither waits for it nor needs root. The server is the
SecantusDB stand-in as an external deployment (secantusd-py on a free port): it checks the
machinery (submission, exclusive nodes, shared results, one report), never timings.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from costlab.config import ROOT

pytestmark = pytest.mark.slurm

MEASURING = ("docsize_load", "docsize_measure", "appversions_load", "appversions_correctness",
             "appversions_loadtest", "arraygrowth_run", "flatnested_load", "flatnested_measure",
             "uniqueidx_conformance")


def _skip_reason() -> str | None:
    if os.environ.get("COSTLAB_TEST_SLURM") != "1":
        return "opt-in: run with make test-slurm (COSTLAB_TEST_SLURM=1)"
    from slurm_cluster import missing_tools
    if missing := missing_tools():
        return f"not installed: {', '.join(missing)} (apt-get install -y slurm-wlm munge)"
    if os.geteuid() != 0:
        return "slurmd needs root to start jobs"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "pip install -r requirements-slurm.txt"
    return None


@pytest.fixture(scope="module")
def cluster():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    from slurm_cluster import single_node_cluster
    with single_node_cluster() as found:
        yield found


@pytest.fixture(scope="module")
def standin_uri(tmp_path_factory):
    """The stand-in as a separate server process: jobs run in other processes than pytest."""
    import portpicker
    from pymongo import MongoClient

    port = portpicker.pick_unused_port()
    storage = tmp_path_factory.mktemp("secantus")
    proc = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "secantusd-py"),
            "--port",
            str(port),
            "--storage-path",
            str(storage),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    uri = f"mongodb://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with MongoClient(uri, serverSelectionTimeoutMS=1000) as client:
                    client.admin.command("ping")
                break
            except Exception:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.5)
        yield uri
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def slurm_command(workdir: Path, uri: str, partition: str, targets=("all",)) -> list[str]:
    """The command a user runs (profiles/slurm), plus what a cluster without accounting needs."""
    return [sys.executable, "-m", "snakemake", *targets, "--profile", "profiles/slurm",
            "--configfile", "config/smoke.yaml",
            "--config", f"server={{backend: external, uri: '{uri}'}}",
            "--default-resources", f"slurm_partition={partition}", "mem_mb=2000", "runtime=15",
            "--slurm-no-account", "--slurm-status-command", "squeue", "--slurm-keep-successful-logs",
            "--slurm-init-seconds-before-status-checks", "1", "--seconds-between-status-checks", "2",
            "--directory", str(workdir), "--snakefile", str(workdir / "Snakefile")]


def link_checkout(workdir: Path) -> None:
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles", "environment.yml"):
        (workdir / name).symlink_to(ROOT / name)


def slurm_jobs_by_rule(workdir: Path) -> dict[str, list[int]]:
    """Slurm job ids per rule, from the executor's logs (.snakemake/slurm_logs/rule_<rule>/.../<id>.log)."""
    found: dict[str, list[int]] = {}
    for log in (workdir / ".snakemake" / "slurm_logs").rglob("*.log"):
        rule_dir = next(p.name for p in log.relative_to(workdir / ".snakemake" / "slurm_logs").parents
                        if p.name.startswith("rule_"))
        found.setdefault(rule_dir.removeprefix("rule_"), []).append(int(log.stem))
    return found


def test_smoke_workflow_runs_to_the_report_through_slurm(cluster, standin_uri, tmp_path):
    workdir = tmp_path / "run"
    workdir.mkdir()
    link_checkout(workdir)
    cmd = slurm_command(workdir, standin_uri, cluster["partition"])
    env = cluster["env"] | {"XDG_CACHE_HOME": str(workdir / ".cache"), "CI": "1"}
    started = time.monotonic()
    result = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=3600)
    wall_s = time.monotonic() - started
    (tmp_path / "snakemake.out").write_text(result.stdout + result.stderr)
    print(f"smoke through Slurm: {wall_s:.0f} s wall; command: {' '.join(cmd)}")
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]

    report = workdir / "results" / "report.html"
    assert report.exists() and report.stat().st_size > 0
    assert "stand-in" in report.read_text()

    # Every measuring job went through Slurm, on the whole node (#CPUs = every CPU of it).
    jobs = slurm_jobs_by_rule(workdir)
    log = cluster["slurmctld_log"].read_text()
    allocated = {int(m.group(1)): int(m.group(2))
                 for m in re.finditer(r"Allocate JobId=(\d+) NodeList=\S+ #CPUs=(\d+)", log)}
    from slurm_cluster import NODE_CPUS
    for rule in MEASURING:
        assert jobs.get(rule), f"no Slurm job for {rule}: {sorted(jobs)}"
        for job_id in jobs[rule]:
            assert allocated.get(job_id) == NODE_CPUS, f"{rule} job {job_id} was not alone on the node"
    # Server-free jobs were packed: they asked for one CPU, not the node.
    assert any(allocated.get(job_id) == 1 for job_id in jobs["docsize_model"])


def test_a_job_that_cannot_see_the_results_directory_fails_naming_the_file(cluster, standin_uri, tmp_path):
    """The submitting Snakemake marks results/; a node whose results/ is another directory says so."""
    workdir = tmp_path / "run"
    workdir.mkdir()
    link_checkout(workdir)
    # Stands for a node-local results/: the job's node sees a directory the submitter never wrote to.
    local = tmp_path / "node-local-results"
    local.mkdir()
    results = workdir / "results"
    results.mkdir()
    cmd = slurm_command(workdir, standin_uri, cluster["partition"],
                        targets=("results/uniqueidx/tables/conformance.csv",))
    env = cluster["env"] | {"XDG_CACHE_HOME": str(workdir / ".cache"), "CI": "1"}
    # Swap results/ for the node-local one once the mark is written, before the job starts.
    proc = subprocess.Popen(
        cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    mark = results / ".costlab-submit.json"
    deadline = time.monotonic() + 120
    while not mark.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mark.exists(), "the submitting Snakemake wrote no mark"
    results.rename(tmp_path / "submit-host-results")
    results.symlink_to(local)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode != 0
    job_logs = "".join(p.read_text() for p in (workdir / ".snakemake" / "slurm_logs").rglob("*.log"))
    assert ".costlab-submit.json" in job_logs and "docs/slurm.md" in job_logs, job_logs[-3000:]
