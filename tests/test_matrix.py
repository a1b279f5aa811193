"""The server matrix (`make matrix`), tested at its seams: no Docker engine runs here.

Which runs and commands the matrix plans, which jobs each run's workflow plans (a dry run),
which container spec each profile gets, and the comparison report of the runs' trees. Pulling
images and running containers is only exercised on a machine with Docker.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from costlab.config import ROOT, ConfigError, load_config
from costlab.matrix import comparison_report, container_specs, link_workflow, plan, slug
from tests.test_compare_runs import ROWS_A, ROWS_B, make_tree

IMAGES = ["mongo:7.0", "mongo:8.0"]


def matrix_config(images=IMAGES) -> dict:
    return load_config(ROOT / "config" / "smoke.yaml", overrides={"matrix": {"images": images}})


def config_arg(command: list[str], key: str):
    """The value of `key=` among the command's --config entries, parsed as Snakemake does (YAML)."""
    start = command.index("--config") + 1
    entry = next(a for a in command[start:] if a.startswith(f"{key}="))
    return yaml.safe_load(entry.split("=", 1)[1])


def test_one_run_per_image_each_in_its_own_tree(tmp_path):
    runs = plan(matrix_config(), ["--configfile", "config/smoke.yaml"], tmp_path)
    assert [r.image for r in runs] == IMAGES
    assert [r.workdir for r in runs] == [tmp_path / "mongo-7.0", tmp_path / "mongo-8.0"]
    for run in runs:
        server = config_arg(run.command, "server")
        assert server == {"backend": "docker", "image": run.image}
        assert run.server["image"] == run.image and run.server["startup_timeout_s"] == 60
        assert run.command[run.command.index("--directory") + 1] == str(run.workdir)
        assert str((ROOT / "config" / "smoke.yaml").resolve()) in run.command
        assert "all" in run.command


def test_no_images_or_clashing_directories_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="matrix.images: empty"):
        plan(matrix_config([]), [], tmp_path)
    with pytest.raises(ConfigError, match="same directory twice"):
        plan(matrix_config(["mongo:8.0", "mongo/8.0"]), [], tmp_path)
    assert slug("registry.local:5000/mongo:7.0") == "registry.local-5000-mongo-7.0"


def test_each_profile_gets_the_image_and_its_own_limits(tmp_path):
    run = plan(matrix_config(), [], tmp_path)[0]
    specs = container_specs(run, ["standalone", "standalone-small-cache", "replset-1"])
    assert {s["image"] for s in specs.values()} == {"mongo:7.0"}
    assert specs["standalone-small-cache"]["mem_limit"] == 1024 ** 3
    assert "--replSet" in specs["replset-1"]["command"]
    assert all(s["ports"]["27017/tcp"][0] == "127.0.0.1" for s in specs.values())
    assert specs["standalone"]["volumes"] == {
        str((run.results / "data").resolve()): {"bind": "/data/db", "mode": "rw"}
    }


@pytest.mark.workflow   # a whole-workflow plan per image: make test-workflow
def test_each_run_plans_the_server_setup_and_every_measurement(tmp_path):
    runs = plan(matrix_config(), ["--configfile", "config/smoke.yaml"], tmp_path)
    for run in runs:
        link_workflow(run.workdir)
        proc = subprocess.run(
            [*run.command, "-n", "-q", "rules"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
            env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / ".cache"), "HOME": str(tmp_path)},
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        text = proc.stdout + proc.stderr
        for rule in ("server_setup", "docsize_measure", "appversions_loadtest", "arraygrowth_run",
                     "flatnested_measure", "uniqueidx_conformance", "report"):
            assert rule in text, (run.image, rule)
        assert "mongod_not_run" not in text  # an explicit docker backend is never "no server"
        # profiles/default is the workflow-specific profile: loaded once, announced at most once
        profile_lines = [
            line for line in text.splitlines() if line.startswith("Using ") and "profile" in line
        ]
        assert len(profile_lines) <= 1 and "profiles/default and workflow specific" not in text, profile_lines


def test_dry_run_prints_one_command_per_image(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "costlab.matrix", "--plan", "--root", str(tmp_path),
                           "--configfile", "config/smoke.yaml"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "matrix.images: empty" in proc.stderr  # smoke.yaml lists no images
    override = tmp_path / "matrix.yaml"
    override.write_text(yaml.safe_dump({"matrix": {"images": IMAGES}}))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "costlab.matrix",
            "--plan",
            "--root",
            str(tmp_path),
            "--configfile",
            "config/smoke.yaml",
            str(override),
            "--config",
            "studies=[docsize]",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 2 and 'image: "mongo:7.0"' in lines[0] and 'image: "mongo:8.0"' in lines[1]
    # one --config with the user's keys and the image (Snakemake keeps only the last of several)
    assert all(line.count("--config ") == 1 and "studies=[docsize]" in line for line in lines)
    assert str(override) in lines[0]
    assert not (tmp_path / "mongo-7.0").exists()  # a dry run creates nothing


def test_comparison_report_shows_every_image(tmp_path):
    runs = plan(matrix_config(), [], tmp_path)
    make_tree(runs[0].workdir, "7.0.14", "lab", ROWS_A)
    make_tree(runs[1].workdir, "8.0.4", "lab", ROWS_B)
    out = comparison_report(runs, matrix_config(), tmp_path / "report.html")
    page = out.read_text()
    assert "<th>reproduced: this run: 7.0.14 on lab</th>" in page
    assert "<th>reproduced: mongo-8.0: 8.0.4 on lab</th>" in page
