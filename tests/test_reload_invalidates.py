"""A forced reload invalidates what was measured on the old data (issue #12).

The data directories are ancient() inputs (a server running on them moves their mtime), so a
reload alone used to leave the correctness check, the load test and the measurements standing.
Each measuring rule now also reads its load's provenance, which only a (re)load writes.
Dry runs in a scratch tree whose outputs all exist and are newer than their inputs.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

# (forced load rule, files of a finished chain in dependency order, downstream rules that must be planned)
CHAINS = {
    "appversions": (
        "appversions_load",
        [
            "results/appversions/events.parquet",
            "results/appversions/data/appV4/",
            "results/appversions/raw/collstats_appV4.parquet",
            "results/appversions/provenance/load_appV4.json",
            "results/appversions/tables/correctness_appV4.csv",
            "results/appversions/provenance/correctness_appV4.json",
            "results/appversions/raw/loadtest_appV4.parquet",
            "results/appversions/provenance/loadtest_appV4.json",
        ],
        ["results/appversions/raw/loadtest_appV4.parquet"],
        {"appversions_correctness", "appversions_loadtest"},
    ),
    "docsize": (
        "docsize_load",
        [
            "results/docsize/data/orders_1k/",
            "results/docsize/provenance/load_orders_1k.json",
            "results/docsize/raw/same_window__orders_1k.parquet",
            "results/docsize/raw/collstats_same_window__orders_1k.parquet",
            "results/docsize/provenance/same_window__orders_1k.json",
        ],
        ["results/docsize/raw/same_window__orders_1k.parquet"],
        {"docsize_measure"},
    ),
    "flatnested": (
        "flatnested_load",
        [
            "results/flatnested/model/values.parquet",
            "results/flatnested/data/flat_10/",
            "results/flatnested/provenance/load_flat_10.json",
            "results/flatnested/raw/flat_10.parquet",
            "results/flatnested/provenance/measure_flat_10.json",
        ],
        ["results/flatnested/raw/flat_10.parquet"],
        {"flatnested_measure"},
    ),
}


def finished_tree(workdir: Path, files: list[str]) -> None:
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles"):
        (workdir / name).symlink_to(ROOT / name)
    now = time.time() - 1000
    for i, name in enumerate(files):  # each later than the one before: nothing is out of date
        path = workdir / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
        os.utime(path, (now + i, now + i))


def planned_rules(workdir: Path, targets: list[str], *args: str) -> set[str]:
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-n",
        *targets,
        "--configfile",
        "config/smoke.yaml",
        "--config",
        "server={backend: external, uri: 'mongodb://127.0.0.1:1/'}",
        "--rerun-triggers",
        "mtime",
        "--directory",
        str(workdir),
        "--snakefile",
        str(workdir / "Snakefile"),
        "--quiet",
        "rules",
        *args,
    ]
    env = os.environ | {"XDG_CACHE_HOME": str(workdir / ".cache"), "CI": "1"}
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = set()
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            names.add(parts[0])
    return names


@pytest.fixture(scope="module")
def plans(tmp_path_factory) -> tuple[set[str], set[str]]:
    """One scratch tree holding the three studies' finished chains (independent of each other: each study's
    rules read only its own files) and two dry runs of it: as it is, and with every load rule forced.
    One workflow parse per plan rather than two per study (each parse costs a few CPU seconds)."""
    workdir = tmp_path_factory.mktemp("reload")
    finished_tree(workdir, [name for chain in CHAINS.values() for name in chain[1]])
    targets = [target for chain in CHAINS.values() for target in chain[2]]
    forced = ["--forcerun", *(chain[0] for chain in CHAINS.values())]
    return planned_rules(workdir, targets), planned_rules(workdir, targets, *forced)


@pytest.mark.parametrize("study", sorted(CHAINS))
def test_forced_reload_plans_what_was_measured_on_the_old_data(study, plans):
    load_rule, _files, _targets, downstream = CHAINS[study]
    finished, forced = plans
    assert finished == set()   # finished chains: nothing to do
    assert load_rule in forced and downstream <= forced, forced
