"""End to end: the server as a step of the workflow, and `all` with no server (issues #13 and #17).

One scratch results tree (the session's smoke tree, tests/conftest.py) goes through what a user does:
1. `snakemake all` on a machine with no server: the server-free parts, not_run.json, the report;
2. a server configured afterwards: the plan is the mongod parts and the report, nothing server-free;
3. `snakemake all` on stand-in A (a full smoke run), then a no-op run plans nothing;
4. server.uri pointed at stand-in B: every measuring job of every study is planned, no server-free job.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter

import polars as pl
import pytest
from workflow import dry_runs, external, planned, standin, workflow

from costlab.namespaces import run_id
from costlab.report.studies import STUDIES
from costlab.server.setup import not_run_record

# Rules that measure on a server (resources: mongod=1) and the setup step they all depend on.
MEASURING_RULES = {"docsize_load", "docsize_measure", "appversions_load", "appversions_correctness",
                   "appversions_loadtest", "arraygrowth_run", "flatnested_load", "flatnested_measure",
                   "uniqueidx_conformance"}


@pytest.fixture(scope="module")
def second_server():
    """Stand-in B on its own port (stand-in A is the session's server_uri)."""
    if os.environ.get("COSTLAB_TEST_URI"):
        pytest.skip("two servers are two stand-ins; COSTLAB_TEST_URI names one")
    with standin() as uri:
        yield uri


@pytest.fixture(scope="module")
def story(smoke_all, tmp_path_factory, server_uri, second_server):
    """Steps 1-3 are the session's smoke tree (tests/conftest.py smoke_all); step 4 and the
    comparison with another machine's run follow here, the comparison on a copy of the tree."""
    if smoke_all.no_server is None:
        pytest.skip("a mongod on /usr/bin: `auto` would find a server")
    workdir = smoke_all.workdir
    no_server_results = smoke_all.no_server_results
    steps: dict = {"workdir": workdir}
    steps["none_fresh_plan"] = planned(smoke_all.dry_runs["none_fresh"])
    steps["no_server_fresh_plan"] = planned(smoke_all.dry_runs["no_server_fresh"])
    steps["no_server"] = smoke_all.no_server
    steps["no_server_report"] = (no_server_results / "report.html").read_text()
    steps["no_server_not_run"] = {
        p.parent.name: json.loads(p.read_text()) for p in no_server_results.glob("*/not_run.json")
    }
    steps["no_server_servers"] = (no_server_results / "servers").exists()
    steps["no_server_plan"] = planned(smoke_all.dry_runs["no_server_again"])
    steps["server_appears_plan"] = planned(smoke_all.dry_runs["server_appears"])
    steps["run_a"] = smoke_all.result
    steps["server_report"] = (workdir / "results" / "report.html").read_text()
    plans = dry_runs(workdir, {
        "noop_plan": (external(server_uri), ("all",)),
        # a key that does not decide an external server (the docker image) reruns no measurement
        "image_plan": (f"{{backend: external, uri: '{server_uri}', image: 'mongo:7.0'}}", ("all",)),
        "server_b_plan": (external(second_server), ("all",)),
        # one study's engine keys (engine.arraygrowth.ns) plan that study's engine job alone
        "engine_key_plan": (external(server_uri), ("all",), ("engine={arraygrowth: {ns: [200, 400]}}",))})
    steps |= {name: planned(proc) for name, proc in plans.items()}
    # Another machine's run, as a user would copy it here: the same tree, relabelled as another
    # server version on another host at another scale (test data for the report, not a measurement).
    scratch = tmp_path_factory.mktemp("servers_workflow")
    other = scratch / "machine-b" / "results"
    shutil.copytree(workdir / "results", other, ignore=shutil.ignore_patterns("data", "logs", "report.html"))
    for path in other.glob("*/provenance/*.json"):
        record = json.loads(path.read_text())
        record["server"]["version"], record["host"]["hostname"] = "7.0.99", "host-b"
        path.write_text(json.dumps(record))
    manifest = json.loads((other / "run.json").read_text())
    manifest["config"]["docsize"]["docs_per_collection"] = 4000
    (other / "run.json").write_text(json.dumps(manifest))
    # what compare reads: the config each of the study's jobs recorded in its provenance
    for path in [*other.glob("docsize/provenance/*.json"), *other.glob("docsize/engine/**/provenance*.json")]:
        record = json.loads(path.read_text())
        if "study_config" in record:
            record["study_config"]["docsize"]["docs_per_collection"] = 4000
            path.write_text(json.dumps(record))
    older = scratch / "older" / "results"
    shutil.copytree(other, older)
    (older / "run.json").unlink()
    # the compare report is written into a copy: the session's tree is read by other tests
    here = scratch / "this"
    shutil.copytree(workdir, here, symlinks=True)
    compare = f"{{with: ['{other}']}}"
    steps["compare_workdir"] = here
    # The copy stands for this run itself: it keeps this run's databases (the run id is host + working
    # directory unless server.namespace is set), so nothing is measured again and both columns agree.
    same_run = f"{{backend: external, uri: '{server_uri}', namespace: '{run_id({}, cwd=workdir)}'}}"
    steps["compare"] = workflow(here, same_run, "results/report.html", config=(f"compare={compare}",))
    steps["compare_report"] = (here / "results" / "report.html").read_text()
    steps["refused"] = workflow(here, external(server_uri), "-n", "results/report.html",
                                 config=(f"compare={{with: ['{older}']}}",))
    return steps


def server_free_rules(story) -> set[str]:
    """What `all` plans with no server besides the report: models and engine lab."""
    # run_manifest records the config for the report (it follows any config change, as the report does);
    # findings (results/findings.csv) gathers every study's verdicts for the report, like the report itself
    return set(story["no_server_fresh_plan"]) - {
        "report",
        "findings",
        "all",
        "mongod_not_run",
        "run_manifest",
    }


def test_no_server_builds_the_server_free_parts_and_says_what_was_left_out(story):
    free = server_free_rules(story)
    assert {"docsize_model", "appversions_model", "flatnested_model"} <= free
    assert {"arraygrowth_engine", "docsize_engine", "appversions_engine"} <= free  # the engine lab runs
    assert not free & MEASURING_RULES and "server_setup" not in free
    assert not story["no_server_servers"]
    assert story["no_server_not_run"] == {study: not_run_record() for study in STUDIES}
    page = story["no_server_report"]
    for study in STUDIES:
        section = re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S).group(0)
        assert 'data-part="mongod" data-status="not run"' in section
        assert "not run: no MongoDB server" in section and "start a Docker engine" in section
        assert "Traceback" not in section and "could not be drawn" not in section
        # no empty figure stands in for a measurement: the only figures are the engine lab's
        assert all(
            f.startswith(f"fig-{study}-engine_") for f in re.findall(r'data-figure="([^"]+)"', section)
        )
    assert 'data-status="server-free"' in page  # studies with a model show it
    for study in ("arraygrowth", "docsize"):  # engine-lab verdicts with no server
        section = re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S).group(0)
        assert "<h4>Published vs engine lab</h4>" in section
    assert story["no_server_plan"] == Counter()  # and a second run without a server does nothing
    # `backend: none` (no server on purpose) plans what `auto` finding none plans
    assert story["none_fresh_plan"] == story["no_server_fresh_plan"]


def test_each_run_of_the_story_ends_with_a_short_summary(story):
    """Both `all` runs of the tree print one line per job and end with the summary (issue #14)."""
    for step in ("no_server", "run_a"):
        console = story[step].stderr.splitlines()
        assert len(console) < 200, (step, console[:60])
        start = max(i for i, line in enumerate(console) if line.startswith("costlab summary:"))
        # the summary: a line per study and evidence (5 studies, 2-6 evidence kinds each), the report, the log
        assert console[-1].startswith("full log: ") and start > len(console) - 25, (step, console[start:])
    assert "not run: mongod: no MongoDB server" in story["no_server"].stderr
    assert "not run: mongod" not in story["run_a"].stderr


def test_a_server_configured_later_plans_only_the_mongod_parts_and_the_report(story):
    plan = story["server_appears_plan"]
    assert set(plan) >= MEASURING_RULES | {"server_setup", "report"}
    assert not set(plan) & server_free_rules(story), plan


def test_the_run_with_a_server_replaces_not_run_with_measurements(story):
    results = story["workdir"] / "results"
    assert not list(results.glob("*/not_run.json"))
    page = (results / "report.html").read_text()
    assert "not run: no MongoDB server" not in page
    for profile in ("standalone", "standalone-small-cache", "replset-1"):
        record = json.loads((results / "servers" / f"{profile}.json").read_text())
        assert record["backend"] == "external" and record["profile"] == profile
        assert record["server"]["version"] and record["server"]["topology"]


def test_the_engine_figures_stay_in_the_report_beside_the_mongod_figures(story):
    page = story["server_report"]
    for study, name in (("arraygrowth", "engine_log_bytes"), ("docsize", "engine_cache_reads"),
                        ("appversions", "engine_storage_per_event")):
        section = re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S).group(0)
        figures = re.findall(r'data-figure="([^"]+)"', section)
        assert f"fig-{study}-{name}" in figures and len(figures) > 1, (study, figures)


def test_one_studys_engine_keys_plan_only_its_engine_job(story):
    """It used to plan appversions_engine and docsize_engine too: every engine rule took all of `engine`."""
    plan = story["engine_key_plan"]
    assert plan["arraygrowth_engine"] == 1, plan
    assert not {"appversions_engine", "appversions_engine_version", "docsize_engine"} & set(plan), plan
    assert not set(plan) & MEASURING_RULES, plan   # an engine key reruns no mongod measurement


def test_a_no_op_run_plans_nothing(story):
    assert story["noop_plan"] == Counter()


def test_a_key_that_does_not_decide_the_server_reruns_no_measurement(story):
    assert set(story["image_plan"]) <= {"run_manifest", "report", "all"}, story["image_plan"]


def test_another_server_reruns_every_measurement_and_nothing_server_free(story):
    plan = story["server_b_plan"]
    first = story["server_appears_plan"]
    for rule in MEASURING_RULES | {"server_setup"}:
        assert plan[rule] == first[rule], (rule, plan, first)
    assert not set(plan) & server_free_rules(story), plan
    assert "report" in plan


def test_compare_puts_every_published_row_of_both_runs_side_by_side(story):
    proc = story["compare"]
    assert proc.returncode == 0, proc.stderr[-4000:]
    page = story["compare_report"]
    results = story["workdir"] / "results"
    this_version = json.loads(next(results.glob("docsize/provenance/*.json")).read_text())["server"][
        "version"
    ]
    for study in STUDIES:
        section = re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S).group(0)
        table = re.search(r'<div class="table-box pvr">.*?</table>', section, re.S).group(0)
        head = re.findall(r"<th>(.*?)</th>", table)
        this_cols = [h for h in head if h.startswith("reproduced: this run: ")]
        other_cols = [h for h in head if h.startswith("reproduced: machine-b: 7.0.99")]
        assert len(this_cols) == 1 and len(other_cols) == 1, head
        assert this_version in this_cols[0] and "host-b" in other_cols[0]
        rows = re.findall(r"<tr><td>.*?</tr>", table, re.S)
        assert len(rows) == pl.read_csv(results / study / "tables" / "published_vs_reproduced.csv").height
        # the copy holds the same rows: every row has both runs' value (the same value here)
        for row in rows:
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            this_i, other_i = head.index(this_cols[0]), head.index(other_cols[0])
            assert cells[this_i] == cells[other_i], (study, cells)
        if study == "docsize":
            assert (
                "machine-b was measured at another scale or config: docsize.docs_per_collection = 4000"
                in section
            )
    assert 'data-figure="fig-docsize-compare_runs"' in page
    assert 'data-figure="fig-flatnested-compare_runs"' in page


def test_an_older_results_tree_is_refused_naming_what_is_missing(story):
    proc = story["refused"]
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "older costlab version" in text and "results/run.json" in text
