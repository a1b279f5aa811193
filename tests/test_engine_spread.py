"""A verdict a scale cannot support is not given (issue #43): where identical engine runs at the configured
scale disagree about a verdict (the run-to-run spread kept in resources/engine_spread/), the finding is
inconclusive, "this scale is too small to decide", whatever this run gave; identical runs then agree."""
from __future__ import annotations

import pytest

from costlab.engine.spread import (
    Spread,
    read_spreads,
    scale_key,
    spread_path,
    undecided_reason,
    write_spreads,
)
from costlab.verdicts import between

BAND = between(0.225, 0.399, "storage / data")   # appV6R0's band in the issue
KEY = "engine.appversions.events_per_year"


def _spread(values, per_year, scale="s", storage=()):
    return Spread(scale, "appV6R0", "storage_over_data", tuple(values), tuple(storage), per_year)


def test_kept_runs_that_straddle_the_band_make_the_verdict_inconclusive():
    # the three runs: 49,152-61,440 B, 0.354-0.442 against [0.225, 0.399]
    spreads = {("s", "appV6R0", "storage_over_data"):
               _spread((0.354, 0.442, 0.398), 500, storage=(49152, 61440))}
    reason = undecided_reason(spreads, "s", "appV6R0", "storage_over_data", BAND, KEY)
    assert reason == ("this scale is too small to decide (runs vary by storage 49,152-61,440 B, ratio "
                      "0.354-0.442 in 3 identical runs); a larger engine.appversions.events_per_year would "
                      "(no larger scale measured here)")


def test_a_larger_measured_scale_whose_runs_agree_is_named():
    spreads = {("s", "appV6R0", "storage_over_data"): _spread((0.354, 0.442), 500),
               ("m", "appV6R0", "storage_over_data"): _spread((0.30, 0.31), 10000, scale="m"),
               ("l", "appV6R0", "storage_over_data"): _spread((0.30, 0.305), 50000, scale="l")}
    reason = undecided_reason(spreads, "s", "appV6R0", "storage_over_data", BAND, KEY)
    assert reason.endswith("engine.appversions.events_per_year: 10000 decides it (there: ratio 0.3-0.31 in 2 "
                           "identical runs)")


@pytest.mark.parametrize("values", [(0.30, 0.31, 0.35), (0.40, 0.45)])   # all inside; all outside
def test_kept_runs_that_agree_leave_the_point_verdict(values):
    spreads = {("s", "appV6R0", "storage_over_data"): _spread(values, 500)}
    assert undecided_reason(spreads, "s", "appV6R0", "storage_over_data", BAND, "k") is None
    assert undecided_reason(spreads, "another scale", "appV6R0", "storage_over_data", BAND, "k") is None


def test_spreads_are_kept_beside_other_scales(tmp_path):
    path = tmp_path / "spread.csv"
    row = {"scale": "a", "version": "appV6R0", "column": "storage_over_data", "runs": 2, "values": "0.3; 0.4",
           "storage_values": "49152; 61440", "events_per_year": 500, "measured_at": "t", "command": "c"}
    write_spreads([row], path)
    write_spreads([row | {"scale": "b", "values": "0.2; 0.25"}], path)
    kept = read_spreads(path)
    assert kept[("a", "appV6R0", "storage_over_data")].values == (0.3, 0.4)
    assert kept[("b", "appV6R0", "storage_over_data")].values == (0.2, 0.25)
    assert kept[("a", "appV6R0", "storage_over_data")].storage_values == (49152.0, 61440.0)


def test_the_smoke_scale_spread_is_kept_with_its_command():
    import csv

    with spread_path("appversions").open() as handle:
        rows = list(csv.DictReader(handle))
    smoke = [r for r in rows if r["events_per_year"] == "500"]
    assert {r["version"] for r in smoke} >= {"appV6R0", "appV6R3", "appV6R4", "appV6R4/appV6R3"}
    assert all(r["command"].startswith("python -m costlab.appversions.spread --configfile config/smoke.yaml")
               for r in smoke)
    assert all(int(r["runs"]) >= 3 for r in smoke)


@pytest.mark.workflow
def test_three_identical_smoke_scale_runs_give_the_same_verdicts(tmp_path):
    # the case: three identical runs of appV6R0 (and appV6R3/appV6R4 for the zstd ratio) at the
    # smoke scale; their verdicts, judged with the kept spread, are the same, and any that the kept runs
    # cannot decide reads inconclusive with its reason
    from costlab.appversions.engine import over_repeats_table, run_version_job, storage_table, verdicts
    from costlab.appversions.params import EngineVersionParams
    from costlab.config import ROOT, load_config, run_facts
    from costlab.engine.wt import wiredtiger_version
    from costlab.inputs import read_csv

    config = load_config(ROOT / "config" / "smoke.yaml")
    params, facts = EngineVersionParams.from_config(config), run_facts(config, "appversions")
    published = read_csv(ROOT / "resources" / "published" / "appversions_collection_stats.csv")
    spreads = read_spreads(spread_path("appversions"))
    tables, storages = [], []
    for run in range(3):
        rows = [run_version_job(params, facts, name, tmp_path / f"{name}_{run}.json")["row"]
                for name in ("appV6R0", "appV6R3", "appV6R4")]
        assert scale_key(rows[0]) in {key[0] for key in spreads}   # this scale's spread is kept
        storages.append(rows[0]["storage_bytes"])
        table = over_repeats_table(storage_table(rows, published, wiredtiger_version()))
        tables.append(verdicts(table, None, spreads).select("finding", "verdict", "reason").rows())
    assert tables[0] == tables[1] == tables[2], (storages, tables)
    for _finding, verdict, reason in tables[0]:
        if verdict == "inconclusive":
            assert reason.startswith("this scale is too small to decide (runs vary by "), reason
