"""Your own app versions declared in config (appversions.variants): the declarations, their one-line
errors, and the rows of kind "user variant" (costlab/appversions/variants.py, variant_findings.py)."""
from __future__ import annotations

from datetime import datetime

import bson
import polars as pl
import pytest
from bson import Binary
from known import UNKNOWN_VERSION
from refusals import appversions_refusal

from costlab.appversions import registry, variants
from costlab.config import ConfigError, load_config
from costlab.declarations import DeclarationError
from costlab.verdicts import Kind, Verdict

# appV5R3 declared field by field (registry.PUBLISHED: array_daily, quarter, reduce_array; short status
# names, no item names, no totals, no extra index, the default compressor)
SAME_AS_V5R3 = {"layout": "array_daily", "bucket": "quarter", "report": "reduce_array",
                "long_status_names": False, "item_name_format": None, "totals": False, "indexes": []}
PUBLISHED = list(registry.PUBLISHED_NAMES)


def _section(declared: dict, versions: list[str] | None = None) -> dict:
    return {"versions": versions or [*PUBLISHED, *declared], "variants": declared}


@pytest.fixture
def registered():
    """Register a config's variants for one test; the registry is as it was afterwards."""
    def register(declared: dict) -> list[str]:
        return variants.register_variants({"appversions": _section(declared)})

    yield register
    variants.register_variants({"appversions": {"versions": PUBLISHED, "variants": {}}})
    assert registry.version_names() == PUBLISHED


@pytest.fixture(scope="module")
def events() -> pl.DataFrame:
    from costlab.appversions.events import generate_events

    return generate_events(60, 3)   # 600 events over 2010-2020


def _hand_built_v5r3_documents(events: pl.DataFrame, bucket: str) -> list[bytes]:
    """appV5R3's documents written out here from the article's description, not by costlab: one per key
    and bucket, `_id` = the key's 32 bytes + the bucket code (YYYYMM or YYYY0Q, 3 bytes), `items` = one
    `{date, <status letter>: count}` per day in first-event order."""
    letter = {"approved": "a", "noFunds": "n", "pending": "p", "rejected": "r"}
    docs: dict[bytes, dict[datetime, dict[str, int]]] = {}
    for key, day, status in events.iter_rows():
        quarter = f"{day.year:04d}0{(day.month - 1) // 3 + 1}"
        code = f"{day.year:04d}{day.month:02d}" if bucket == "month" else quarter
        _id = bytes.fromhex(key + code)
        counts = docs.setdefault(_id, {}).setdefault(day, {})
        counts[letter[str(status)]] = counts.get(letter[str(status)], 0) + 1
    return [bson.encode({"_id": Binary(_id, 0), "items": [{"date": d, **c} for d, c in days.items()]})
            for _id, days in docs.items()]


def test_a_variant_declared_field_by_field_as_appV5R3_is_appV5R3_byte_for_byte(registered, events, tmp_path):
    from costlab.appversions.engine import measure_version, version_documents
    from costlab.appversions.events import iter_event_chunks, write_events
    from costlab.appversions.model import collection_stats
    from costlab.appversions.statements import update_statements
    from costlab.appversions.versions import get_version

    assert registered({"mine": SAME_AS_V5R3}) == ["mine"]
    mine, v5r3 = get_version("mine"), get_version("appV5R3")
    assert mine.compare_to is None   # declared without a base: nothing to be beside unless compare_to says
    # statements: the same raw BSON, statement by statement
    raw = [bytes(s.raw) for s in update_statements(mine, events)]
    assert raw == [bytes(s.raw) for s in update_statements(v5r3, events)] and len(raw) == events.height
    # documents (what the engine lab inserts): the same bytes, and those of the documents built by hand
    documents = [bson.encode(doc) for doc, _ in version_documents(mine, events)]
    assert documents == [bson.encode(doc) for doc, _ in version_documents(v5r3, events)]
    by_hand = _hand_built_v5r3_documents(events, "quarter")
    assert sorted(map(len, documents)) == sorted(map(len, by_hand))
    # model sizes: the same row, and the hand-built documents' count and bytes
    stats = {r["version"]: r for r in collection_stats(events, ["appV5R3", "mine"]).iter_rows(named=True)}
    assert {k: v for k, v in stats["mine"].items() if k != "version"} == \
           {k: v for k, v in stats["appV5R3"].items() if k != "version"}
    assert (stats["mine"]["documents"], stats["mine"]["data_bytes"]) == (len(by_hand), sum(map(len, by_hand)))
    # the engine lab at a tiny scale: the same documents, record bytes, file sizes
    path = tmp_path / "events.parquet"
    write_events(iter_event_chunks(60, 3), path)
    rows = [measure_version(name, path, tmp_path / name, cache_mb=8, workers=1)
            for name in ("mine", "appV5R3")]
    for field in ("events", "documents", "data_bytes", "storage_bytes", "index_bytes", "block_compressor"):
        assert rows[0][field] == rows[1][field], field
    assert rows[0]["data_bytes"] == sum(map(len, by_hand))


def test_a_changed_bucket_gives_the_documents_of_the_published_version_with_that_bucket(registered, events):
    """appV5R1 (push, quarter) with month buckets holds a document per key and month: appV5R0's count."""
    from costlab.appversions.model import collection_stats

    registered({"v5r1_month": {"base": "appV5R1", "bucket": "month"}})
    stats = {r["version"]: r for r in collection_stats(events, ["appV5R0", "appV5R1", "v5r1_month"])
             .iter_rows(named=True)}
    # counted here from the events: distinct (key, year, month) and (key, year, quarter)
    year = pl.col("date").dt.year().alias("year")
    months = events.select("key", year, pl.col("date").dt.month().alias("m")).n_unique()
    quarters = events.select("key", year, pl.col("date").dt.quarter().alias("q")).n_unique()
    assert months > quarters   # else the test could not tell the two buckets apart
    assert stats["v5r1_month"]["documents"] == stats["appV5R0"]["documents"] == months
    assert stats["appV5R1"]["documents"] == quarters
    # the same $push documents as appV5R0 (push, month): the same bytes too
    assert stats["v5r1_month"]["data_bytes"] == stats["appV5R0"]["data_bytes"]


def test_a_base_and_what_differs(registered):
    from costlab.appversions.engine import wanted_compressor
    from costlab.appversions.versions import get_version

    registered({"v6r2_zstd": {"base": "appV6R2", "block_compressor": "zstd",
                              "indexes": [["items.total"]], "compare_to": "appV6R4"}})
    v = get_version("v6r2_zstd")
    # appV6R2's declaration (dynamic, quarter, reduce_dynamic, MMDD, totals) with what the config changes
    assert (v.layout_name, v.bucket, v.report, v.item_name_format, v.totals, v.long_status_names) == \
           ("dynamic", "quarter", "reduce_dynamic", "MMDD", True, False)
    zstd = {"storageEngine": {"wiredTiger": {"configString": "block_compressor=zstd"}}}   # as appV6R4's
    assert v.create_collection_options == zstd
    assert wanted_compressor(v) == "zstd" and v.index_keys == (("items.total",),)
    assert v.compare_to == "appV6R4"
    # the rules' wildcard and every list take it from the registry
    assert registry.version_names()[-1] == "v6r2_zstd"
    assert "v6r2_zstd" in registry.wildcard_pattern().split("|")


def test_a_later_config_replaces_the_variants_of_an_earlier_one(registered):
    registered({"first": {"base": "appV4"}})
    registered({"second": {"base": "appV4"}})
    assert "first" not in registry.version_names() and registry.version_names()[-1] == "second"
    assert registry.declaration("second").compare_to == "appV4"   # default: its base


def test_a_config_declaring_a_variant_validates_and_lists_it():
    declared = {"mine": {"base": "appV5R3", "bucket": "month"}}
    config = load_config(overrides={"appversions": {"versions": ["appV5R3", "mine"], "variants": declared}})
    assert config["appversions"]["variants"] == {"mine": {"base": "appV5R3", "bucket": "month"}}
    assert load_config()["appversions"]["variants"] == {}   # the default: none


BAD = [
    # (variants, versions (None: the published ones and the variants), expected words)
    ({"mine": {"base": "appV5R3", "colour": "red"}}, None,
     "invalid config key appversions.variants.mine: Additional properties are not allowed "
     "('colour' was unexpected)"),
    ({"mine": {"base": UNKNOWN_VERSION}}, None,
     f"invalid config key appversions.variants.mine.base: {UNKNOWN_VERSION!r} is not a published app version "
     "(allowed: appV1,"),
    ({"appV5R3": {"base": "appV5R3", "bucket": "month"}}, PUBLISHED,
     "invalid config key appversions.variants.appV5R3: 'appV5R3' is a published app version's name"),
    ({"mine": {"base": "appV5R3", "bucket": "week"}}, None,
     "invalid config key appversions.variants.mine.bucket: 'week' is not allowed "
     "(allowed: day, month, quarter)"),
    ({"mine": {"base": "appV5R3", "report": "scan"}}, None,
     "invalid config key appversions.variants.mine.report: 'scan' is not allowed "
     "(allowed: match_group, unwind,"),
    ({"mine": {"base": "appV6R1", "item_name_format": "MM"}}, None,
     "invalid config key appversions.variants.mine.item_name_format: 'MM' is not allowed "
     "(allowed: DD, MMDD, YYYYMMDD)"),
    ({"mine": {"base": "appV6R2", "block_compressor": "lz4"}}, None,
     "invalid config key appversions.variants.mine.block_compressor: 'lz4' is not allowed "
     "(allowed: none, snappy, zlib, zstd)"),
    ({"mine": {"base": "appV4", "bucket": "month"}}, None,
     "invalid config key appversions.variants.mine.bucket: app version 'mine': layout 'id_day' holds one day "
     "per document, not bucket 'month'"),
    ({"mine": {"base": "appV5R3", "report": "match_group"}}, None,
     "invalid config key appversions.variants.mine.report: report 'match_group' does not read layout "
     "'array_daily''s documents (allowed with it: reduce_array, unwind)"),
    ({"mine": {"base": "appV5R1", "totals": True}}, None,
     "invalid config key appversions.variants.mine.totals: layout 'push' does not write totals"),
    ({"mine": {"layout": "nosuch", "bucket": "day", "report": "match_group"}}, None,
     "invalid config key appversions.variants.mine.layout: unknown layout 'nosuch'"),
    ({"mine": {"layout": "push", "bucket": "month"}}, None,
     "invalid config key appversions.variants.mine.report: required without a base"),
    ({"mine": {"base": "appV5R3"}}, ["appV5R3"],
     "invalid config key appversions.variants.mine: declared but not in appversions.versions"),
    ({"mine": {"base": "appV5R3"}}, ["mine"],
     "invalid config key appversions.variants.mine.compare_to: 'appV5R3' is not in appversions.versions"),
    ({"mine": {"base": "appV5R3", "compare_to": UNKNOWN_VERSION}}, None,
     f"invalid config key appversions.variants.mine.compare_to: {UNKNOWN_VERSION!r} is not an app version"),
    ({"9lives": {"base": "appV5R3"}}, None,
     "invalid config key appversions.variants.9lives: a variant's name is letters, digits, _ and -"),
]


@pytest.mark.parametrize("declared, versions, words", BAD, ids=[w.split(":")[0][-40:] + str(i)
                                                               for i, (_, _, w) in enumerate(BAD)])
def test_a_bad_declaration_is_refused_in_one_line_naming_the_key(declared, versions, words):
    with pytest.raises(ConfigError) as err:
        load_config(overrides={"appversions": _section(declared, versions)})
    message = str(err.value)
    assert words in message and "\n" not in message, message
    assert registry.version_names() == PUBLISHED   # refused before anything is registered


def test_the_check_names_an_unknown_field_without_the_schema():
    """The one place that builds declarations says it too (a caller that does not go through the schema)."""
    assert variants.problem(_section({"mine": {"base": "appV5R3", "colour": "red"}})) == (
        "invalid config key appversions.variants.mine.colour: unknown field (allowed: base, layout, bucket, "
        "report, long_status_names, item_name_format, totals, indexes, block_compressor, compare_to, "
        "layout_file)")
    with pytest.raises(DeclarationError, match="appversions.variants.mine.indexes: 'key' is not a list"):
        variants.declarations(_section({"mine": {"base": "appV5R3", "indexes": "key"}}))


def test_variant_rows_are_ratios_never_judged_never_counted():
    from costlab.appversions.variant_findings import (
        engine_variant_rows,
        model_variant_rows,
        server_variant_rows,
    )
    from costlab.verdicts import counted

    pairs = {"mine": "appV5R3"}
    # engine storage rows: 3,000 events; mine stores 30,000 B and indexes 6,000 B in 120 documents,
    # appV5R3 60,000 B, 3,000 B, 40 documents -> ratios 0.5, 2.0, 3.0
    engine = pl.DataFrame({"version": ["appV5R3", "mine"], "events": [3000, 3000], "documents": [40, 120],
                           "storage_bytes": [60_000, 30_000], "index_bytes": [3_000, 6_000]})
    rows = engine_variant_rows(engine, pairs)
    assert [(r.finding, r.reproduced) for r in rows] == [
        ("mine beside appV5R3: storage per event (engine lab)", 0.5),
        ("mine beside appV5R3: index per event (engine lab)", 2.0),
        ("mine beside appV5R3: documents per event (engine lab)", 3.0)]
    for r in rows:
        assert (r.kind, r.verdict, r.published, r.server_kind) == (
            Kind.USER_VARIANT, Verdict.NOT_COMPARABLE, None, "engine")
        assert not counted(r.kind.value) and r.row()["ratio"] is None   # no published number: no ratio to one
    assert rows[0].note == "mine: 10 B/event; appV5R3: 20 B/event"
    # the model: documents and data bytes per event; a missing compared version -> not run
    model = pl.DataFrame({"version": ["appV5R3", "mine"], "events": [100, 100], "documents": [10, 25],
                          "data_bytes": [4000, 5000], "avg_doc_bytes": [400.0, 200.0]})
    assert [r.reproduced for r in model_variant_rows(model, pairs)] == [2.5, 1.25]
    lonely = model_variant_rows(model.filter(pl.col("version") == "mine"), pairs)
    assert {(r.verdict, r.reproduced) for r in lonely} == {(Verdict.NOT_RUN, None)}
    # collStats on the stand-in: its sizes are not MongoDB's, and the row says so
    stats = engine.with_columns(pl.lit("stand-in").alias("server_kind"))
    assert {r.reason for r in server_variant_rows(stats, pairs)} == {"stand-in"}


def test_a_variant_on_a_server_is_never_judged_against_a_published_number(registered):
    """collStats of a variant: no 'not reproduced' for want of a published number; its server-vs-model
    checks are rows of kind user variant."""
    from costlab.appversions.tables import collection_findings

    registered({"mine": {"base": "appV5R3"}})
    stats = pl.DataFrame({"version": ["mine"], "server_kind": ["mongod"], "documents_per_event": [0.5],
                          "avg_doc_bytes": [300.0], "published_documents_per_event": [None],
                          "published_indexes": [None]},
                         schema_overrides={"published_documents_per_event": pl.Float64,
                                           "published_indexes": pl.Int64})
    model = pl.DataFrame({"version": ["mine"], "events": [100], "documents": [50], "avg_doc_bytes": [300.0],
                          "data_bytes": [15000]})
    rows = collection_findings(stats, model)
    assert [(r.verdict, r.kind) for r in rows] == [(Verdict.REPRODUCED, Kind.USER_VARIANT)] * 2


def test_the_engine_verdicts_judge_only_published_versions(registered):
    """The engine lab's storage / data verdict of a variant would compare it with nothing: it is left out,
    and the variant's rows beside its compare_to are there instead."""
    from costlab.appversions.engine import verdicts

    registered({"mine": {"base": "appV6R3", "block_compressor": "zstd"}})
    row = {"events": 1000, "documents": 10, "data_bytes": 20_000, "storage_bytes": 10_000,
           "index_bytes": 1000, "block_compressor": "snappy", "block_compressor_wanted": "snappy",
           "compressor_note": None,
           "published_storage_over_data": 0.5, "published_storage_bytes_per_event": None,
           "storage_over_data": 0.5, "storage_bytes_per_event": 10.0, "index_bytes_per_event": 1.0}
    table = pl.DataFrame([row | {"version": "appV6R3"},
                          row | {"version": "mine", "storage_bytes": 5_000, "storage_bytes_per_event": 5.0,
                                 "block_compressor": "zstd", "block_compressor_wanted": "zstd",
                                 "published_storage_over_data": None}])
    out = verdicts(table)
    mine = out.filter(pl.col("finding").str.starts_with("mine"))
    assert out.filter(pl.col("finding").str.starts_with("appV6R3"))["verdict"].to_list() == ["reproduced"]
    assert set(mine["kind"]) == {"user variant"} and set(mine["verdict"]) == {"not comparable"}
    assert mine["reproduced"].to_list() == [0.5, 1.0, 1.0]   # storage 5/10, index 1/1, documents 10/10


# A layout of the user's own in a file of its own: appV4's day document plus `t`, the day's event count.
TALLY_FILE = """
from pymongo import UpdateOne

from costlab.appversions.bsonsize import INT32_BYTES, element
from costlab.appversions.layouts import IdDay


class Tally(IdDay):
    name = "tally_day"

    def upsert_ops(self, version, cols):
        return [UpdateOne({"_id": i}, {"$inc": {f: 1, "t": 1}}, upsert=True)
                for i, f in zip(cols["id"], cols["field"])]

    def day_document_bytes(self, version):
        return super().day_document_bytes(version) + element("t", INT32_BYTES)

    def bucket_document(self, version, _id, fields, dates, items):
        return {**super().bucket_document(version, _id, fields, dates, items), "t": len(fields)}
"""


@pytest.fixture
def layout_file(tmp_path):
    path = tmp_path / "variants" / "tally.py"
    path.parent.mkdir()
    path.write_text(TALLY_FILE)
    yield path
    variants.register_variants({"appversions": {"versions": PUBLISHED, "variants": {}}})
    variants.forget_layout_files()


def test_a_layout_from_a_file_of_ones_own(layout_file, events):
    from costlab.appversions.engine import version_documents
    from costlab.appversions.layouts import PUBLISHED_LAYOUTS
    from costlab.appversions.model import collection_stats
    from costlab.appversions.statements import update_statements
    from costlab.appversions.versions import get_version

    declared = {"tallyV1": {"layout_file": str(layout_file), "bucket": "day", "report": "match_group",
                            "compare_to": "appV4"}}
    section = {"versions": ["appV4", "tallyV1"], "variants": declared}
    load_config(overrides={"appversions": section})   # checked like any declaration
    variants.register_variants({"appversions": section})
    version = get_version("tallyV1")
    assert version.layout_name == "tally_day" and "tally_day" not in PUBLISHED_LAYOUTS
    # the model: appV4's documents, each 7 bytes more (element t: type 1 + "t\0" 2 + int32 4)
    stats = {r["version"]: r for r in collection_stats(events, ["appV4", "tallyV1"]).iter_rows(named=True)}
    docs = stats["appV4"]["documents"]
    assert stats["tallyV1"]["documents"] == docs > 0
    assert stats["tallyV1"]["data_bytes"] == stats["appV4"]["data_bytes"] + 7 * docs
    # the engine lab's documents: the model's bytes
    stored = sum(len(bson.encode(doc)) for doc, _ in version_documents(version, events))
    assert stored == stats["tallyV1"]["data_bytes"]
    # the statements: written out here for the first events
    letter = {"approved": "a", "noFunds": "n", "pending": "p", "rejected": "r"}
    for (key, day, status), statement in zip(events.head(5).iter_rows(), update_statements(version, events)):
        _id = Binary(bytes.fromhex(key + f"{day.year:04d}{day.month:02d}{day.day:02d}"), 0)
        update = {"$inc": {letter[str(status)]: 1, "t": 1}}
        expected = {"q": {"_id": _id}, "u": update, "multi": False, "upsert": True}
        assert bytes(statement.raw) == bson.encode(expected)


@pytest.mark.parametrize("text, words", [
    (None, "layout_file: {path} is not a file (a relative path is read from the working directory"),
    ("x = 1\n", "layout_file: {path} defines no layout and no bucket (a subclass of "
                "costlab.appversions.layouts.Layout or costlab.appversions.buckets.Bucket"),
    ("raise RuntimeError('no luck')\n", "layout_file: importing {path} failed: RuntimeError: no luck"),
    ("from costlab.appversions.layouts import Push\nclass Mine(Push):\n    name = 'push'\n",
     "layout_file: {path}: layout name 'push' is a built-in layout's"),
])
def test_a_bad_layout_file_is_refused_in_one_line(tmp_path, text, words):
    path = tmp_path / "mine.py"
    if text is not None:
        path.write_text(text)
    section = _section({"mine": {"layout_file": str(path), "bucket": "day", "report": "match_group"}})
    message = appversions_refusal(section)
    assert f"invalid config key appversions.variants.mine.{words.format(path=path)}" in message, message
    assert "\n" not in message


def _spawned_get_version(name: str, queue) -> None:
    from costlab.appversions.versions import get_version

    version = get_version(name)
    queue.put((version.layout_name, version.bucket, version.report))


def test_a_spawned_worker_knows_the_variants_of_the_job_that_started_it(registered):
    """The load and load-test workers are spawned interpreters given a version's name only."""
    import multiprocessing as mp

    registered({"mine": {"base": "appV5R3", "bucket": "month"}})
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    worker = ctx.Process(target=_spawned_get_version, args=("mine", queue))
    worker.start()
    try:
        assert queue.get(timeout=120) == ("array_daily", "month", "reduce_array")
    finally:
        worker.join(30)
    assert worker.exitcode == 0


# --- the session's smoke tree: config/smoke.yaml declares appV5R3_month (appV5R3 with month buckets),
# modelled and stored by the engine lab, not loaded ----------------------------------------------

SMOKE_VARIANT = "appV5R3_month"


def _months_over_quarters(events: pl.DataFrame) -> float:
    """Documents of month buckets over documents of quarter buckets: distinct (key, year, month) over
    distinct (key, year, quarter), counted here from the events."""
    year = pl.col("date").dt.year().alias("year")
    months = events.select("key", year, pl.col("date").dt.month().alias("m")).n_unique()
    quarters = events.select("key", year, pl.col("date").dt.quarter().alias("q")).n_unique()
    return months / quarters


def test_the_smoke_tree_has_the_variants_rows_beside_appV5R3(smoke_all):
    import yaml

    from costlab.appversions.events import generate_events, read_events
    from costlab.config import ROOT

    findings = pl.read_csv(smoke_all.results() / "findings.csv", infer_schema_length=None)
    # appversions' own rows (the smoke tree declares an arraygrowth element and a docsize document too: their
    # rows are their studies')
    mine = findings.filter((pl.col("kind") == "user variant") & (pl.col("study") == "appversions"))
    assert mine["finding"].to_list() == [
        f"{SMOKE_VARIANT} beside appV5R3: documents per event (model)",
        f"{SMOKE_VARIANT} beside appV5R3: data bytes per event (model)",
        f"{SMOKE_VARIANT} beside appV5R3: storage per event (engine lab)",
        f"{SMOKE_VARIANT} beside appV5R3: index per event (engine lab)",
        f"{SMOKE_VARIANT} beside appV5R3: documents per event (engine lab)",
    ]
    assert set(mine["verdict"]) == {"not comparable"} and mine["published"].is_null().all()
    assert set(mine["reason"]) == {"your variant: no published number to judge it by"}
    assert mine["evidence"].to_list()[:2] == ["server-free model"] * 2
    assert all(e.startswith("WiredTiger engine lab") for e in mine["evidence"].to_list()[2:])
    ratio = dict(zip(mine["finding"].to_list(), mine["this_run"].to_list()))
    # documents per event: the model's events (600 a year, smoke.yaml) and the engine lab's (500 a year,
    # engine.appversions), generated here with the run's seed and window
    smoke = yaml.safe_load((ROOT / "config/smoke.yaml").read_text())
    assert smoke["appversions"]["variants"] == {SMOKE_VARIANT: {"base": "appV5R3", "bucket": "month"}}
    model_events = read_events(smoke_all.results("appversions") / "events.parquet")
    engine_events = generate_events(500, 42, window="authors")
    assert ratio[f"{SMOKE_VARIANT} beside appV5R3: documents per event (model)"] == pytest.approx(
        _months_over_quarters(model_events))
    assert ratio[f"{SMOKE_VARIANT} beside appV5R3: documents per event (engine lab)"] == pytest.approx(
        _months_over_quarters(engine_events), rel=1e-3)   # the engine's table keeps 4 significant figures
    assert _months_over_quarters(engine_events) > 1.5
    # more documents, each with its own _id: more bytes per event
    assert ratio[f"{SMOKE_VARIANT} beside appV5R3: data bytes per event (model)"] > 1
    # the published verdict tables judge no variant against a published number
    for table in ("engine/published_vs_engine.csv", "tables/published_vs_reproduced.csv"):
        rows = pl.read_csv(smoke_all.results("appversions") / table, infer_schema_length=None)
        judged_mine = rows.filter(pl.col("finding").str.contains(SMOKE_VARIANT)
                                  & (pl.col("kind") != "user variant"))
        assert judged_mine.height == 0, judged_mine
    storage = pl.read_csv(smoke_all.results("appversions") / "engine/storage.csv")
    # in the registry's order: after the published versions
    assert storage["version"].to_list()[-2:] == ["appV6R4", SMOKE_VARIANT]


def test_the_smoke_report_shows_your_variants_apart(smoke_all):
    import re

    page = (smoke_all.results() / "report.html").read_text()
    section = re.search(r'<section class="beyond" id="your-variants">(.*?)</section>', page, re.S)
    assert section, "no 'Your variants' section"
    assert "<h2>Your variants: every row</h2>" in section.group(1)
    assert section.group(1).count('<tr data-kind="user variant" data-filter-study="appversions"') == 5
    # arraygrowth's job_run's 4 (2 profiles x 2 measures: docs/variants.md)
    assert section.group(1).count('<tr data-kind="user variant" data-filter-study="arraygrowth"') == 4
    assert f"{SMOKE_VARIANT} beside appV5R3: storage per event (engine lab)" in section.group(1)
    # every study's rows of your variants (the smoke config's docsize document too) counted apart
    findings = pl.read_csv(smoke_all.results() / "findings.csv", infer_schema_length=None)
    yours = findings.filter(pl.col("kind") == "user variant").height
    assert yours > 5 + 4 and section.group(1).count('<tr data-kind="user variant" ') == yours
    assert f'id="user-variant-counts">Not counted above: {yours} rows of' in page
    # the console's summary says so too, apart from the published findings
    console = smoke_all.result.stdout + smoke_all.result.stderr
    assert f"and {yours} rows of your variants, not counted" in console
