"""Config from the command line and from several files: what Snakemake and `make all`'s pre-check see."""
from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest
import yaml

from costlab.config import ROOT, ConfigError, load_config, typed_command_line_config
from costlab.server.check import snakemake_config


def scratch_workflow(tmp_path):
    # A scratch directory, so results already built in the checkout do not shorten the plan.
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def snakemake_parses(value: str) -> dict:
    """What Snakemake's --config makes of KEY=VALUE (nested scalars arrive as strings)."""
    from snakemake.cli import parse_config

    return parse_config([value])


def test_nested_command_line_values_get_the_schema_types():
    raw = snakemake_parses("docsize={sizes_kb: [1, 64], window_minutes: 10, "
                           "variants: {split_history: false, spread_customer: true}}")
    assert raw["docsize"]["sizes_kb"] == ["1", "64"]  # the bug: strings
    typed = typed_command_line_config(raw)
    assert typed["docsize"]["sizes_kb"] == [1, 64]
    assert typed["docsize"]["window_minutes"] == 10
    assert typed["docsize"]["variants"] == {"split_history": False, "spread_customer": True}


def test_numbers_nulls_and_strings_by_the_schema():
    typed = typed_command_line_config(
        snakemake_parses(
            "appversions={model_tolerance: 0.02, load_versions: null, "
            "loadtest: {rate_scale: 2, bin_seconds: ~}}"
        )
    )
    assert typed["appversions"]["model_tolerance"] == 0.02
    assert typed["appversions"]["load_versions"] is None
    assert typed["appversions"]["loadtest"] == {"rate_scale": 2, "bin_seconds": None}
    # Where the schema takes a string, a string that reads as a number stays a string.
    typed = typed_command_line_config(snakemake_parses('server={image: "8.0", backend: docker}'))
    assert typed["server"] == {"image": "8.0", "backend": "docker"}
    # Versions are names (an enum of strings): untouched.
    typed = typed_command_line_config(snakemake_parses("appversions={versions: [appV4, appV6R4]}"))
    assert typed["appversions"]["versions"] == ["appV4", "appV6R4"]


def test_a_wrong_value_is_still_named_after_typing():
    with pytest.raises(ConfigError, match=r"docsize.sizes_kb.1.*integer"):
        load_config(overrides=snakemake_parses("docsize={sizes_kb: [1, lots]}"))


def test_snakemake_dry_run_with_nested_command_line_config(tmp_path):
    """The README's example: before the fix, "'1' is not of type 'integer'"."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "all",
            "--config",
            "docsize={sizes_kb: [1, 64], variants: {fields_after_history: false, spread_customer: false, "
            "split_history: false}}",
            "studies=[docsize]",
            "server={backend: external, uri: 'mongodb://127.0.0.1:1/'}",
        ],  # a server: the measurements are planned
        cwd=scratch_workflow(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    datasets = set(re.findall(r"dataset=(\w+)", result.stdout))
    assert datasets == {"orders_1k", "orders_64k"}


def test_pre_check_sees_files_in_order_then_command_line_keys(tmp_path):
    lab = tmp_path / "lab.yaml"
    lab.write_text(yaml.safe_dump({"docsize": {"docs_per_collection": 3000, "window_minutes": 30}}))
    config = snakemake_config(["all", "--profile", "profiles/default", "--configfile", "config/smoke.yaml",
                               str(lab), "--config", "docsize={window_minutes: 20}",
                               "server={backend: external, uri: 'mongodb://u:pw@db.example:27017/'}"])
    assert config["docsize"]["docs_per_collection"] == 3000       # lab.yaml over smoke.yaml
    assert config["docsize"]["sizes_kb"] == [1, 4]                 # smoke.yaml over the defaults
    assert config["docsize"]["window_minutes"] == 20               # --config last
    assert config["server"]["backend"] == "external"
    assert config["appversions"]["events_per_year"] == 600          # smoke.yaml


@pytest.mark.parametrize("argv, flag", [
    (["all", "--configfile", "config/smoke.yaml", "--configfile", "config/full.yaml"], "--configfile"),
    (["all", "--config", "studies=[docsize]", "-C", "studies=[uniqueidx]"], "--config"),
])
def test_pre_check_refuses_a_repeated_flag_snakemake_would_drop(argv, flag):
    with pytest.raises(ConfigError, match=f"{flag} is given more than once"):
        snakemake_config(argv)


@pytest.mark.parametrize("target, snakemake_args", [("all", ["all"]), ("dryrun", ["-n", "all"])])
def test_make_all_gives_the_pre_check_the_same_arguments_as_snakemake(target, snakemake_args):
    result = subprocess.run(
        ["make", "-n", "--always-make", target, "CONFIG=config/smoke.yaml my-lab.yaml",
         "SET=docsize='{sizes_kb: [1, 64]}' studies='[docsize]'", "SNAKEMAKE_ARGS=--keep-going"],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    check = next(shlex.split(line) for line in lines if "costlab.server.check" in line)
    run = next(shlex.split(line)[1:] for line in lines if line.startswith(".venv/bin/snakemake "))
    assert run[:len(snakemake_args)] == snakemake_args
    run = run[len(snakemake_args) - 1:]   # from the target on
    assert check[check.index("costlab.server.check") + 1:] == run
    assert run[run.index("--configfile") + 1 : run.index("--configfile") + 3] == [
        "config/smoke.yaml",
        "my-lab.yaml",
    ]
    assert "docsize={sizes_kb: [1, 64]}" in run and "--keep-going" in run


def test_make_smoke_runs_all_on_the_smoke_config():
    result = subprocess.run(["make", "-n", "--always-make", "smoke"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert re.search(r"snakemake all .*--configfile config/smoke\.yaml", result.stdout)
