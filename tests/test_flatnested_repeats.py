"""flatnested repeats on a server (issue #36): each shape's measuring job once per repeat, and the speed
finding's values the median over the repeats, judged by their interval. Raw frames built by hand: one
time per query, the same for every query of a repeat, so each repeat's mean and median are that time."""
from __future__ import annotations

import polars as pl
import pytest

from costlab.flatnested.run import RAW_SCHEMA
from costlab.flatnested.tables import (
    comparison_table,
    published_vs_reproduced,
    repeat_comparisons,
    timing_summary,
)

PUBLISHED = "resources/published/flatnested_timings.csv"
SAMPLE_SIZES = "resources/published/flatnested_sample_sizes.csv"
SIZES = pl.DataFrame({"shape": ["flat_10", "structured_2x5"], "data_bytes": [1000, 800],
                      "avg_doc_bytes": [10.0, 8.0]})


def _raw(structured_ms: list[float], kind: str = "mongod") -> pl.DataFrame:
    """flat_10 at 10 ms a query in every repeat, structured_2x5 at structured_ms[r - 1] in repeat r; 4 queries
    each; 10,000 documents (the published count: the times are judged too)."""
    rows = []
    for repeat, structured in enumerate(structured_ms, start=1):
        for shape, layout, ms in (("flat_10", "flat", 10.0), ("structured_2x5", "structured", structured)):
            rows += [{c: None for c in RAW_SCHEMA} | {
                "shape": shape, "layout": layout, "fields": 10, "groups": 2, "documents": 10_000, "run": run,
                "client_ms": ms, "docs_returned": 0, "docs_examined": 10_000, "server_data_bytes": 1000,
                "server_storage_bytes": 500, "storage_engine": "wiredTiger", "server_version": "8.0.0",
                "server_kind": kind, "repeat": repeat} for run in range(4)]
    return pl.DataFrame(rows, schema=RAW_SCHEMA)


def _speed(raw: pl.DataFrame, kind: str = "mongod") -> dict[str, dict]:
    published = pl.read_csv(PUBLISHED)
    comparison = comparison_table(timing_summary(raw), SIZES, published, kind)
    pvr = published_vs_reproduced(comparison, pl.read_csv(SAMPLE_SIZES),
                                  repeats=repeat_comparisons(raw, SIZES, published, kind))
    speed = pvr.filter(pl.col("finding").str.starts_with("structured is faster"))
    return {("improvement" if r["unit"] == "%" else r["metric"].split(",")[1].split(" (")[0].strip()): r
            for r in speed.iter_rows(named=True)}


def test_three_repeats_straddling_the_band_are_inconclusive():
    rows = _speed(_raw([7.5, 9.5, 11.0]))
    improvement = rows["improvement"]
    # (10 - s) / 10: 25, 5, -10 %; median 5, [min, max] = [-10, 25] at 1 - 2 x 0.5^3 = 75 %
    assert improvement["reproduced"] == pytest.approx(5.0)
    assert improvement["interval"] == "-10 to 25 at 75.0% (median of 3 repeats, order statistics)"
    # rule: improvement > 0; the structured medians' median 9.5 is below flat's 10, so the interval judges:
    # it straddles 0. The suggestion: MAD of (25, 5, -10) about 5 is 15, x 1.4826 x sqrt(2 / 0.446) = 47; the
    # distance 5 less half the median's standard error 1.2533 x 47 / sqrt(3) = 34 is below 0: the truth may
    # sit on the edge, more than the cap of 50 repeats
    assert (improvement["verdict"], improvement["reason"]) == (
        "inconclusive", "the interval straddles the tolerance band; more than 50 repeats would be needed to "
        "decide it: the value sits close to the band's edge")
    # the times (per 100 queries): flat 1,000 in every repeat; structured 750, 950, 1,100 -> median 950
    assert rows["flat"]["reproduced"] == pytest.approx(1000.0)
    assert rows["flat"]["interval"] == "1000 to 1000: the same in all 3 repeats"
    assert rows["structured"]["reproduced"] == pytest.approx(950.0)
    assert rows["structured"]["interval"] == "750 to 1100 at 75.0% (median of 3 repeats, order statistics)"
    assert {rows[k]["verdict"] for k in ("flat", "structured")} == {"inconclusive"}


def test_three_repeats_inside_the_band_reproduce():
    improvement = _speed(_raw([7.5, 8.0, 9.0]))["improvement"]
    # 25, 20, 10 %: median 20, [10, 25] wholly above 0
    assert (improvement["reproduced"], improvement["verdict"]) == (pytest.approx(20.0), "reproduced")
    assert improvement["interval"] == "10 to 25 at 75.0% (median of 3 repeats, order statistics)"


def test_one_repeat_is_one_run_and_the_stand_in_stays_the_stand_in():
    one = _speed(_raw([7.5]))["improvement"]
    assert (one["reproduced"], one["verdict"], one["interval"]) == (
        pytest.approx(25.0), "reproduced", "one run: no interval")
    stand_in = _speed(_raw([7.5, 9.5, 11.0], "stand-in"), "stand-in")["improvement"]
    assert (stand_in["verdict"], stand_in["reason"], stand_in["reproduced"]) == (
        "not comparable", "stand-in", pytest.approx(5.0))


@pytest.mark.workflow
def test_three_repeats_plan_three_measuring_jobs_per_shape_and_one_load(tmp_path):
    from workflow import external, planned, run_workflow

    extra = tmp_path / "repeats.yaml"
    extra.write_text("flatnested:\n  repeats: 3\n")
    # config/smoke.yaml: flat_fields 10 and 25 -> 4 shapes
    result = run_workflow(tmp_path, external("mongodb://127.0.0.1:9"),
                          ("-n", "results/flatnested/tables/published_vs_reproduced.csv"),
                          configfiles=("config/smoke.yaml", str(extra)))
    assert result.returncode == 0, result.stderr[-3000:]
    counts = planned(result)
    assert (counts["flatnested_load"], counts["flatnested_measure"]) == (4, 12)
    assert "results/flatnested/raw/structured_5x5__rep3.parquet" in result.stdout
