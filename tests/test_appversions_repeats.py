"""appversions repeats on a server (issue #36 item 1, `appversions.repeats`): each load-tested version
loaded and load tested once per repeat (a load test writes into the collection it measures, so every repeat
reloads first), and each load-test finding the median over the repeats with its interval. Server-free except
the plan of the workflow (snakemake -n)."""
from __future__ import annotations

import re

import polars as pl
import pytest

from costlab.appversions.tables import loadtest_findings, loadtest_findings_over_repeats
from costlab.config import ROOT
from costlab.repeats import SERVER_REPEATS

FACTS = ROOT / "resources" / "published" / "appversions_loadtest_facts.csv"
REDUCTION = "bulk_upsert peak latency reduction, phase {}"
SHARE = "bulk_upsert share of steps at target"


def _steps(version: str, server_kind: str, met: list[bool], call_ms_max: list[float]) -> pl.DataFrame:
    """One step (step 1) of Bulk Upserts in each of the 4 phases."""
    return pl.DataFrame({"version": [version] * 4, "kind": ["upsert"] * 4, "phase": [1, 2, 3, 4],
                         "step": [1] * 4, "met": met, "call_ms_max": call_ms_max, "achieved_rate": [1.0] * 4,
                         "target_rate": [1.0] * 4, "server_kind": [server_kind] * 4})


# appV6R3's peak Bulk Upsert call is 100, 200, 300, 400 ms in every repeat; appV6R4's per repeat below.
# Reduction = (1 - appV6R4 / appV6R3) x 100, per repeat:
#   phase 1: 50, 110, 70 ms -> 50, -10, 30 %   median 30, [min, max] = [-10, 50]: straddles the band (> 0)
#   phase 2: 100, 150, 180 ms -> 50, 25, 10 %  median 25, [10, 50]: inside
#   phase 3: 330, 360, 390 ms -> -10, -20, -30 % median -20, [-30, -10]: outside
# appV6R4's steps at target: 4/4, 3/4, 4/4 -> shares 1, 0.75, 1: median 1 (its rule has no band: the median
# judged, "at least 0.999" -> reproduced). 3 repeats: the interval is [min, max] at 1 - 2 x 0.5^3 = 75 %.
V6R4 = [([True] * 4, [50.0, 100.0, 330.0, 200.0]),
        ([True, True, True, False], [110.0, 150.0, 360.0, 200.0]),
        ([True] * 4, [70.0, 180.0, 390.0, 200.0])]


def _repeats(server_kind: str = "mongod") -> list[pl.DataFrame]:
    return [pl.concat([_steps("appV6R3", server_kind, [True] * 4, [100.0, 200.0, 300.0, 400.0]),
                       _steps("appV6R4", server_kind, met, peaks)]) for met, peaks in V6R4]


def _by_metric(rows, version: str = "appV6R4") -> dict:
    return {r.metric: r for r in rows if r.finding.startswith(f"{version}")}


def test_three_repeats_give_the_median_its_interval_and_the_verdict():
    rows = _by_metric(loadtest_findings_over_repeats(_repeats(), pl.read_csv(FACTS)))
    one, two, three = (rows[REDUCTION.format(p)] for p in (1, 2, 3))
    assert one.reproduced == pytest.approx(30.0) and one.verdict == "inconclusive"
    assert one.interval == "-10 to 50 at 75.0% (median of 3 repeats, order statistics)"
    assert "straddles the tolerance band" in one.reason
    assert two.reproduced == pytest.approx(25.0) and two.verdict == "reproduced"
    assert two.interval == "10 to 50 at 75.0% (median of 3 repeats, order statistics)"
    assert three.reproduced == pytest.approx(-20.0) and three.verdict == "not reproduced"
    assert three.interval.startswith("-30 to -10 at 75.0%")
    share = rows[SHARE]
    assert (share.reproduced, share.verdict) == (1.0, "reproduced")
    assert share.interval.startswith("0.75 to 1 at 75.0%")


def test_the_stand_ins_repeats_stay_the_stand_ins():
    rows = _by_metric(loadtest_findings_over_repeats(_repeats("stand-in"), pl.read_csv(FACTS)))
    two = rows[REDUCTION.format(2)]
    assert (two.verdict, two.reason, two.server_kind) == ("not comparable", "stand-in", "stand-in")
    assert two.reproduced == pytest.approx(25.0) and two.interval.startswith("10 to 50 at 75.0%")


def test_one_repeat_gives_todays_rows_and_says_one_run():
    facts = pl.read_csv(FACTS)
    steps = _repeats()[0]
    today = loadtest_findings(steps, facts)
    rows = loadtest_findings_over_repeats([steps], facts)
    assert [(r.finding, r.metric, r.reproduced, r.verdict, r.reason) for r in rows] == [
        (r.finding, r.metric, r.reproduced, r.verdict, r.reason) for r in today]
    # phase 1 of repeat 1: (1 - 50 / 100) x 100 = 50 % lower, above 0: reproduced
    first = _by_metric(rows)[REDUCTION.format(1)]
    assert (first.reproduced, first.verdict, first.interval) == (50.0, "reproduced", "one run: no interval")
    # a published number no rule judges has no value and no interval
    assert all(r.interval is None for r in rows if r.reproduced is None)


def test_repeat_names_and_paths():
    assert SERVER_REPEATS.split_name("loadtest_appV6R3__rep2") == ("loadtest_appV6R3", 2)
    assert SERVER_REPEATS.split_name("loadtest_appV6R3") == ("loadtest_appV6R3", 1)
    assert SERVER_REPEATS.split_name("x__rep1") == ("x__rep1", 1)   # repeat 1 has no suffix
    assert [SERVER_REPEATS.previous(w) for w in ("", "__rep2", "__rep3")] == [None, "", "__rep2"]
    paths = ["raw/lt_appV6R3.parquet", "raw/lt_appV6R4__rep2.parquet", "raw/lt_appV6R4.parquet",
             "raw/lt_appV6R3__rep2.parquet"]
    assert SERVER_REPEATS.paths_by_repeat(paths) == [["raw/lt_appV6R3.parquet", "raw/lt_appV6R4.parquet"],
                                                     ["raw/lt_appV6R4__rep2.parquet",
                                                      "raw/lt_appV6R3__rep2.parquet"]]


def test_repeats_config_and_the_cluster():
    from costlab.appversions.params import LoadParams, LoadtestParams, TablesParams
    from costlab.cluster import measuring_job_counts
    from costlab.config import load_config, study_config_hash

    one = load_config(ROOT / "config" / "smoke.yaml")
    three = load_config(ROOT / "config" / "smoke.yaml", overrides={"appversions": {"repeats": 3}})
    assert one["appversions"]["repeats"] == 1   # the schema's default
    # smoke: 3 loaded versions, 2 of them load tested: 3 + 2 x 2 later repeats' loads, 2 x 3 load tests
    assert measuring_job_counts(one)["appversions_load"] == 3
    assert measuring_job_counts(three)["appversions_load"] == 7
    assert measuring_job_counts(three)["appversions_loadtest"] == 6
    assert measuring_job_counts(three)["appversions_correctness"] == 3
    for params in (LoadParams, LoadtestParams, TablesParams):   # more repeats rerun no job already run
        # (a load's `declaration` is a function of the job's version: the same one for any repeats)
        assert ({k: v for k, v in params.declare(one).items() if not callable(v)}
                == {k: v for k, v in params.declare(three).items() if not callable(v)})
    assert study_config_hash(one, "appversions") == study_config_hash(three, "appversions")
    with pytest.raises(Exception, match=r"appversions\.repeats") as error:
        load_config(ROOT / "config" / "smoke.yaml", overrides={"appversions": {"repeats": 0}})
    assert len(str(error.value).splitlines()) == 1


# --- the plan: snakemake -n, no server needed (the external URI is never dialled in a dry run) ----------

def _jobs(text: str, rule: str) -> list[tuple[str, str]]:
    """(input, output) lines of each planned job of `rule` in a dry run's output."""
    jobs = re.findall(rf"rule {rule}:\n    input: (.*)\n    output: (.*)\n", text)
    assert jobs, text[-3000:]
    return jobs


@pytest.mark.workflow
def test_three_repeats_plan_three_loads_and_load_tests_each_after_the_previous_load_test(tmp_path):
    from workflow import external, planned, run_workflow

    extra = tmp_path / "repeats.yaml"
    extra.write_text("appversions:\n  repeats: 3\n  load_versions: [appV6R3, appV6R4]\n")
    result = run_workflow(tmp_path, external("mongodb://127.0.0.1:9"),
                          ("-n", "results/appversions/tables/published_vs_reproduced.csv"),
                          configfiles=("config/smoke.yaml", str(extra)))
    counts = planned(result)
    # 2 versions (smoke load tests appV6R3 and appV6R4) x 3 repeats; correctness once per version
    assert [counts[f"appversions_{rule}"] for rule in ("load", "loadtest", "correctness")] == [6, 6, 2]
    text = result.stdout + result.stderr
    loads = {re.search(r"provenance/load_(\w+?)\.json", output).group(1): inputs
             for inputs, output in _jobs(text, "appversions_load")}
    assert set(loads) == {f"{v}{rep}" for v in ("appV6R3", "appV6R4") for rep in ("", "__rep2", "__rep3")}
    for version in ("appV6R3", "appV6R4"):
        assert "loadtest_" not in loads[version]   # repeat 1: no load test before it
        # load r after load test r-1 of the same version (and no other)
        assert re.findall(r"raw/loadtest_(\w+)\.parquet", loads[f"{version}__rep2"]) == [version]
        assert re.findall(r"raw/loadtest_(\w+)\.parquet", loads[f"{version}__rep3"]) == [f"{version}__rep2"]
    tests = {re.search(r"raw/loadtest_(\w+?)\.parquet", output).group(1): inputs
             for inputs, output in _jobs(text, "appversions_loadtest")}
    assert "data/appV6R4__rep3" in tests["appV6R4__rep3"]
    assert "correctness_appV6R4.csv" in tests["appV6R4__rep3"]   # the one correctness check
    # the authors' driver runs once, on repeat 1's load: the reload of repeat 2 waits for it too
    extra.write_text("appversions:\n  repeats: 2\n  load_versions: [appV6R3]\n"
                     "  loadtest: {versions: [appV6R3], authors_driver: true}\n")
    authors = run_workflow(tmp_path, external("mongodb://127.0.0.1:9"),
                           ("-n", "results/appversions/provenance/load_appV6R3__rep2.json"),
                           configfiles=("config/smoke.yaml", str(extra)))
    assert planned(authors)["appversions_loadtest_authors"] == 1
    rep2 = [inputs for inputs, output in _jobs(authors.stdout + authors.stderr, "appversions_load")
            if "load_appV6R3__rep2.json" in output]
    assert re.findall(r"raw/(loadtest\w*)\.parquet", rep2[0]) == [
        "loadtest_appV6R3", "loadtest_authors_appV6R3"]
