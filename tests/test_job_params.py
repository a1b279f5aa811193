"""Jobs get exactly what their rule declares (costlab/jobs.py).

Snakemake reruns a job when its rule's params change; a job that read more than its params (the
whole config) would go stale silently. So every rule's params come from one dataclass per rule
(costlab/<study>/params.py), every script builds that class from snakemake.params, and no script
reads snakemake.config except through costlab.config.run_facts (the server and the run's hashes for
provenance, which RunFacts documents as deliberately not params).
"""
from __future__ import annotations

import ast
import dataclasses
import importlib
import json
import subprocess
import sys

import pytest

from costlab.config import ROOT, load_config, run_facts
from costlab.jobs import JobParams, RunFacts

SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))
# every costlab/<package>/params.py: one per study with params, the report's and the server setup's
PARAMS_MODULES = tuple(
    ".".join(path.relative_to(ROOT).with_suffix("").parts)
    for path in sorted((ROOT / "costlab").glob("*/params.py"))
)


def _is_snakemake_attr(node: ast.AST, attr: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name)
            and node.value.id == "snakemake")


def _config_reads(tree: ast.AST) -> tuple[list[int], list[int]]:
    """Lines reading snakemake.config: as run_facts' first argument (allowed) and otherwise."""
    allowed = {
        id(call.args[0])
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == "run_facts"
        and call.args
    }
    through, other = [], []
    for node in ast.walk(tree):
        if _is_snakemake_attr(node, "config"):
            (through if id(node) in allowed else other).append(node.lineno)
    return through, other


def test_no_script_reads_the_config_but_through_run_facts():
    through = {}
    for path in SCRIPTS:
        reads, other = _config_reads(ast.parse(path.read_text()))
        assert other == [], (
            f"{path.name} reads snakemake.config at line(s) {other}: declare what the job reads "
            "as its rule's params (costlab/<study>/params.py), or take costlab.config.run_facts"
        )
        if reads:
            through[path.stem] = reads
    # the check sees the reads it allows (else it would pass on nothing): the jobs on a server or the engine
    assert {"appversions_load", "docsize_engine", "server_setup", "uniqueidx_conformance"} <= set(through)
    assert "report_html" not in through and "findings_table" not in through and "run_manifest" not in through


def test_the_check_finds_a_direct_config_read():
    _, other = _config_reads(ast.parse("job(snakemake.config, 1)\nrun_facts(snakemake.config, 'x')\n"))
    assert other == [1]


def _params_class(path) -> type | None:
    """The class a script builds with X.from_params(snakemake.params), resolved through its imports."""
    tree = ast.parse(path.read_text())
    imported = {alias.asname or alias.name: (node.module, alias.name) for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) for alias in node.names}
    found = {
        call.func.value.id
        for call in ast.walk(tree)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "from_params"
        and isinstance(call.func.value, ast.Name)
        and call.args
        and _is_snakemake_attr(call.args[0], "params")
    }
    assert len(found) <= 1, f"{path.name} builds several params classes: {sorted(found)}"
    if not found:
        return None
    module, name = imported[found.pop()]
    return getattr(importlib.import_module(module), name)


RULES_PROBE = """
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

config = {"server": {"backend": "none"}, "appversions": {"loadtest": {"authors_driver": True}}}
with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    settings = ConfigSettings(configfiles=[Path("config/smoke.yaml")], config=config)
    workflow = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=Path("Snakefile"),
                            config_settings=settings, workdir=Path(sys.argv[1]))._workflow
    rules = {rule.name: {"script": Path(rule.script).name if rule.script else None,
                         "params": list(rule.params.keys())} for rule in workflow.rules}
sys.stdout.write("RULES " + json.dumps(rules) + "\\n")
"""


@pytest.fixture(scope="module")
def workflow_rules(tmp_path_factory) -> dict:
    """Every rule of the workflow (smoke config, no server, the authors' driver on): its script and params."""
    from workflow import link_workflow

    workdir = tmp_path_factory.mktemp("rules")
    link_workflow(workdir)
    proc = subprocess.run([sys.executable, "-c", RULES_PROBE, str(workdir)], cwd=workdir, capture_output=True,
                          text=True, timeout=300)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RULES ")]
    assert lines, f"rc {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return json.loads(lines[-1].removeprefix("RULES "))


def test_each_jobs_params_type_is_its_rules_params(workflow_rules):
    checked = []
    for rule, facts in sorted(workflow_rules.items()):
        if not facts["script"]:
            continue
        cls = _params_class(ROOT / "scripts" / facts["script"])
        if cls is None:
            assert facts["params"] == [], f"rule {rule} declares {facts['params']} but {facts['script']} " \
                                          "builds no params class from them"
            continue
        fields = [f.name for f in dataclasses.fields(cls)]
        assert sorted(facts["params"]) == sorted(fields), \
            f"rule {rule} declares {facts['params']}; {facts['script']}'s {cls.__name__} takes {fields}"
        checked.append(rule)
    # the measuring, engine and report rules were among those checked (else the probe saw nothing)
    assert {"appversions_load", "appversions_loadtest_authors", "docsize_measure", "flatnested_load",
            "arraygrowth_engine", "uniqueidx_conformance", "report", "server_setup"} <= set(checked)


def _all_params_classes() -> list[type]:
    classes = []
    for name in PARAMS_MODULES:
        module = importlib.import_module(name)
        classes += [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type)
            and issubclass(obj, JobParams)
            and obj is not JobParams
            and obj.__module__ == name
        ]
    return classes


def test_every_params_module_is_found():
    assert {"costlab.appversions.params", "costlab.docsize.params", "costlab.flatnested.params",
            "costlab.arraygrowth.params", "costlab.uniqueidx.params", "costlab.report.params",
            "costlab.server.params"} == set(PARAMS_MODULES)


def test_declare_gives_exactly_the_fields():
    config = load_config()
    classes = _all_params_classes()
    assert len(classes) >= 20
    for cls in classes:
        declared = cls.declare(config)
        assert sorted(declared) == sorted(f.name for f in dataclasses.fields(cls)), cls.__name__


def test_from_params_names_what_is_missing_and_unexpected():
    from costlab.flatnested.params import MeasureParams

    with pytest.raises(TypeError) as err:
        MeasureParams.from_params({"runs": 3, "warmup_runs": 1, "seed": 42})
    message = str(err.value)
    assert "MeasureParams takes the params data, runs, warmup_runs" in message
    assert "missing: data" in message and "unexpected: seed" in message


def test_the_data_params_are_the_namespaces_keys():
    # the event window is part of the loaded data: it reruns a load and names its database
    from costlab.appversions.params import LoadParams

    config = load_config(overrides={"appversions": {"event_window": "calendar"}})
    assert LoadParams.from_config(config).data == {"events_per_year": 20000, "seed": 42,
                                                   "event_window": "calendar", "batch_size": 250}


def test_a_load_test_does_not_rerun_for_the_tables_keys():
    # tolerance and binning are the tables' (costlab.appversions.params.LOADTEST_TABLE_KEYS)
    from costlab.appversions.params import LoadtestParams

    base = LoadtestParams.declare(load_config())
    other = LoadtestParams.declare(load_config(overrides={"appversions": {"loadtest": {"tolerance": 0.2,
                                                                                        "bin_seconds": 10}}}))
    assert base == other
    faster = LoadtestParams.declare(load_config(overrides={"appversions": {"loadtest": {"rate_scale": 2}}}))
    assert faster["loadtest"]["rate_scale"] == 2 and faster != base


def test_run_facts_hold_the_server_and_the_hashes_not_the_study_keys():
    config = load_config(overrides={"server": {"backend": "none", "lease_wait_s": 5}})
    run = run_facts(config, "docsize")
    assert isinstance(run, RunFacts) and run.server["lease_wait_s"] == 5
    assert {f.name for f in dataclasses.fields(RunFacts)} == {
        "study",
        "server",
        "config_hash",
        "study_config_hash",
        "engine_config_hash",
        "recorded_config",   # the study's keys as JSON text, for its provenance record (compare.with)
    }
    assert (
        isinstance(run.recorded_config, str)
        and json.loads(run.recorded_config)["docsize"] == config["docsize"]
    )
    # another study's key changes the run's hash, not this study's
    other = run_facts(load_config(overrides={"server": {"backend": "none", "lease_wait_s": 5},
                                             "flatnested": {"runs": 3}}), "docsize")
    assert other.config_hash != run.config_hash and other.study_config_hash == run.study_config_hash


def test_the_load_tests_judgement_is_the_tables_at_their_tolerance():
    """The load test does not judge its steps (tolerance and bin_seconds are not its params); the tables
    do, with describe_shortfalls at the configured tolerance, one block per version, as its log once did."""
    import polars as pl

    from costlab.appversions.loadtest_summary import describe_operations, describe_shortfalls
    from costlab.appversions.tables import loadtest_shortfalls

    def step(version, step, met, achieved):
        return {"version": version, "kind": "upsert", "phase": 1, "step": step, "target_rate": 100.0,
                "achieved_rate": achieved, "met": met, "ops_ok": 9, "ops_planned": 10, "ops_error": 0,
                "ops_skipped": 1, "behind": "none" if met else "client"}

    steps = pl.DataFrame([step("appV1", 1, True, 100.0), step("appV1", 2, False, 80.0),
                          step("appV2", 1, True, 99.0)])
    text = loadtest_shortfalls(steps)
    assert text == describe_shortfalls(steps.filter(pl.col("version") == "appV1")) + describe_shortfalls(
        steps.filter(pl.col("version") == "appV2"))
    assert text.splitlines() == [
        "appV1: 1 of 2 steps at target",
        "  upsert phase 1 step 2: target 100.0 events/s, achieved 80.0 (9 of 10 operations ok, 0 errors, "
        "1 not started) - the client fell behind",
        "appV2: 1 of 1 steps at target",
    ]
    raw = pl.DataFrame({"version": ["appV1"] * 4, "phase": [0, 1, 1, None],
                        "status": ["ok", "error", "skipped", "ok"]})
    assert describe_operations(raw).startswith("appV1: 1 of 3 operations ok, 1 errors, 1 not started (")
