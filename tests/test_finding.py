"""The one verdict row type: a Verdict member with its reason, one rule for a missing value, one schema."""
import math

import polars as pl
import pytest

from costlab.finding import COLUMNS, Finding, conform_table, judged, verdict_table
from costlab.verdicts import NOT_MEASURED, OTHER, Kind, Verdict, between, verdict_class


def test_a_missing_value_is_not_run_whatever_the_rule():
    rule = between(1.7, 2.3, "k")
    for missing in (None, math.nan):
        row = judged("grows quadratically", "k", "1", 2.0, missing, rule, server_kind="engine")
        assert (row.verdict, row.reason, row.reproduced, row.ratio) == (
            Verdict.NOT_RUN,
            NOT_MEASURED,
            None,
            None,
        )
    held = judged("grows quadratically", "k", "1", 2.0, 2.1, rule, server_kind="engine")
    assert (held.verdict, held.reason, held.tolerance) == (Verdict.REPRODUCED, None, "k in [1.7, 2.3]")
    assert held.ratio == pytest.approx(1.05)   # 2.1 / 2.0
    missed = judged("grows quadratically", "k", "1", 2.0, 1.0, rule, server_kind="engine")
    assert missed.verdict is Verdict.NOT_REPRODUCED


def test_a_verdict_with_its_reason_reads_as_one_phrase():
    row = judged("f", "m", "B", 10.0, 12.0, between(0, 100), server_kind="stand-in")
    assert row.but(Verdict.NOT_COMPARABLE, "stand-in").text == "not comparable (stand-in)"
    assert row.text == "reproduced"


def test_a_verdict_or_kind_that_is_not_a_member_is_refused():
    with pytest.raises(
        ValueError, match=r"'not comparable \(stand-in\)' is not one of reproduced, not reproduced"
    ):
        Finding("f", None, None, None, None, "not comparable (stand-in)")
    with pytest.raises(
        ValueError, match="kind 'variant' is not one of published, costlab variant, user variant"
    ):
        Finding("f", None, None, None, None, Verdict.NOT_RUN, kind="variant")
    frame = pl.DataFrame(
        {
            "finding": ["f"],
            "metric": ["m"],
            "unit": ["B"],
            "published": [1.0],
            "reproduced": [1.0],
            "ratio": [1.0],
            "tolerance": ["t"],
            "verdict": ["not measured"],
            "server_kind": ["mongod"],
        }
    )
    with pytest.raises(
        ValueError,
        match="'not measured'; allowed: reproduced, not reproduced, inconclusive, not comparable, not run",
    ):
        conform_table(frame)
    conformed = conform_table(frame.with_columns(pl.lit("not run").alias("verdict")), Kind.COSTLAB_VARIANT)
    assert conformed.columns == COLUMNS and conformed["kind"].to_list() == ["costlab variant"]


def test_counting_reads_the_member_never_the_words():
    assert [
        verdict_class(v)
        for v in ("not run", "not comparable", "not comparable (stand-in)", "not executed", None)
    ] == ["not run", "not comparable", OTHER, OTHER, OTHER]


def test_a_verdict_table_has_the_one_schema_and_rounds_on_request():
    rows = [judged("f", "m", "B", 3.0, 1.0, between(0, 1), server_kind="engine", kind=Kind.COSTLAB_VARIANT)]
    table = verdict_table(rows, rounded=True)
    assert table.columns == COLUMNS
    row = table.row(0, named=True)
    assert (row["verdict"], row["kind"], row["ratio"]) == (
        "reproduced",
        "costlab variant",
        0.333,
    )  # 1/3, 3 figures


def test_compare_shows_each_runs_verdict_with_its_reason():
    from costlab.report.compare import _verdict_words

    frame = pl.DataFrame({"verdict": ["not comparable", "reproduced"], "reason": ["stand-in", None]})
    assert frame.select(_verdict_words(frame))["verdict"].to_list() == [
        "not comparable (stand-in)",
        "reproduced",
    ]
