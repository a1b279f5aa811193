"""End times with a time of day: each version's day rule, and where the versions disagree (conformance.py)."""
from __future__ import annotations

from datetime import datetime, timezone

import polars as pl
import pytest

from costlab.appversions.conformance import midday_findings
from costlab.appversions.correctness import MIDDAY_SCHEMA, sample_midday_requests
from costlab.appversions.events import STATUS_DTYPE, STATUSES, generate_events
from costlab.appversions.model import expected_reports

UTC = timezone.utc
K1 = "0" * 63 + "1"
D5, D16 = datetime(2022, 6, 5, tzinfo=UTC), datetime(2022, 6, 16, tzinfo=UTC)
EVENTS = pl.DataFrame(
    {"key": [K1] * 4, "date": [D5, D5, D5, D16], "status": ["approved", "approved", "pending", "rejected"]},
    schema={"key": pl.Utf8, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE},
)


def test_day_rules_count_other_days_at_a_time_of_day():
    noon = datetime(2022, 6, 16, 12, tzinfo=UTC)
    # dates: [2021-06-16 12:00, 2022-06-16 12:00) holds 16 June's event (at 00:00);
    # day ids: [20210616, 20220616) does not.
    assert expected_reports(EVENTS, K1, noon, "dates")[0] == {
        "window_years": 1, "approved": 2, "noFunds": 0, "pending": 1, "rejected": 1}
    assert expected_reports(EVENTS, K1, noon, "day_ids")[0]["rejected"] == 0
    # a start at a time of day: 5 June's events are out by dates, in by day ids
    start_noon = datetime(2023, 6, 5, 12, tzinfo=UTC)
    assert expected_reports(EVENTS, K1, start_noon, "dates")[0]["approved"] == 0
    assert expected_reports(EVENTS, K1, start_noon, "day_ids")[0]["approved"] == 2
    # at midnight both rules are the one answer
    assert expected_reports(EVENTS, K1, D16, "dates") == expected_reports(EVENTS, K1, D16, "day_ids")
    with pytest.raises(ValueError, match="invalid day rule 'hours'; allowed: dates, day_ids"):
        expected_reports(EVENTS, K1, D16, "hours")


def test_midday_samples_have_a_time_of_day_and_part_the_rules():
    events = generate_events(3_650, 4)
    samples = sample_midday_requests(events, 8, seed=2)
    assert len(samples) == 8 and all(end.timestamp() % 86_400 != 0 for _, end in samples)
    assert all(
        datetime(2011, 1, 1, tzinfo=UTC) <= end < datetime(2020, 1, 1, tzinfo=UTC) for _, end in samples
    )
    # the even samples end on a day holding one of the key's events: there the two rules part
    parted = [expected_reports(events, key, end, "dates") != expected_reports(events, key, end, "day_ids")
              for key, end in samples[::2]]
    assert all(parted)
    assert sample_midday_requests(events, 0, seed=2) == []


def _rows(version: str, rule: str, counts: dict[tuple[str, int], int], as_rule: bool = True) -> list[dict]:
    return [{"version": version, "day_rule": rule, "key": key, "end": datetime(2015, 3, 3, 9, tzinfo=UTC),
             "window_years": years, **{s: (approved if s == "approved" else 0) for s in STATUSES},
             "as_day_rule": as_rule, "server_kind": "stand-in"}
            for (key, years), approved in counts.items()]


def _frame(*parts: list[dict]) -> pl.DataFrame:
    return pl.DataFrame([r for part in parts for r in part],
                        schema={**MIDDAY_SCHEMA, "server_kind": pl.Utf8})


def test_cross_version_finding_records_where_the_rules_part():
    dates = {("A", 1): 5450, ("A", 3): 9000, ("B", 1): 7}
    day_ids = {("A", 1): 5442, ("A", 3): 8990, ("B", 1): 7}
    rows = midday_findings(_frame(_rows("appV1", "dates", dates), _rows("appV5R3", "dates", dates),
                                  _rows("appV4", "day_ids", day_ids), _rows("appV6R3", "day_ids", day_ids)))
    cross = rows[-1]
    assert cross.finding.startswith("the versions disagree at end times with a time of day: appV4, appV6R3 (")
    assert cross.reproduced == pytest.approx(0.5) and cross.verdict == "reproduced"  # key A parts, B not
    assert [r.verdict for r in rows[:-1]] == ["reproduced"] * 4


def test_a_version_off_its_rule_or_its_group_is_not_reproduced():
    dates = {("A", 1): 5450}
    off = midday_findings(_frame(_rows("appV1", "dates", dates), _rows("appV2", "dates", {("A", 1): 5449}),
                                 _rows("appV4", "day_ids", {("A", 1): 5442})))
    assert off[-1].verdict == "not reproduced"   # appV1 and appV2 compare dates but differ
    wrong = midday_findings(_frame(_rows("appV1", "dates", dates, as_rule=False),
                                   _rows("appV4", "day_ids", {("A", 1): 5442})))
    assert wrong[0].verdict == "not reproduced" and wrong[0].reproduced == 0.0
    one_rule = midday_findings(_frame(_rows("appV4", "day_ids", dates), _rows("appV6R3", "day_ids", dates)))
    assert one_rule[-1].text == "not comparable (only appV4, appV6R3 loaded, all of one day rule)"
