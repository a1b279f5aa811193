"""End to end: the server as a step of the workflow, and `all` with no server (issues #13 and #17).

One scratch results tree goes through what a user does:
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
import subprocess
import sys
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from costlab.config import ROOT
from costlab.server.setup import not_run_record
from costlab.report.studies import STUDIES

# Rules that measure on a server (resources: mongod=1) and the setup step they all depend on.
MEASURING_RULES = {"docsize_load", "docsize_measure", "appversions_load", "appversions_correctness",
                   "appversions_loadtest", "arraygrowth_run", "flatnested_load", "flatnested_measure",
                   "uniqueidx_conformance"}


def link_workflow(workdir: Path) -> None:
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles"):
        if not (workdir / name).exists():
            (workdir / name).symlink_to(ROOT / name)


def snakemake(workdir: Path, server: str, *args: str, config: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """The workflow on config/smoke.yaml with `server` as the --config server section (plus `config` entries)."""
    bindir = str(Path(sys.executable).parent)
    # No Docker engine and no mongod for `auto` to find, whatever this machine has.
    env = os.environ | {"XDG_CACHE_HOME": str(workdir / ".cache"), "CI": "1",
                        "DOCKER_HOST": "unix:///nonexistent/docker.sock", "PATH": f"{bindir}:/usr/bin:/bin"}
    cmd = [sys.executable, "-m", "snakemake", *args, "--cores", "2", "--resources", "mongod=1",
           "--configfile", "config/smoke.yaml", "--config", f"server={server}", *config,
           "--directory", str(workdir), "--snakefile", str(workdir / "Snakefile")]
    return subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, env=env, timeout=1800)


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


def external(uri: str) -> str:
    return f"{{backend: external, uri: '{uri}'}}"


@pytest.fixture(scope="module")
def second_server():
    """Stand-in B on its own port (stand-in A is the session's server_uri)."""
    if os.environ.get("COSTLAB_TEST_URI"):
        pytest.skip("two servers are two stand-ins; COSTLAB_TEST_URI names one")
    secantus = pytest.importorskip("secantus")
    server = secantus.SecantusDBServer(storage_path=":memory:")
    server.start()
    try:
        yield server.uri
    finally:
        server.stop()


@pytest.fixture(scope="module")
def story(tmp_path_factory, server_uri, second_server):
    if shutil.which("mongod", path="/usr/bin:/bin"):
        pytest.skip("a mongod on /usr/bin: `auto` would find a server")
    workdir = tmp_path_factory.mktemp("servers_workflow")
    link_workflow(workdir)
    steps: dict = {"workdir": workdir}
    steps["no_server_fresh_plan"] = planned(snakemake(workdir, "{backend: auto}", "-n", "all"))
    steps["no_server"] = snakemake(workdir, "{backend: auto}", "all")
    assert steps["no_server"].returncode == 0, steps["no_server"].stderr[-4000:]
    results = workdir / "results"
    steps["no_server_report"] = (results / "report.html").read_text()
    steps["no_server_not_run"] = {p.parent.name: json.loads(p.read_text()) for p in results.glob("*/not_run.json")}
    steps["no_server_servers"] = (results / "servers").exists()
    steps["no_server_plan"] = planned(snakemake(workdir, "{backend: auto}", "-n", "all"))
    steps["server_appears_plan"] = planned(snakemake(workdir, external(server_uri), "-n", "all"))
    steps["run_a"] = snakemake(workdir, external(server_uri), "all")
    assert steps["run_a"].returncode == 0, steps["run_a"].stderr[-4000:]
    steps["server_report"] = (results / "report.html").read_text()
    steps["noop_plan"] = planned(snakemake(workdir, external(server_uri), "-n", "all"))
    # a key that does not decide an external server (the docker image) reruns no measurement
    steps["image_plan"] = planned(snakemake(workdir, f"{{backend: external, uri: '{server_uri}', image: 'mongo:7.0'}}",
                                            "-n", "all"))
    steps["server_b_plan"] = planned(snakemake(workdir, external(second_server), "-n", "all"))
    # Another machine's run, as a user would copy it here: the same tree, relabelled as another
    # server version on another host at another scale (test data for the report, not a measurement).
    other = workdir / "machine-b" / "results"
    shutil.copytree(workdir / "results", other, ignore=shutil.ignore_patterns("data", "logs", "report.html"))
    for path in other.glob("*/provenance/*.json"):
        record = json.loads(path.read_text())
        record["server"]["version"], record["host"]["hostname"] = "7.0.99", "host-b"
        path.write_text(json.dumps(record))
    manifest = json.loads((other / "run.json").read_text())
    manifest["config"]["docsize"]["docs_per_collection"] = 4000
    (other / "run.json").write_text(json.dumps(manifest))
    older = workdir / "older" / "results"
    shutil.copytree(other, older)
    (older / "run.json").unlink()
    compare = f"{{with: ['{other}']}}"
    steps["compare"] = snakemake(workdir, external(server_uri), "results/report.html", config=(f"compare={compare}",))
    steps["compare_report"] = (workdir / "results" / "report.html").read_text()
    steps["refused"] = snakemake(workdir, external(server_uri), "-n", "results/report.html",
                                 config=(f"compare={{with: ['{older}']}}",))
    return steps


def server_free_rules(story) -> set[str]:
    """What `all` plans with no server besides the report: models and engine lab."""
    # run_manifest records the config for the report (it follows any config change, as the report does)
    return set(story["no_server_fresh_plan"]) - {"report", "all", "mongod_not_run", "run_manifest"}


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
        assert all(f.startswith(f"fig-{study}-engine_") for f in re.findall(r'data-figure="([^"]+)"', section))
    assert 'data-status="server-free"' in page  # studies with a model show it
    for study in ("arraygrowth", "docsize"):  # engine-lab verdicts with no server
        section = re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S).group(0)
        assert "<h4>Published vs engine lab</h4>" in section
    assert story["no_server_plan"] == Counter()  # and a second run without a server does nothing


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
    this_version = json.loads(next(results.glob("docsize/provenance/*.json")).read_text())["server"]["version"]
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
            assert "machine-b was measured at another scale or config: docsize.docs_per_collection = 4000" in section
    assert 'data-figure="fig-docsize-compare_runs"' in page
    assert 'data-figure="fig-flatnested-compare_runs"' in page


def test_an_older_results_tree_is_refused_naming_what_is_missing(story):
    proc = story["refused"]
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "older costlab version" in text and "results/run.json" in text
