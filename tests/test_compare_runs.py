"""Comparing runs (compare.with): trees checked, runs labelled from provenance, rows merged, scale named.

The trees here are small synthetic results trees (test data in the layout the workflow writes);
tests/test_servers_workflow.py compares real smoke runs end to end.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from costlab.report.compare import differences, load_runs, merged_published, notes, overlay_spec, run_label
from costlab.report.page import build_report
from costlab.report.runs import CompareError, check_tree, manifest, public_config

PVR_COLUMNS = ["finding", "metric", "unit", "published", "reproduced", "ratio", "verdict", "server_kind"]


def make_tree(root: Path, version: str, host: str, rows: list[tuple], docs: int = 2000, kind: str = "mongod",
              with_manifest: bool = True, comparison: list[tuple] | None = None) -> Path:
    results = root / "results"
    (results / "flatnested" / "tables").mkdir(parents=True)
    (results / "flatnested" / "provenance").mkdir(parents=True)
    pl.DataFrame([dict(zip(PVR_COLUMNS, (*r, kind))) for r in rows]).write_csv(
        results / "flatnested" / "tables" / "published_vs_reproduced.csv")
    process = "secantus" if kind == "stand-in" else "mongod"
    record = {
        "job": "measure_flat_10",
        "server": {"version": version, "process": process},
        "server_kind": kind,
        "backend": "docker",
        "profile": "standalone",
        "host": {"hostname": host, "cpu_model": "cpu"},
        "config_hash": "x",
    }
    (results / "flatnested" / "provenance" / "measure_flat_10.json").write_text(json.dumps(record))
    if comparison:
        pl.DataFrame(
            [{"fields": f, "reproduced_improvement_pct": v, "server_kind": kind} for f, v in comparison]
        ).write_csv(results / "flatnested" / "tables" / "comparison.csv")
    if with_manifest:
        config = {"server": {"backend": "docker", "image": f"mongo:{version[:3]}", "uri": None},
                  "flatnested": {"documents": docs, "runs": 3}, "studies": ["flatnested"]}
        (results / "run.json").write_text(json.dumps(manifest(config, "docker")))
    return results


ROWS_A = [("structured is faster", "time flat", "ms", 487.0, 100.0, 0.2, "reproduced"),
          ("structured is faster", "improvement", "%", 22.8, 20.0, 0.9, "reproduced")]
ROWS_B = [("structured is faster", "time flat", "ms", 487.0, 150.0, 0.3, "reproduced"),
          ("structured is faster", "improvement", "%", 22.8, -5.0, -0.2, "not reproduced"),
          ("only in b", "x", "", 1.0, 2.0, 2.0, "reproduced")]


def test_an_older_tree_is_refused_naming_what_is_missing(tmp_path):
    older = make_tree(tmp_path / "old", "7.0.1", "b", ROWS_B, with_manifest=False)
    with pytest.raises(CompareError) as err:
        check_tree(older.parent)
    assert "older costlab version" in str(err.value) and "results/run.json" in str(err.value)
    with pytest.raises(CompareError, match="not a directory"):
        check_tree(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CompareError, match="not a costlab results tree"):
        check_tree(tmp_path / "empty")


def test_a_tree_is_found_from_its_root_or_its_results_folder(tmp_path):
    results = make_tree(tmp_path / "b", "7.0.1", "host-b", ROWS_B)
    assert check_tree(results) == results and check_tree(results.parent) == results


def test_manifest_stores_no_password():
    config = {"server": {"backend": "external", "uri": "mongodb://alice:pw-XYZ@db:27017/"}, "studies": []}
    assert "pw-XYZ" not in json.dumps(manifest(config, "external"))
    assert public_config(config)["server"]["uri"] == "mongodb://alice@db:27017/"


def test_label_from_provenance():
    records = {
        "flatnested": [
            {"server": {"version": "8.0.4"}, "host": {"hostname": "lab-1"}, "server_kind": "mongod"}
        ]
    }
    assert run_label("machine-a", records) == "machine-a: 8.0.4 on lab-1"
    records["flatnested"][0]["server_kind"] = "stand-in"
    assert run_label("x", records) == "x: 8.0.4 (stand-in) on lab-1"


def test_every_row_gets_a_column_per_run(tmp_path):
    this = make_tree(tmp_path / "a", "8.0.4", "host-a", ROWS_A)
    other = make_tree(tmp_path / "machine-b", "7.0.14", "host-b", ROWS_B, docs=500)
    runs = load_runs(this, [other.parent])
    assert [r.label for r in runs] == ["this run: 8.0.4 on host-a", "machine-b: 7.0.14 on host-b"]
    merged = merged_published("flatnested", runs)
    assert merged.columns == [
        "finding",
        "metric",
        "unit",
        "published",
        "reproduced: this run: 8.0.4 on host-a",
        "verdict: this run: 8.0.4 on host-a",
        "reproduced: machine-b: 7.0.14 on host-b",
        "verdict: machine-b: 7.0.14 on host-b",
        "difference: this run vs machine-b: 7.0.14 on host-b",
        "server_kind",
    ]
    assert merged["metric"].to_list() == [
        "time flat",
        "improvement",
        "x",
    ]  # this run's order, then the others'
    assert merged["reproduced: this run: 8.0.4 on host-a"].to_list() == [100.0, 20.0, None]
    assert merged["reproduced: machine-b: 7.0.14 on host-b"].to_list() == [150.0, -5.0, 2.0]
    assert merged["verdict: machine-b: 7.0.14 on host-b"].to_list() == [
        "reproduced",
        "not reproduced",
        "reproduced",
    ]


def test_another_scale_and_server_are_named(tmp_path):
    this = make_tree(tmp_path / "a", "8.0.4", "host-a", ROWS_A)
    other = make_tree(tmp_path / "machine-b", "7.0.14", "host-b", ROWS_B, docs=500)
    runs = load_runs(this, [other])
    assert differences("flatnested", runs[0], runs[1]) == [
        "flatnested.documents = 500 (this run: 2000)", 'server.image = "mongo:7.0" (this run: "mongo:8.0")']
    said = notes("flatnested", runs)
    assert any(n.startswith("machine-b was measured at another scale or config: flatnested.documents = 500")
               for n in said)
    assert any("machine-b used another server config: server.image" in n for n in said)
    same = make_tree(tmp_path / "c", "8.0.4", "host-c", ROWS_A)
    assert not any("another scale" in n for n in notes("flatnested", load_runs(this, [same])))


def test_overlay_has_one_colour_per_run(tmp_path):
    this = make_tree(tmp_path / "a", "8.0.4", "host-a", ROWS_A, comparison=[(10, 20.0), (25, 30.0)])
    other = make_tree(tmp_path / "b", "7.0.14", "host-b", ROWS_B, comparison=[(10, 15.0), (25, 5.0)])
    runs = load_runs(this, [other])
    spec = overlay_spec("flatnested", runs)
    color = spec["layer"][0]["encoding"]["color"]   # the runs' lines (their hollow points: the next layer)
    assert color["field"] == "run" and color["scale"]["domain"] == [r.label for r in runs]
    values = next(iter(spec["datasets"].values()))
    assert {(v["run"], v["x"], v["y"]) for v in values} == {
        (runs[0].label, 10.0, 20.0),
        (runs[0].label, 25.0, 30.0),
        (runs[1].label, 10.0, 15.0),
        (runs[1].label, 25.0, 5.0),
    }
    assert overlay_spec("uniqueidx", runs) is None  # no figure: its table is the comparison


def test_report_shows_both_runs(tmp_path):
    this = make_tree(tmp_path / "a", "8.0.4", "host-a", ROWS_A, comparison=[(10, 20.0)])
    other = make_tree(tmp_path / "machine-b", "7.0.14", "host-b", ROWS_B, docs=500, comparison=[(10, 15.0)])
    config = json.loads((this / "run.json").read_text())["config"]
    out = tmp_path / "report.html"
    build_report(this, out, config, captions_dir=tmp_path, defaults=config, compare_with=[str(other.parent)])
    page = out.read_text()
    assert "<th>reproduced: machine-b: 7.0.14 on host-b</th>" in page
    assert "<th>verdict: this run: 8.0.4 on host-a</th>" in page
    assert "flatnested.documents = 500 (this run: 2000)" in page
    assert 'data-figure="fig-flatnested-compare_runs"' in page


def no_server_tree(root: Path, ns: list[int], verdicts: list[str]) -> Path:
    """A run with no server: arraygrowth's engine-lab verdicts and manifest only (as `make all` leaves it)."""
    results = root / "results"
    engine = results / "arraygrowth" / "engine"
    engine.mkdir(parents=True)
    pl.DataFrame([dict(zip(PVR_COLUMNS, (f"finding {i}", "metric", "B", 512.0, 384.0 + i, 0.75, v, "engine")))
                  for i, v in enumerate(verdicts)]).write_csv(engine / "published_vs_engine.csv")
    (engine / "provenance.json").write_text(json.dumps({"server_kind": "engine",
                                                        "server": {"wiredtiger_version": "11.2.0"}}))
    pl.DataFrame(
        [
            {
                "profile": profile,
                "workload": workload,
                "n": n,
                "log_bytes": n * per_op,
                "server_kind": "engine",
            }
            for profile, per_op in (("standalone", 128), ("replset-1", 512))
            for workload in ("insert", "push")
            for n in ns
        ]
    ).write_csv(engine / "log_bytes.csv")
    (results / "arraygrowth" / "not_run.json").write_text(json.dumps(
        {"part": "mongod", "reason": "no MongoDB server", "fix": "start a Docker engine"}))
    config = {
        "server": {"backend": "none", "uri": None},
        "studies": ["arraygrowth"],
        "arraygrowth": {"ns": [50, 100]},
        "engine": {"journal_compressor": "snappy", "arraygrowth": {"ns": ns}, "docsize": {"queries": 10}},
    }
    (results / "run.json").write_text(json.dumps(manifest(config, None)))
    return results


def test_compare_with_a_no_server_tree_shows_its_engine_results_and_the_settings_that_differ(tmp_path):
    """It used to say 'no server measurement' and 'has no results for this study' for both runs."""
    from test_report import smoke_config

    here = no_server_tree(tmp_path / "here", [200, 400], ["reproduced", "not reproduced"])
    other = no_server_tree(tmp_path / "lab-b", [800, 1600], ["reproduced", "reproduced"])
    config = smoke_config(studies=["arraygrowth"])
    build_report(here, here / "report.html", config, compare_with=[other.parent])
    page = (here / "report.html").read_text()
    section = page[page.index('id="study-arraygrowth"'):]
    assert "has no results for this study" not in section
    assert (
        "lab-b has no server measurement for this study; its engine-lab results are beside this run"
        in section
    )
    assert "engine.arraygrowth.ns = [800, 1600] (this run: [200, 400])" in section
    assert "engine.docsize" not in section   # another study's engine keys are not this study's settings
    engine = section[section.index("Published vs engine lab"):]
    engine = engine[:engine.index("</table>")]
    assert "verdict: this run: no server (engine lab and models)" in engine
    assert "verdict: lab-b: no server (engine lab and models)" in engine
    row = re.search(r"<tr><td>finding 1</td>.*?</tr>", engine, re.S).group(0)
    assert "not reproduced" in row and ">reproduced<" in row   # this run's verdict beside lab-b's
    # and both runs' engine-lab journal bytes in one figure, against the article's, the differing N named
    found = re.search(
        r'<script type="application/json" data-figure="fig-arraygrowth-engine_compare_runs">(.*?)</script>',
        section,
        re.S,
    )
    assert found, "no engine-lab comparison figure"
    spec = json.loads(found.group(1))
    values = next(iter(spec["datasets"].values()))
    drawn = {(v["run"], v["facet"], v["x"]) for v in values}
    this_label, other_label = (
        "this run: no server (engine lab and models)",
        "lab-b: no server (engine lab and models)",
    )
    assert {
        (this_label, "standalone", 400.0),
        (other_label, "standalone", 1600.0),
        (other_label, "replset-1", 800.0),
        ("published", "standalone", 40000.0),
        ("published", "replset-1", 10000.0),
    } <= drawn
    assert not {(this_label, "standalone", 800.0), (other_label, "standalone", 200.0)} & drawn
    assert {v["y"] for v in values if v["run"] == other_label and v["facet"] == "replset-1"} == {
        800 * 512,
        1600 * 512,
    }
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "lab-b: engine.arraygrowth.ns = [800, 1600] (this run: [200, 400])" in subtitle
    assert "WiredTiger engine lab" in subtitle and "engine.docsize" not in subtitle


def _engine_table(results: Path, study: str, table: str, rows: list[dict]) -> None:
    (results / study / "engine").mkdir(parents=True, exist_ok=True)
    pl.DataFrame(rows).write_csv(results / study / "engine" / f"{table}.csv")


def test_engine_overlay_of_appversions_and_docsize_draws_each_run_and_the_published(tmp_path):
    from costlab.report.compare import engine_overlay_spec

    trees = [no_server_tree(tmp_path / name, [200], ["reproduced"]) for name in ("a", "b")]
    for scale, results in zip((1.0, 2.0), trees):
        _engine_table(results, "appversions", "storage", [
            {"version": v, "storage_bytes_per_event": 10.0 * scale, "index_bytes_per_event": 5.0 * scale,
             "published_storage_bytes_per_event": 9.0, "published_index_bytes_per_event": p}
            for v, p in (("appV1", 4.0), ("appV6R4", None))])
        _engine_table(results, "docsize", "cache_reads", [
            {"run": run, "size_kb": 64, "shape": "projection", "bytes_read_into_cache_median": 1000.0 * scale}
            for run in ("small_cache", "random_windows")])
    from test_figures_legible import legend_mismatches

    for results in trees:   # runs of the three studies (no job records: their manifest says what built them)
        record = json.loads((results / "run.json").read_text())
        record["config"]["studies"] = ["arraygrowth", "appversions", "docsize"]
        (results / "run.json").write_text(json.dumps(record))
    runs = load_runs(trees[0], [trees[1]])
    spec = engine_overlay_spec("appversions", runs)
    assert legend_mismatches(spec) == []  # runs' hollow circles and the published hollow diamonds, one legend
    values = next(iter(spec["datasets"].values()))
    # storage + index per event; the published appV6R4 has no index bytes: not drawn (not as 9 + 0)
    assert {(v["run"], v["x"], v["y"]) for v in values} == {
        (runs[0].label, "appV1", 15.0), (runs[0].label, "appV6R4", 15.0), (runs[1].label, "appV1", 30.0),
        (runs[1].label, "appV6R4", 30.0), ("published", "appV1", 13.0)}
    spec = engine_overlay_spec("docsize", runs)
    values = next(iter(spec["datasets"].values()))
    assert {(v["run"], v["y"]) for v in values if v["run"] != "published"} == {(runs[0].label, 1000.0),
                                                                             (runs[1].label, 2000.0)}
    published = {(v["facet"], v["x"]) for v in values if v["run"] == "published"}
    assert ("projection", 64.0) in published and all(x in {1.0, 4.0, 16.0, 64.0} for _, x in published)
    subtitle = " ".join(spec["title"]["subtitle"])
    assert "the runs' engine settings are the same" in subtitle and "overlap" not in subtitle
    # the same engine values in two runs: the line drawn last hides the other, so the subtitle says so
    import shutil
    shutil.copytree(trees[0].parent, tmp_path / "copy")
    same = load_runs(trees[0], [tmp_path / "copy"])
    subtitle = " ".join(engine_overlay_spec("docsize", same)["title"]["subtitle"])
    assert f"{same[1].name} and this run overlap at 64 (projection)" in subtitle
    assert engine_overlay_spec("docsize", runs[:1]) is None   # one run: nothing to compare


def _repeats_tree(root: Path, rows: list[tuple[str, float, list[float] | None]], older: bool = False,
                  published: float = 1.2, band: tuple[float, float] = (1.08, 1.32), unit: str = "repeats",
                  statistic: str = "median") -> Path:
    """A no-server tree whose appversions engine verdicts carry each repeat's value (`samples`), the
    interval's words and the rule's band (`band_low`, `band_high`: by default ratio within 0.9-1.1 of the
    published 1.2), as the engine lab writes them with engine.appversions.repeats > 1 (None: one repeat;
    older: no samples, interval or band columns at all, as a tree from before repeats)."""
    results = no_server_tree(root, [200], ["reproduced"])
    records = []
    for finding, value, samples in rows:
        record = dict(zip(PVR_COLUMNS, (finding, "storageSize / size", "ratio", published, value,
                                        value / published, "reproduced", "engine")))
        if not older:
            record["samples"] = None if samples is None else "; ".join(map(repr, samples))
            record["interval"] = ("one run: no interval" if samples is None else
                                  f"a to b at 93.8% ({statistic} of {len(samples)} {unit}, order statistics)")
            record["band_low"], record["band_high"] = band
        records.append(record)
    _engine_table(results, "appversions", "published_vs_engine", records)
    return results


def test_compare_holds_the_ratio_of_two_runs_to_the_findings_tolerance(tmp_path):
    # apart: 5 repeats 1.00-1.04 against 1.30-1.34; the 25 ratios other / this run from 1.30 / 1.04 = 1.25
    # to 1.34 / 1.00 = 1.34; the 95 % Moses interval drops the 2 smallest and 2 largest (P(U <= 2) = 4 / 252
    # = 0.016 a side: coverage 1 - 8 / 252 = 96.8 %): the 3rd smallest 1.30 / 1.03 = 1.262 (after 1.25 and
    # 1.31 / 1.04 = 1.2596), the 3rd largest 1.34 / 1.01 = 1.327 (after 1.34 and 1.33): wholly above the
    # tolerance 0.9-1.1 (the band 1.08-1.32 over the published 1.2): changed. Overlapping: 1.0-1.4 by 0.1
    # against 1.05-1.45 by 0.1, ratios 0.75-1.45: cannot tell. The p-values of any difference, exact
    # (2 / 252 = 0.0079 and 2 x 87 / 252 = 0.69, no ties), adjusted together (Benjamini-Hochberg over 2 rows:
    # 0.0079 x 2 / 1 = 0.016, 0.69 x 2 / 2 = 0.69)
    here = _repeats_tree(tmp_path / "here", [
        ("appV1 apart", 1.02, [1.00, 1.01, 1.02, 1.03, 1.04]),
        ("appV6R3 overlapping", 1.2, [1.0, 1.1, 1.2, 1.3, 1.4])])
    other = _repeats_tree(tmp_path / "lab-b", [
        ("appV1 apart", 1.32, [1.30, 1.31, 1.32, 1.33, 1.34]),
        ("appV6R3 overlapping", 1.25, [1.05, 1.15, 1.25, 1.35, 1.45])])
    runs = load_runs(here, [other])
    merged = merged_published("appversions", runs, table=Path("engine") / "published_vs_engine.csv")
    column = f"difference: this run vs {runs[1].label}"
    said = dict(zip(merged["finding"].to_list(), merged[column].to_list()))
    apart, overlapping = said["appV1 apart"], said["appV6R3 overlapping"]
    assert apart.startswith("changed: ratio ") and apart.endswith(
        "(1.262 to 1.327 at 96.8%; tolerance 0.9 to 1.1), 5 vs 5 repeats; any difference p = 0.016 "
        "(adjusted over 2 rows)"), apart
    assert overlapping.startswith("cannot tell: ratio ") and overlapping.endswith(
        "5 vs 5 repeats; any difference p = 0.69 (adjusted over 2 rows)"), overlapping
    # single runs, and a tree from before repeats (no samples column): read as one run each, never "differs"
    one = _repeats_tree(tmp_path / "one", [("appV1 apart", 1.02, None)])
    older = _repeats_tree(tmp_path / "older", [("appV1 apart", 1.32, None)], older=True)
    engine = Path("engine") / "published_vs_engine.csv"
    merged = merged_published("appversions", load_runs(one, [older]), table=engine)
    assert merged.columns[-2].startswith("difference: this run vs older")
    assert merged[merged.columns[-2]].to_list() == ["one run each: not tested"]
    # and the page's compared engine table carries the column
    from test_report import smoke_config

    config = smoke_config(studies=["appversions"])
    build_report(here, here / "report.html", config, compare_with=[other.parent])
    page = (here / "report.html").read_text()
    assert f"<th>{column}</th>" in page
    assert "(1.262 to 1.327 at 96.8%; tolerance 0.9 to 1.1), 5 vs 5 repeats" in page


def test_compare_calls_a_small_shift_same_at_many_queries_and_twice_the_tolerance_changed(tmp_path):
    """Issue 45's two constructed cases. 1,000 v 1,000 queries: this run's spread evenly over 95-105, the
    other's the same x 1.03 (a 3 % shift), the tolerance +-20 % (band 80-120 of the published 100): the
    ratio's interval lies near 1.03, inside 0.8-1.2: same within tolerance (where the old test of any
    difference called it "differs"). 5 v 5 repeats 1.00-1.04 against x 1.4 (twice the +-20 % tolerance):
    every one of the 25 ratios 1.4 x 1.00 / 1.04 = 1.346 or more, above 1.2: changed."""
    queries = [95 + 10 * i / 999 for i in range(1000)]
    here = _repeats_tree(tmp_path / "here", [("docsize cell", 100.0, queries)], published=100.0,
                         band=(80.0, 120.0), unit="queries", statistic="mean")
    other = _repeats_tree(tmp_path / "other", [("docsize cell", 103.0, [q * 1.03 for q in queries])],
                          published=100.0, band=(80.0, 120.0), unit="queries", statistic="mean")
    runs = load_runs(here, [other])
    merged = merged_published("appversions", runs, table=Path("engine") / "published_vs_engine.csv")
    said = merged[f"difference: this run vs {runs[1].label}"].to_list()[0]
    assert said.startswith("same within tolerance: ratio 1.03 (") and "tolerance 0.8 to 1.2" in said, said
    assert "1,000 vs 1,000 queries of one run each" in said, said
    repeats = [1.00, 1.01, 1.02, 1.03, 1.04]
    here = _repeats_tree(tmp_path / "here5", [("appV1", 1.02, repeats)], band=(0.96, 1.44))
    other = _repeats_tree(tmp_path / "other5", [("appV1", 1.428, [r * 1.4 for r in repeats])],
                          band=(0.96, 1.44))
    runs = load_runs(here, [other])
    merged = merged_published("appversions", runs, table=Path("engine") / "published_vs_engine.csv")
    said = merged[f"difference: this run vs {runs[1].label}"].to_list()[0]
    assert said.startswith("changed: ratio 1.4 (") and "tolerance 0.8 to 1.2), 5 vs 5 repeats" in said, said


def _recorded_job(
    folder: Path, study: str, config: dict, name: str, ended: str, engine: bool = False
) -> None:
    """A job's provenance as a job writes it (costlab.config.run_facts, with_run_facts): its study's keys."""
    from datetime import datetime

    from costlab.config import run_facts
    from costlab.server.provenance import with_run_facts

    record = (
        {"job": name, "server_kind": "engine", "server": {"wiredtiger_version": "11.2.0"}}
        if engine
        else {"job": name, "server_kind": "mongod", "server": {"version": "6.0.5"}, "host": {"hostname": "h"}}
    )
    facts = run_facts(config, study)
    # the hash collect_provenance (a server job) or engine_provenance (an engine-lab job) adds
    record |= {"engine_config_hash": facts.engine_config_hash} if engine else {
        "study": study, "study_config_hash": facts.study_config_hash}
    with_run_facts(record, facts, datetime.fromisoformat(ended), datetime.fromisoformat(ended))
    path = (
        folder / study / ("engine" if engine else "provenance") / f"{'provenance' if engine else name}.json"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


def test_compare_reads_each_studys_config_from_its_provenance_not_the_trees_last_run_json(tmp_path):
    """Issue 47: a later arraygrowth-only run rewrote runA's run.json; compare named its keys for every study
    ("appversions.events_per_year = 200000 (this run: 20000)"), all false. Each study's own jobs say what
    its results were built with: only the one true difference is named, and none where there is none."""
    from test_report import smoke_config

    built = smoke_config(studies=["flatnested", "arraygrowth"])                  # this run's config
    other_scale = smoke_config(studies=["flatnested", "arraygrowth"], flatnested={"documents": 800})
    later = smoke_config(studies=["arraygrowth"], flatnested={"documents": 123})  # runA's last run.json
    here, there = tmp_path / "here" / "results", tmp_path / "runA" / "results"
    for folder, config, manifest_config in ((here, built, built), (there, other_scale, later)):
        _recorded_job(folder, "flatnested", config, "measure_flat_10", "2026-12-06T01:00:00+00:00")
        _recorded_job(folder, "arraygrowth", built, "arraygrowth_engine", "2026-12-06T02:00:00+00:00",
                      engine=True)
        (folder / "run.json").write_text(json.dumps(manifest(manifest_config, "binary")))
    runs = load_runs(here, [there.parent])
    assert differences("flatnested", runs[0], runs[1]) == ["flatnested.documents = 800 (this run: 500)"]
    assert differences("arraygrowth", runs[0], runs[1]) == []
    said = " ".join(notes("flatnested", runs) + notes("arraygrowth", runs))
    assert "123" not in said and "flatnested.documents = 800 (this run: 500)" in said
    assert not any("another scale" in n or "other settings" in n for n in notes("arraygrowth", runs))
    # the provenance holds the study's keys, the server's without a password, never another study's
    record = json.loads((there / "flatnested" / "provenance" / "measure_flat_10.json").read_text())
    assert set(record["study_config"]) == {"flatnested", "server", "engine"}
    assert record["study_config"]["flatnested"]["documents"] == 800
    assert not set(record["study_config"]["engine"]) & {"appversions", "docsize", "arraygrowth"}


def test_an_older_record_without_the_config_uses_run_json_only_where_its_hash_says_so(tmp_path):
    from test_report import smoke_config

    built = smoke_config(studies=["flatnested"], flatnested={"documents": 800})
    here = tmp_path / "here" / "results"
    _recorded_job(here, "flatnested", smoke_config(studies=["flatnested"]), "m", "2026-12-06T01:00:00+00:00")
    (here / "run.json").write_text(json.dumps(manifest(smoke_config(studies=["flatnested"]), "binary")))
    for name, manifest_config in (("same", built), ("later", smoke_config(flatnested={"documents": 90}))):
        there = tmp_path / name / "results"
        _recorded_job(there, "flatnested", built, "m", "2026-12-06T01:00:00+00:00")
        path = there / "flatnested" / "provenance" / "m.json"
        record = json.loads(path.read_text())
        del record["study_config"]   # as an older costlab wrote it: the hash of the study's keys alone
        path.write_text(json.dumps(record))
        (there / "run.json").write_text(json.dumps(manifest(manifest_config, "binary")))
    runs = load_runs(here, [tmp_path / "same", tmp_path / "later"])
    assert differences("flatnested", runs[0], runs[1]) == ["flatnested.documents = 800 (this run: 500)"]
    assert differences("flatnested", runs[0], runs[2]) == []  # its run.json is another run's: not compared
    assert any(
        n.startswith("later: its flatnested config is not recorded") for n in notes("flatnested", runs)
    )


@pytest.mark.workflow
def test_a_copied_tree_and_one_study_rerun_with_another_config_name_only_the_true_difference(tmp_path):
    """Issue 47's story through Snakemake, with no server: docsize and arraygrowth built at the smoke scale;
    then an arraygrowth-only run at other settings (its run.json names another docsize scale, a config that
    built nothing of docsize); that tree copied as runA; then both studies at the smoke scale again, compared
    with runA. Only arraygrowth's engine N differs between what built each; docsize was built alike."""
    import shutil

    from workflow import run_workflow

    none = "{backend: none}"
    both = "studies=[docsize, arraygrowth]"
    first = run_workflow(tmp_path, none, ("all",), config=(both,))
    assert first.returncode == 0, first.stderr[-3000:]
    later = run_workflow(
        tmp_path,
        none,
        ("all",),
        config=(
            "studies=[arraygrowth]",
            "docsize={docs_per_collection: 4000}",
            "engine={arraygrowth: {ns: [200, 400]}}",
        ),
    )
    assert later.returncode == 0, later.stderr[-3000:]
    run_a = tmp_path / "runA" / "results"
    shutil.copytree(tmp_path / "results", run_a, ignore=shutil.ignore_patterns("data", "logs", "report.html"))
    assert json.loads((run_a / "run.json").read_text())["config"]["docsize"]["docs_per_collection"] == 4000
    again = run_workflow(tmp_path, none, ("all",), config=(both, f"compare={{with: ['{run_a}']}}"))
    assert again.returncode == 0, again.stderr[-3000:]
    page = (tmp_path / "results" / "report.html").read_text()

    def notes_of(study: str) -> str:
        section = re.search(rf'<section class="study" id="study-{study}".*?</section>', page, re.S).group(0)
        found = re.search(r'<div class="compare-notes">(.*?)</div>', section, re.S)
        return found.group(1) if found else ""

    docsize, arraygrowth = notes_of("docsize"), notes_of("arraygrowth")
    assert "Runs side by side" in docsize and "4000" not in docsize
    assert "another scale" not in docsize and "other settings" not in docsize, docsize
    assert ("runA&#39;s engine lab ran with other settings: engine.arraygrowth.ns = [200, 400] "
            "(this run: [200, 400, 800])") in arraygrowth, arraygrowth
    assert "another scale" not in arraygrowth and "docsize" not in arraygrowth, arraygrowth
    # the engine-lab figure's subtitle says the same, and only that
    spec = json.loads(re.search(r'data-figure="fig-arraygrowth-engine_compare_runs">(.*?)</script>', page,
                                re.S).group(1))
    subtitle = " ".join(spec["title"]["subtitle"])
    assert (
        "settings that differ: runA: engine.arraygrowth.ns = [200, 400] (this run: [200, 400, 800])"
        in subtitle
    )
    assert "docs_per_collection" not in subtitle
