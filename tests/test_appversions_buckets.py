"""Any bucket a layout file declares (costlab/appversions/buckets.py): the shipped week
(examples/variants/week.py) followed by the ids, the model, the statements, the engine lab and Get Reports;
a bucket that cannot work refused in one line. Expected documents are written out here from the ISO calendar
(datetime.isocalendar), never by the code under test."""
from __future__ import annotations

from datetime import date, datetime, timezone

import bson
import polars as pl
import pytest
from bson import Binary
from refusals import appversions_refusal

from costlab.appversions import registry, variants
from costlab.config import ConfigError, load_config

UTC = timezone.utc
WEEK_FILE = "examples/variants/week.py"
PUBLISHED = list(registry.PUBLISHED_NAMES)
LETTER = {"approved": "a", "noFunds": "n", "pending": "p", "rejected": "r"}


@pytest.fixture
def week_variant():
    """appV5R3 with a week bucket from the shipped file, registered for one test."""
    section = {"versions": ["appV5R3", "appV6R3", "appV5R3_week", "appV6R3_week"],
               "variants": {"appV5R3_week": {"base": "appV5R3", "bucket": "week", "layout_file": WEEK_FILE},
                            # the dynamic layout with YYYYMMDD names and the one-pipeline report
                            "appV6R3_week": {"base": "appV6R3", "bucket": "week", "layout_file": WEEK_FILE}}}
    load_config(overrides={"appversions": section})   # checked like any declaration
    variants.register_variants({"appversions": section})
    from costlab.appversions.versions import get_version

    yield get_version("appV5R3_week")
    variants.register_variants({"appversions": {"versions": PUBLISHED, "variants": {}}})
    variants.forget_layout_files()
    assert "week" not in registry.bucket_names()


@pytest.fixture(scope="module")
def events() -> pl.DataFrame:
    from costlab.appversions.events import generate_events

    return generate_events(300, 3)   # 3,000 events of 5 keys over 2010-2020


def _week_code(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"{year:04d}{week:02d}"


def _hand_built_week_documents(events: pl.DataFrame, code=_week_code) -> dict[bytes, bytes]:
    """appV5R3's documents by ISO week (or by `code`), written out here: `_id` = key bytes + YYYYWW read as
    hex, `items` one `{date, <letter>: count}` a day in first-event order."""
    docs: dict[bytes, dict[datetime, dict[str, int]]] = {}
    for key, day, status in events.iter_rows():
        counts = docs.setdefault(bytes.fromhex(key + code(day)), {}).setdefault(day, {})
        counts[LETTER[str(status)]] = counts.get(LETTER[str(status)], 0) + 1
    return {_id: bson.encode({"_id": Binary(_id, 0), "items": [{"date": d, **c} for d, c in days.items()]})
            for _id, days in docs.items()}


def test_the_week_bucket_codes_and_bounds():
    from costlab.appversions.buckets import bucket_named
    from costlab.appversions.ids import bucket_start, build_id, full_bucket_bounds, next_bucket

    variants.load_layout_file("w", WEEK_FILE)
    try:
        week = bucket_named("week")
        # 2020-12-31 is a Thursday of ISO week 53 of 2020; 2021-01-04 the Monday of week 1 of 2021
        assert week.code(date(2020, 12, 31)) == "202053" and week.code(date(2021, 1, 4)) == "202101"
        assert week.code_bytes == 3
        thursday = datetime(2020, 12, 31, 15, tzinfo=UTC)
        assert bucket_start(thursday, "week") == datetime(2020, 12, 28, tzinfo=UTC)
        assert next_bucket(thursday, "week") == datetime(2021, 1, 4, tzinfo=UTC)
        key = "AB" * 32
        assert build_id(key, thursday, "week") == bytes.fromhex(key + "202053")
        # whole weeks inside [Wed 2021-01-06, Wed 2021-01-27): weeks 2 (from Mon 11th) to 3 (to Sun 24th)
        first, last = full_bucket_bounds(key, datetime(2021, 1, 6, tzinfo=UTC),
                                         datetime(2021, 1, 27, tzinfo=UTC), "week")
        assert (first, last) == (bytes.fromhex(key + "202102"), bytes.fromhex(key + "202103"))
    finally:
        variants.forget_layout_files()


def test_a_week_variant_follows_the_bucket_everywhere(week_variant, events, tmp_path):
    from costlab.appversions.engine import measure_version, version_documents
    from costlab.appversions.events import iter_event_chunks, write_events
    from costlab.appversions.model import collection_stats
    from costlab.appversions.statements import update_statements

    by_hand = _hand_built_week_documents(events)
    weeks = {(k, _week_code(d)) for k, d, _ in events.iter_rows()}
    assert len(by_hand) == len(weeks)
    # the model: one document per key and ISO week, the hand-built documents' bytes
    stats = collection_stats(events, ["appV5R3", "appV5R3_week"]).row(1, named=True)
    assert stats["version"] == "appV5R3_week"
    assert (stats["documents"], stats["data_bytes"]) == (len(by_hand), sum(map(len, by_hand.values())))
    # the statements: each event's _id is its key and week
    for (key, day, _), statement in zip(events.head(20).iter_rows(), update_statements(week_variant, events)):
        assert bson.decode(statement.raw)["q"] == {"_id": bytes.fromhex(key + _week_code(day))}
    # the engine lab's final documents, and the documents its statements grow: the hand-built bytes
    built = {bytes(doc["_id"]): bson.encode(doc) for doc, _ in version_documents(week_variant, events)}
    assert built == by_hand
    path = tmp_path / "events.parquet"
    write_events(iter_event_chunks(300, 3), path)
    grown = measure_version("appV5R3_week", path, tmp_path / "wt", cache_mb=8, workers=1)
    assert (grown["documents"], grown["data_bytes"]) == (len(by_hand), sum(map(len, by_hand.values())))


def test_get_reports_on_week_documents_count_every_window(week_variant, events, server_uri):
    """Loaded into mongod by its own statements, the week variant's Get Reports give the events' own counts
    (model.expected_reports: the events filtered by date, no version logic) at ends inside a week and on
    one."""
    from pymongo import MongoClient

    from costlab.appversions.correctness import load_events
    from costlab.appversions.model import expected_reports

    client = MongoClient(server_uri)
    try:
        from costlab.appversions.versions import get_version

        db = client["costlab_test_week_bucket"]
        keys = events.group_by("key").len().sort("len", descending=True)["key"].to_list()
        for version in (week_variant, get_version("appV6R3_week")):
            collection = version.prepare_collection(db)
            load_events(collection, version, events)
            # ends on a Wednesday, a Monday (a week's first day), a year's first day (mid-week), a Sunday
            for key, end in ((keys[0], date(2016, 3, 2)), (keys[0], date(2019, 12, 30)),
                             (keys[-1], date(2020, 1, 1)), (keys[1], date(2014, 6, 1))):
                assert version.get_reports(collection, key, end) == expected_reports(events, key, end), \
                    (version.name, key, end)
    finally:
        client.drop_database("costlab_test_week_bucket")
        client.close()


BAD_BUCKETS = [
    ('class Odd(Bucket):\n    name = "odd"\n    every = "1w"\n    code_format = "%G%V%u"\n',
     "bucket 'odd': its codes must be decimal digits, all of one even length"),
    ('class Backwards(Bucket):\n    name = "backwards"\n    every = "1w"\n    code_format = "%V%G"\n',
     "bucket 'backwards': its codes must grow with time"),
    ('class Loose(Bucket):\n    name = "loose"\n    every = "1w"\n    code_format = "%Y%m"\n',
     "bucket 'loose': its codes (or ordinals) do not change exactly where its buckets do"),
    ('class Claims(Bucket):\n    name = "claims"\n    every = "1w"\n    code_format = "%G%V"\n'
     '    within = "month"\n',
     "bucket 'claims': a bucket crosses a month, yet it says within 'month'"),
    ('class Day2(Bucket):\n    name = "day"\n    every = "1d"\n    code_format = "%Y%m%d"\n',
     "bucket name 'day' is a built-in bucket's: give yours another name"),
]


@pytest.mark.parametrize("body, words", BAD_BUCKETS, ids=[w.split(":")[0] for _, w in BAD_BUCKETS])
def test_a_bucket_that_cannot_work_is_refused_in_one_line(tmp_path, body, words):
    path = tmp_path / "mine.py"
    path.write_text("from costlab.appversions.buckets import Bucket\n\n\n" + body)
    section = {"versions": ["appV5R3", "mine"],
               "variants": {"mine": {"base": "appV5R3", "layout_file": str(path)}}}
    message = appversions_refusal(section)
    assert message.startswith("invalid config key appversions.variants.mine.layout_file: "), message
    assert words in message, message
    assert "\n" not in message


def test_item_names_that_repeat_within_a_week_are_refused(tmp_path):
    section = {"versions": ["appV6R1", "mine"],
               "variants": {"mine": {"base": "appV6R1", "bucket": "week", "layout_file": WEEK_FILE}}}
    try:
        with pytest.raises(ConfigError) as err:
            load_config(overrides={"appversions": section})
        assert ("invalid config key appversions.variants.mine.bucket: app version 'mine': bucket 'week' may "
                "cross a year, where item names MMDD repeat (allowed with it: item_name_format YYYYMMDD)"
                ) in str(err.value)
        section["variants"]["mine"]["item_name_format"] = "YYYYMMDD"
        section["variants"]["mine"]["report"] = "reduce_dynamic"
        load_config(overrides={"appversions": section})   # YYYYMMDD names tell any bucket's days apart
    finally:
        variants.forget_layout_files()


def test_an_unknown_bucket_names_the_declared_ones():
    message = variants.problem({"versions": ["mine"],
                                "variants": {"mine": {"base": "appV5R3", "bucket": "wek"}}})
    assert message == ("invalid config key appversions.variants.mine.bucket: 'wek' is not allowed "
                       "(allowed: day, month, quarter)")


def test_a_year_bucket_declared_in_four_lines(tmp_path, events):
    """docs/variants.md's other example: every = "1y", code_format = "%Y" (2 bytes in the _id): one document
    per key and calendar year, counted here."""
    from costlab.appversions.model import collection_stats

    path = tmp_path / "year.py"
    path.write_text('from costlab.appversions.buckets import Bucket\n\n\nclass Year(Bucket):\n'
                    '    name = "year"\n    every = "1y"\n    code_format = "%Y"\n    within = "year"\n')
    section = {"versions": ["appV5R3", "v5r3_year"],
               "variants": {"v5r3_year": {"base": "appV5R3", "bucket": "year", "layout_file": str(path)}}}
    try:
        load_config(overrides={"appversions": section})
        variants.register_variants({"appversions": section})
        stats = collection_stats(events, ["v5r3_year"]).row(0, named=True)
        by_hand = _hand_built_week_documents(events, code=lambda day: f"{day.year:04d}")
        assert len(by_hand) == len({(k, d.year) for k, d, _ in events.iter_rows()})
        assert (stats["documents"], stats["data_bytes"]) == (len(by_hand), sum(map(len, by_hand.values())))
        from costlab.appversions.bsonsize import BUCKET_CODE_BYTES

        assert BUCKET_CODE_BYTES["year"] == 2
    finally:
        variants.register_variants({"appversions": {"versions": PUBLISHED, "variants": {}}})
        variants.forget_layout_files()
    assert "year" not in registry.bucket_names()
