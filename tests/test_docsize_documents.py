"""docsize with your own document (docsize.documents, docs/variants.md): declared in config, grown with the
orders' filler, measured by the engine lab with the orders' protocol, shown beside the orders as rows of kind
"user variant" that are never counted."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import bson
import polars as pl
import pytest

from costlab.config import ConfigError, load_config
from costlab.docsize import document_data, documents
from costlab.docsize.document_findings import COMPARED_READ_NOTHING, document_rows
from costlab.docsize.engine import QUERY_COLUMNS, document_subject, load_subject, measure_size, run_shape
from costlab.engine.connection import Engine, EngineSettings
from costlab.finding import USER_VARIANT_REASON
from costlab.verdicts import Kind, Verdict, counted

FIXTURES = Path(__file__).parent / "fixtures"
# The article's order as costlab lays it out (costlab/docsize/generate.py, history_last) without its history:
# _id, customerId, status, createdAt, total.
ORDER_LIKE = FIXTURES / "order_like.json"
EPOCH = datetime(2024, 1, 1, tzinfo=timezone.utc)
SETTINGS = EngineSettings(journal_compressor="lz4", block_compressor="lz4")


def _declared(name="mine", sample=ORDER_LIKE, projected=("createdAt", "total"), **more):
    return {name: {"sample": str(sample), "projected": list(projected), **more}}


def _declaration(**more) -> documents.DocumentDeclaration:
    (declared,) = documents.declarations({"documents": _declared(**more), "sizes_kb": [1, 4]})
    return declared


def test_an_order_shaped_document_grown_has_the_orders_sizes():
    """Grown with the orders' filler, a document shaped like the article's order is exactly as large as the
    article's mean order of each size (1,037 / 4,105 / 16,403 B: its table of collections)."""
    declaration = _declaration()
    sample = documents.read_sample(ORDER_LIKE)
    for size_kb, published_mean in ((1, 1037), (4, 4105), (16, 16403)):
        encoded = [d for _, batch in document_data.batches(declaration, sample, size_kb, 30, 42)
                   for d in batch]
        assert {len(d) for d in encoded} == {published_mean}
        decoded = [bson.decode(d) for d in encoded]
        assert all(len(bson.encode(d)) == published_mean for d in decoded)
        assert [list(d)[:5] for d in decoded[:1]] == [["_id", "customerId", "status", "createdAt", "total"]]
        # one document a minute from 2024-01-01, as the orders; the other fields are the sample's
        assert [d["createdAt"] for d in decoded[:3]] == [datetime(2024, 1, 1, 0, m) for m in range(3)]
        assert {d["total"] for d in decoded} == {54.6} and {d["status"] for d in decoded} == {"delivered"}
        assert len({d["_id"] for d in decoded}) == 30
        assert all(d["history"][0]["note"] for d in decoded)   # the filler: the orders' notes
    kept = document_data.batches(_declaration(grow=False), sample, None, 5, 42)
    as_it_is = [d for _, batch in kept for d in batch]
    assert {len(d) for d in as_it_is} == {len(bson.encode(sample))}   # 94 B: no filler


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """200 order-shaped documents of 4 KB in an engine collection with their {createdAt, total} index."""
    declaration = _declaration()
    sample = documents.read_sample(ORDER_LIKE)
    subject = document_subject(declaration, sample, 4, 200, 42, 20, "4k")
    engine = Engine(tmp_path_factory.mktemp("doc") / "wt",
                    EngineSettings(cache_mb=64, journal_compressor="lz4", block_compressor="lz4",
                                   journal=False))
    try:
        yield load_subject(engine, subject, "lz4"), subject
    finally:
        engine.close()


def test_projection_and_covered_return_the_projected_fields(loaded):
    collection, subject = loaded
    expected = [[EPOCH + timedelta(minutes=m), 54.6] for m in range(10, 20)]
    assert run_shape(collection, "projection", 10, 20, subject) == [
        [d.replace(tzinfo=None), t] for d, t in expected]    # picked from the BSON (naive UTC)
    assert run_shape(collection, "covered", 10, 20, subject) == expected    # from the index keys alone
    whole = run_shape(collection, "whole", 10, 20, subject)
    assert [len(d) for d in whole] == [4105] * 10


def test_the_engine_lab_measures_it_at_two_sizes_and_covered_reads_less_than_whole(tmp_path):
    """Each size from a cold cache per shape (the variant run): whole and projection read every document
    of the window, at least 50 x 4,105 B at 4 KB; covered reads index pages only: the whole index of 400
    entries of about 30 B ({date, double} + record id) is about 12 KB, under a tenth of that."""
    declaration = _declaration()
    sample = documents.read_sample(ORDER_LIKE)
    engine_docsize = {"docs_per_collection": 400, "window_minutes": 50, "warmups": 1,
                      "same_window_warmups": 1,
                      "queries": 2, "default_cache_mb": 64, "small_cache_mb": 1}
    study = {"seed": 42, "customers": 20, "sizes_kb": [1, 4]}
    cold = {}
    for size_kb in (1, 4):
        subject = document_subject(declaration, sample, size_kb, 400, 42, 20, f"{size_kb}k")
        home = tmp_path / f"{size_kb}k"
        rows, facts = measure_size(size_kb, study, engine_docsize, SETTINGS, home, subject)
        assert facts["avg_doc_bytes"] == {1: 1037, 4: 4105}[size_kb]
        queries = pl.DataFrame(rows).select(QUERY_COLUMNS)
        assert set(queries["shape"]) == {"whole", "projection", "covered"}
        assert (queries["n_returned"] == 50).all()
        cold[size_kb] = {r["shape"]: r["bytes_read_into_cache"] for r in queries.filter(
            pl.col("cold_start") & (pl.col("run") == "small_cache_cold_per_shape")).iter_rows(named=True)}
    window_bytes = 50 * 4105
    assert cold[4]["whole"] >= window_bytes and cold[4]["projection"] >= window_bytes
    assert cold[4]["covered"] < window_bytes / 10
    # at 1 KB a cold read takes whole leaf pages (more than the window's 50 x 1,037 B), covered still less
    assert cold[1]["whole"] >= 50 * 1037 and cold[1]["covered"] < cold[1]["whole"]


def _cache_reads(values: dict[tuple[int, str], float], **columns) -> pl.DataFrame:
    return pl.DataFrame([{"size_kb": k, "run": "small_cache", "shape": s, "bytes_read_into_cache_mean": v,
                          "queries": 30, "cache_mb": 51, **columns} for (k, s), v in values.items()])


def test_rows_are_ratios_to_the_orders_of_the_same_size_never_judged_never_counted():
    orders = _cache_reads({(1, "whole"): 1000.0, (1, "covered"): 0.0, (4, "whole"): 4000.0})
    mine = _cache_reads({(1, "whole"): 1500.0, (1, "covered"): 20.0, (4, "whole"): 1000.0},
                        document="mine", size=None, avg_doc_bytes=1037)
    rows = document_rows(orders, {"mine": mine.with_columns(pl.format("{}k", "size_kb").alias("size"))},
                         {"mine": "orders"})
    by_metric = {r.metric: r for r in rows}
    assert list(by_metric) == ["bytes_read_into_cache mine/orders 1k whole",
                               "bytes_read_into_cache mine/orders 1k covered",
                               "bytes_read_into_cache mine/orders 4k whole"]
    assert by_metric["bytes_read_into_cache mine/orders 1k whole"].reproduced == 1.5
    assert by_metric["bytes_read_into_cache mine/orders 4k whole"].reproduced == 0.25
    covered = by_metric["bytes_read_into_cache mine/orders 1k covered"]
    assert covered.reproduced is None and covered.reason == COMPARED_READ_NOTHING
    assert {r.kind for r in rows} == {Kind.USER_VARIANT} and not any(counted(r.kind.value) for r in rows)
    assert {(r.verdict, r.reason) for r in rows if r.reproduced is not None} == {
        (Verdict.NOT_COMPARABLE, USER_VARIANT_REASON)}
    assert rows[0].finding == ("mine (1k) beside the article's orders of 1 KB: bytes read per whole query, "
                               "small cache (engine lab)")
    assert "documents of 1,037 B" in rows[0].note and "orders: 1,000 B/query" in rows[0].note


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("declared, words", [
    (lambda t: _declared(colour="red"),
     "invalid config key docsize.documents.mine: Additional properties are not allowed ('colour' was "
     "unexpected)"),
    (lambda t: _declared(sample=t / "absent.json"),
     "invalid config key docsize.documents.mine.sample: "),
    (lambda t: _declared(sample=_write(t, "broken.json", '{"createdAt": {"$date": "2024-01-01T00:00:00Z"},')),
     "broken.json is not valid JSON or extended JSON: "),
    (lambda t: _declared(sample=_write(t, "bad_ext.json", '{"createdAt": {"$date": "not a date"}}')),
     "bad_ext.json is not valid JSON or extended JSON: "),
    (lambda t: _declared(sample=_write(t, "two.json", json.dumps([{"a": 1}, {"a": 2}]))),
     "two.json holds a JSON list, not a single JSON object"),
    (lambda t: _declared(projected=("createdAt", "price")),
     "invalid config key docsize.documents.mine.projected: 'price' is not a field of the sample"),
    (lambda t: _declared(projected=()),
     "invalid config key docsize.documents.mine.projected: empty: name the fields a list screen projects"),
    (lambda t: _declared(projected=("status", "total")),
     "'status' is the window's key (the first projected field): a date or a number, not a string"),
    (lambda t: _declared(name="orders_4k"),
     "invalid config key docsize.documents.orders_4k: 'orders_4k' is a published dataset's name"),
    (lambda t: _declared(name="orders"), "'orders' is a published dataset's name"),
    (lambda t: _declared(compare_to="invoice"),
     "invalid config key docsize.documents.mine.compare_to: 'invoice' is neither orders nor a declared "
     "document"),
    (lambda t: _declared(sample=_write(t, "big.json", json.dumps({"createdAt": 1, "note": "x" * 2000})),
                         projected=("createdAt",)),   # 4 + (1 + 10 + 4) + (1 + 5 + 4 + 2,001) + 1 bytes
     "invalid config key docsize.documents.mine.grow: the sample is 2,031 BSON bytes, too large to grow to "
     "1 KB (1,037 B, docsize.sizes_kb): set grow: false to measure it as it is, or leave 1 out of "
     "docsize.sizes_kb"),
])
def test_a_bad_declaration_is_refused_in_one_line_naming_the_key(tmp_path, declared, words):
    with pytest.raises(ConfigError) as err:
        load_config(overrides={"docsize": {"documents": declared(tmp_path), "sizes_kb": [1, 4]}})
    message = str(err.value)
    assert words in message and "\n" not in message, message


def test_a_missing_sample_names_the_working_directory(tmp_path):
    assert documents.problem({"documents": _declared(sample="documents/absent.json"), "sizes_kb": [1]}) == (
        "invalid config key docsize.documents.mine.sample: documents/absent.json is not a file (a relative "
        f"path is read from the working directory, {Path.cwd()}, else from costlab's checkout, "
        f"{Path(__file__).resolve().parent.parent})")


def test_a_shipped_sample_is_found_from_any_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert documents.read_sample("config/documents/ticket.json")["priority"] == 2


def test_no_documents_by_default_and_a_declared_one_validates():
    assert load_config()["docsize"]["documents"] == {}
    config = load_config(overrides={"docsize": {"documents": _declared(grow=False)}})
    assert config["docsize"]["documents"]["mine"]["grow"] is False
    assert documents.size_labels(_declaration(grow=False), [1, 4]) == ["sample"]
    assert documents.size_labels(_declaration(), [1, 4]) == ["1k", "4k"]


def test_on_the_test_server_the_document_is_loaded_indexed_and_measured_like_the_orders(
        test_db, tmp_path, mongo_client):
    """The ticket (three projected fields, a string among them) at 1 KB: its collection, its index on the
    projected fields, a run of the orders' protocol with the three shapes returning the same rows; then its
    rows beside the orders' (the stand-in's: reason stand-in, never judged)."""
    from costlab.docsize.datasets import parse_dataset
    from costlab.docsize.document_runs import document_dataset, load_document, query_spec, server_rows
    from costlab.docsize.load import load_dataset
    from costlab.docsize.run import measure_dataset

    study = {"docs_per_collection": 300, "sizes_kb": [1], "seed": 42, "customers": 10, "window_minutes": 20,
             "runs": {name: {"warmups": 1, "queries": 2} for name in ("same_window", "random_windows",
                                                                       "small_cache")},
             "variants": {"spread_customer": False}}
    (declaration,) = documents.declarations({"documents": {"ticket": {
        "sample": "config/documents/ticket.json", "projected": ["openedAt", "priority", "subject"]}},
        "sizes_kb": [1]})
    sample = documents.read_sample(declaration.sample)
    record = load_document(mongo_client, declaration, sample, "1k", study, tmp_path / "doc",
                           database=test_db.name)
    assert record["dataset"] == "doc_ticket_1k" and record["collections"][0]["documents"] == 300
    collection = test_db["doc_ticket_1k"]
    assert collection.index_information()["openedAt_1_priority_1_subject_1"]["key"] == [
        ("openedAt", 1), ("priority", 1), ("subject", 1)]
    stored = collection.find_one({"openedAt": datetime(2024, 1, 1, 0, 5)})
    assert len(bson.encode(stored)) == 1037 and stored["subject"] == sample["subject"]
    spec = query_spec(declaration, sample)
    raw, _ = measure_dataset(mongo_client, document_dataset(declaration, sample, "1k", [1]), "same_window",
                             study, database=test_db.name, spec=spec)
    assert set(raw["shape"]) == {"whole", "projection", "covered"} and (raw["n_returned"] == 20).all()
    load_dataset(mongo_client, parse_dataset("orders_1k"), study, tmp_path / "orders", database=test_db.name)
    orders, _ = measure_dataset(mongo_client, parse_dataset("orders_1k"), "same_window", study,
                                database=test_db.name)
    rows = server_rows(orders, {"ticket": raw.with_columns(pl.lit("1k").alias("size"))}, {"ticket": "orders"})
    client_rows = [r for r in rows if r.metric.startswith("client_ms")]
    assert [r.metric for r in client_rows] == [f"client_ms ticket/orders 1k same_window {shape}"
                                               for shape in ("whole", "projection", "covered")]
    assert all(r.reproduced > 0 and r.kind is Kind.USER_VARIANT for r in client_rows)
    stand_in = raw["server_kind"][0] == "stand-in"
    assert {r.reason for r in client_rows} == {"stand-in" if stand_in else USER_VARIANT_REASON}


def test_the_smoke_tree_has_the_documents_rows_beside_the_orders(smoke_all, real_mongod):
    """config/smoke.yaml's ticket (config/documents/ticket.json), grown to 1 and 4 KB: per size and shape one
    row of kind "user variant", in findings.csv and the report, never counted."""
    findings = pl.read_csv(smoke_all.results() / "findings.csv", infer_schema_length=None)
    mine = findings.filter(pl.col("finding").str.starts_with("ticket ("))
    assert set(mine["study"]) == {"docsize"} and set(mine["kind"]) == {Kind.USER_VARIANT.value}
    assert set(mine["verdict"]) <= {Verdict.NOT_COMPARABLE.value, Verdict.NOT_RUN.value}
    engine = mine.filter(pl.col("source") == "docsize/engine/your_documents.csv")
    assert engine.height == 6, engine    # 2 sizes x 3 shapes, the small-cache run
    assert set(engine["evidence"].str.slice(0, 21)) == {"WiredTiger engine lab"}
    table = pl.read_csv(smoke_all.results("docsize") / "engine/documents/cache_reads_ticket.csv")
    assert set(table["size"]) == {"1k", "4k"} and set(table["avg_doc_bytes"]) == {1037, 4105}
    # on the test server too: the same protocol as the orders', its rows (client time per run, size, shape)
    server = mine.filter(pl.col("source") == "docsize/tables/your_documents.csv")
    assert server.height >= 18, server   # client time at least: 3 runs x 2 sizes x 3 shapes
    if real_mongod:   # judged as a variant of yours: no published number (a quantity not measured: not run)
        assert {e.split(";")[0] for e in server["evidence"]} == {"mongod 6.0.5"}
        assert set(server["reason"]) <= {USER_VARIANT_REASON, "not measured in this run"}
        assert USER_VARIANT_REASON in set(server["reason"])
    else:
        assert set(server["evidence"]) == {"stand-in (SecantusDB, not MongoDB)"}
        assert set(server["reason"]) == {"stand-in"}
    assert set(server["finding"].str.extract(r"^(ticket \(\d+k\))", 1)) == {"ticket (1k)", "ticket (4k)"}
    page = (smoke_all.results() / "report.html").read_text()
    section = page.split('id="your-variants"', 1)[1]
    assert "ticket (4k) beside the article&#39;s orders of 4 KB: bytes read per whole query" in section
