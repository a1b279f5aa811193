"""docsize generator: sizes, compressibility, field order, determinism, identical small fields; model."""
from __future__ import annotations

import os
import zlib
from collections import Counter
from datetime import datetime, timedelta

import bson
import numpy as np
import polars as pl
import pytest

from costlab.config import ROOT, load_config
from costlab.docsize.datasets import datasets, parse_dataset
from costlab.docsize.generate import VOCABULARY, generate_bson_batches
from costlab.docsize.model import COLLECTIONS_COLUMNS, collections_model

# The article's mean document sizes (bytes), typed in from its first table.
PUBLISHED_MEAN_BYTES = {1: 1037, 4: 4105, 16: 16403, 64: 65876}


def docs(size_kb, n, **kwargs):
    return [d for batch in generate_bson_batches(size_kb, n, **kwargs) for d in batch]


@pytest.mark.parametrize("size_kb", [1, 4, 16, 64])
def test_every_document_is_its_size_and_valid_bson(size_kb):
    encoded = docs(size_kb, 40)
    assert len(encoded) == 40
    published = pl.read_csv(ROOT / "resources/published/docsize_collections.csv")
    mean = int(published.filter(pl.col("size_kb") == size_kb)["mean_document_bytes"][0])
    assert {len(d) for d in encoded} == {mean}   # every order is the article's mean document
    for raw in encoded:
        decoded = bson.decode(raw)  # raises on any malformed length or terminator
        assert bson.encode(decoded) == raw  # round-trips byte for byte
        assert all(set(entry) == {"at", "note"} for entry in decoded["history"])


def test_mean_sizes_at_default_settings_within_two_percent_of_published():
    config = load_config()
    model = collections_model(config["docsize"])
    assert model.columns == COLLECTIONS_COLUMNS == ["size_kb", "documents", "avg_doc_bytes", "data_bytes"]
    assert model["size_kb"].to_list() == [1, 4, 16, 64]
    assert set(model["documents"].to_list()) == {50_000}   # docsize.docs_per_collection at the defaults
    for row in model.iter_rows(named=True):
        published = PUBLISHED_MEAN_BYTES[row["size_kb"]]
        assert abs(row["avg_doc_bytes"] / published - 1) <= 0.02, row
        assert row["data_bytes"] == pytest.approx(row["avg_doc_bytes"] * 50_000)


def test_model_matches_generated_documents():
    study = {"docs_per_collection": 1200, "sizes_kb": [1, 4], "seed": 7, "customers": 12, "variants": {}}
    model = collections_model(study)
    for row in model.iter_rows(named=True):
        lengths = [len(d) for d in docs(row["size_kb"], 1200, seed=7, customers=12)]
        assert row["data_bytes"] == sum(lengths)
        assert row["avg_doc_bytes"] == pytest.approx(np.mean(lengths))


def zlib_ratio(data: bytes) -> float:
    return len(data) / len(zlib.compress(data, 6))


def test_history_compresses_like_text_not_like_noise_or_one_character():
    ours = b"".join(docs(64, 24))
    random_payload = os.urandom(len(ours))
    one_character = b"x" * len(ours)
    ratio, noise, repeated = zlib_ratio(ours), zlib_ratio(random_payload), zlib_ratio(one_character)
    assert noise < 1.05
    assert repeated > 100
    assert ratio > 2.0 * noise       # well above a random payload
    assert ratio < repeated / 10     # well below a repeated character
    assert 2.0 < ratio < 8.0


def test_notes_are_made_of_vocabulary_words():
    history = bson.decode(docs(4, 1)[0])["history"]
    words = [w for entry in history for w in entry["note"].split(" ")[1:-1]]  # first/last may be cut
    assert len(words) > 100
    assert set(words) <= set(VOCABULARY)
    assert len(set(words)) > 50  # a vocabulary, not one repeated word


@pytest.mark.parametrize("layout, keys", [
    ("history_last", ["_id", "customerId", "status", "createdAt", "total", "history"]),
    ("history_first", ["_id", "customerId", "status", "history", "createdAt", "total"]),
    ("orders_only", ["_id", "customerId", "status", "createdAt", "total"]),
    ("history_only", ["_id", "history"]),
])
def test_field_order(layout, keys):
    for raw in docs(4, 5, layout=layout):
        assert list(bson.decode(raw)) == keys


def test_deterministic_and_independent_of_batch_size():
    first = docs(16, 150, seed=3)
    assert first == docs(16, 150, seed=3)
    assert first == docs(16, 150, seed=3, batch_docs=7)
    assert first != docs(16, 150, seed=4)


def test_small_fields_identical_across_sizes_and_layouts():
    def small(size_kb, layout="history_last"):
        return [{k: v for k, v in bson.decode(d).items() if k != "history"}
                for d in docs(size_kb, 300, layout=layout)]

    reference = small(1)
    assert small(4) == reference
    assert small(64) == reference
    assert small(4, "history_first") == reference
    assert small(16, "orders_only") == reference
    # ...while the histories differ in size.
    assert bson.decode(docs(1, 1)[0])["history"] != bson.decode(docs(4, 1)[0])["history"]


def test_one_order_a_minute_in_created_order_and_customers_balanced():
    orders = [bson.decode(d) for d in docs(1, 1000, customers=10)]
    created = [o["createdAt"] for o in orders]
    assert created[0] == datetime(2024, 1, 1)
    assert all(b - a == timedelta(minutes=1) for a, b in zip(created, created[1:]))
    ids = [o["_id"] for o in orders]
    assert ids == sorted(ids) and len(set(ids)) == 1000
    assert set(Counter(o["customerId"] for o in orders).values()) == {100}
    assert {o["status"] for o in orders} <= {
        "pending",
        "paid",
        "shipped",
        "delivered",
        "cancelled",
        "returned",
    }
    assert all(isinstance(o["total"], float) and o["total"] > 0 for o in orders)


@pytest.mark.parametrize("kwargs, message", [
    ({"size_kb": 0, "documents": 10}, "size_kb"),
    ({"size_kb": 1, "documents": 10, "layout": "sideways"}, "layout"),
    ({"size_kb": 1, "documents": 10, "customers": 11}, "customers"),
    ({"size_kb": 1, "documents": 0}, "documents"),
])
def test_bad_input_names_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        next(generate_bson_batches(**kwargs))


def test_datasets_follow_variant_switches():
    study = {"sizes_kb": [1, 64], "variants": {"fields_after_history": True, "split_history": False}}
    assert [d.name for d in datasets(study)] == [
        "orders_1k",
        "orders_64k",
        "orders_1k_tail",
        "orders_64k_tail",
    ]
    split = parse_dataset("orders_16k_split")
    assert (split.size_kb, split.variant, split.history_collection) == (
        16,
        "split",
        "orders_16k_split_history",
    )
    with pytest.raises(ValueError, match="orders_<size>k"):
        parse_dataset("orders_16kb")
