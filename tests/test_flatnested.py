"""flatnested: same values under both layouts, BSON size arithmetic, load/measure, tables, smoke run."""
from __future__ import annotations

import json

import bson
import polars as pl
import pytest

from costlab.config import run_facts
from costlab.flatnested.generate import MAX_FIELDS, documents_for, generate_values
from costlab.flatnested.model import size_table
from costlab.flatnested.params import LoadParams, MeasureParams
from costlab.flatnested.run import load_dataset, measure_dataset
from costlab.flatnested.shapes import Shape, parse_shape, shapes_for
from costlab.flatnested.tables import comparison_table, published_vs_reproduced, timing_summary
from costlab.namespaces import data_params
from tests.known import FINDINGS_COLUMNS

PUBLISHED = "resources/published/flatnested_timings.csv"
SAMPLE_SIZES = "resources/published/flatnested_sample_sizes.csv"


@pytest.fixture(scope="module")
def values() -> pl.DataFrame:
    return generate_values(40, 4, seed=7)


def flatten(doc: dict, prefix: str = "") -> dict:
    """The test's own flattening: nested keys joined with '_' (independent of the generator)."""
    out = {}
    for key, value in doc.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}_"))
        else:
            out[f"{prefix}{key}"] = value
    return out


@pytest.mark.parametrize("fields", [10, 20])
def test_same_values_under_both_layouts(values, fields):
    flat = documents_for(values, Shape("flat", fields))
    structured = documents_for(values, Shape("structured", fields))
    assert len(flat) == len(structured) == 40
    for f_doc, s_doc in zip(flat, structured):
        assert flatten(s_doc) == f_doc                        # same data, same order of fields
        assert list(flatten(s_doc)) == list(f_doc)
        assert len(f_doc) == fields + 1                       # _id + N top-level fields
        assert len(s_doc) == fields // 5 + 1                  # _id + N/5 sub-documents
        assert all(isinstance(v, dict) and len(v) == 5 for k, v in s_doc.items() if k != "_id")
    # realistic values: not all identical, several BSON types
    assert len({d["name_first"] for d in flat}) > 5
    assert {type(v) for v in flat[0].values()} >= {int, str}


def expected_saving_per_doc(structured_doc: dict) -> int:
    """Bytes a flat document spends more than its structured twin, from the names alone.

    Flat: every leaf name carries '<group>_' (len(group) + 1 bytes) -> 5 * (len + 1) per group.
    Structured: one embedded-document element per group: type byte + name + NUL + int32 length
    + trailing NUL of the sub-document = len(group) + 7.
    """
    return sum(len(leaf) * (len(group) + 1) - (len(group) + 7)
               for group, leaf in structured_doc.items() if group != "_id")


@pytest.mark.parametrize("fields", [10, 20])
def test_bson_size_difference_is_field_name_arithmetic(values, fields):
    flat = documents_for(values, Shape("flat", fields))
    structured = documents_for(values, Shape("structured", fields))
    for f_doc, s_doc in zip(flat, structured):
        assert len(bson.encode(f_doc)) - len(bson.encode(s_doc)) == expected_saving_per_doc(s_doc)
    sizes = size_table(values, [Shape("flat", fields), Shape("structured", fields)])
    diff = sizes["data_bytes"][0] - sizes["data_bytes"][1]
    assert diff == len(flat) * expected_saving_per_doc(structured[0])
    assert sizes["documents"].to_list() == [40, 40]


def test_first_pair_saving_by_hand(values):
    # groups 'name' (4) and 'home' (4): each 5 * 5 - 11 = 14 bytes, 28 per document
    flat = documents_for(values, Shape("flat", 10))
    structured = documents_for(values, Shape("structured", 10))
    assert sorted(k for k in structured[0] if k != "_id") == ["home", "name"]
    assert len(bson.encode(flat[3])) - len(bson.encode(structured[3])) == 28


def test_generator_is_deterministic_and_prefix_stable():
    a = generate_values(15, 2, seed=3)
    assert a.equals(generate_values(15, 2, seed=3))
    assert not a.equals(generate_values(15, 2, seed=4))
    wider = generate_values(15, 3, seed=3)
    assert wider.select(a.columns).equals(a)   # a wider shape does not change the narrower one's values


def test_bad_shapes_and_sizes_are_named():
    with pytest.raises(ValueError, match="flat_12"):
        parse_shape("flat_12", MAX_FIELDS)
    with pytest.raises(ValueError, match="structured_3x4"):
        parse_shape("structured_3x4", MAX_FIELDS)
    with pytest.raises(ValueError, match="105"):
        shapes_for([105], MAX_FIELDS)
    with pytest.raises(ValueError, match="groups"):
        generate_values(5, 21, seed=1)
    assert [s.name for s in shapes_for([10, 100], MAX_FIELDS)] == [
        "flat_10", "structured_2x5", "flat_100", "structured_20x5"]
    assert parse_shape("structured_20x5", MAX_FIELDS) == Shape("structured", 100)


def test_load_then_measure_on_the_test_server(tmp_path, external_server_config, real_mongod, mongo_client):
    values_path = tmp_path / "values.parquet"
    generate_values(60, 2, seed=1).write_parquet(values_path)
    config = {"server": external_server_config}
    run, data = run_facts(config, "flatnested"), data_params(config, "flatnested")
    data_dir = tmp_path / "data" / "structured_2x5"
    record = load_dataset(
        LoadParams(data=data), run, values_path, "structured_2x5", data_dir, tmp_path / "load.json"
    )
    marker = json.loads((data_dir / "dataset.json").read_text())
    assert marker["documents"] == record["documents"] == 60
    # in this run's own database (costlab.namespaces), named in the marker
    assert marker["database"].startswith("costlab_flatnested_")
    assert mongo_client[marker["database"]]["structured_2x5"].count_documents({}) == 60
    # the server's data size is the sum of BSON sizes (collStats.size)
    assert marker["server_data_bytes"] == marker["model_data_bytes"]
    raw = measure_dataset(MeasureParams(data=data, runs=4, warmup_runs=1), run, data_dir, "structured_2x5",
                          provenance_path=tmp_path / "measure.json")
    assert raw.height == 4 and raw["run"].to_list() == [0, 1, 2, 3]
    assert raw["docs_returned"].to_list() == [0] * 4
    assert raw["docs_examined"].unique().to_list() == [60]       # the server walked every document
    assert (raw["client_ms"] > 0).all()
    assert raw["server_data_bytes"].unique().to_list() == [marker["model_data_bytes"]]
    if real_mongod:
        assert raw["server_ms"].null_count() == 0
    else:
        assert raw["server_ms"].null_count() == 4                # not reported: null, never 0
        assert raw["server_kind"].unique().to_list() == ["stand-in"]
    assert (tmp_path / "measure.json").exists()


def test_measure_refuses_an_unloaded_data_dir(tmp_path, external_server_config):
    with pytest.raises(FileNotFoundError, match="dataset.json"):
        measure_dataset(
            MeasureParams(data={}, runs=2, warmup_runs=0),
            run_facts({"server": external_server_config}),
            tmp_path,
            "flat_10",
            tmp_path / "p.json",
        )


def synthetic_raw(
    flat_ms: float, structured_ms: float, server_kind: str, documents: int = 100
) -> pl.DataFrame:
    rows = []
    for shape, ms in ((Shape("flat", 10), flat_ms), (Shape("structured", 10), structured_ms)):
        for run in range(4):
            rows.append(
                {
                    "shape": shape.name,
                    "layout": shape.layout,
                    "fields": 10,
                    "groups": 2,
                    "documents": documents,
                    "run": run,
                    "client_ms": ms,
                    "server_ms": None,
                    "server_read_ops": None,
                    "docs_returned": 0,
                    "docs_examined": 100,
                    "server_data_bytes": 1000,
                    "server_storage_bytes": 500,
                    "storage_engine": "wiredTiger",
                    "server_version": "8.0.0",
                    "server_kind": server_kind,
                }
            )
    return pl.DataFrame(rows, schema_overrides={"server_ms": pl.Float64, "server_read_ops": pl.Int64})


SIZES = pl.DataFrame({"shape": ["flat_10", "structured_2x5"], "data_bytes": [1000, 800],
                      "avg_doc_bytes": [10.0, 8.0]})


@pytest.mark.parametrize("flat_ms, structured_ms, kind, verdict", [
    (10.0, 7.5, "mongod", "reproduced"),
    (10.0, 12.0, "mongod", "not reproduced"),
    (10.0, 7.5, "stand-in", "not comparable"),
])
def test_tables_improvement_and_verdict(flat_ms, structured_ms, kind, verdict):
    summary = timing_summary(synthetic_raw(flat_ms, structured_ms, kind))
    comparison = comparison_table(summary, SIZES, pl.read_csv(PUBLISHED), kind)
    row = comparison.row(0, named=True)
    assert row["reproduced_flat_ms"] == pytest.approx(flat_ms * 100)      # per 100 queries, as published
    assert row["reproduced_improvement_pct"] == pytest.approx((flat_ms - structured_ms) / flat_ms * 100)
    assert row["published_flat_ms"] == 487 and row["published_structured_ms"] == 376
    assert row["size_saving_pct"] == pytest.approx(20.0)
    assert row["server_flat_ms"] is None and row["server_improvement_pct"] is None
    pvr = published_vs_reproduced(comparison, pl.read_csv(SAMPLE_SIZES))
    assert pvr.columns == list(FINDINGS_COLUMNS)
    assert pvr["tolerance"].null_count() == 0  # every row says what it was judged by
    speed = pvr.filter(pl.col("finding").str.starts_with("structured is faster"))
    assert speed.filter(pl.col("unit") == "%")["verdict"].to_list() == [verdict]
    times = speed.filter(pl.col("unit") == "ms")
    assert times["metric"].str.contains("inMemory").all()
    # 100 documents against the published 10,000: absolute times are not the published ones
    assert times["metric"].str.contains("100 documents per collection here, published 10,000").all()
    assert times["verdict"].unique().to_list() == ["not comparable"]
    assert times["reason"].unique().to_list() == [
        "stand-in"
        if kind == "stand-in"
        else "at this scale: 100 documents per collection here, published 10,000"
    ]
    improvement = speed.filter(pl.col("unit") == "%").row(0, named=True)
    assert improvement["published"] == 22.8
    assert improvement["ratio"] == pytest.approx(improvement["reproduced"] / 22.8)
    size = pvr.filter(pl.col("finding").str.starts_with("structured is smaller")).row(0, named=True)
    assert (
        size["published"] == 24
        and size["reproduced"] == pytest.approx(20.0)
        and size["verdict"] == "reproduced"
    )


def test_times_at_the_published_document_count_carry_the_verdict():
    summary = timing_summary(synthetic_raw(10.0, 12.0, "mongod", documents=10_000))
    pvr = published_vs_reproduced(comparison_table(summary, SIZES, pl.read_csv(PUBLISHED), "mongod"),
                                  pl.read_csv(SAMPLE_SIZES))
    speed = pvr.filter(pl.col("finding").str.starts_with("structured is faster"))
    assert speed["verdict"].unique().to_list() == ["not reproduced"]
    assert not speed["metric"].str.contains("documents per collection").any()


def test_smoke_workflow(smoke_all, real_mongod):
    targets = ["results/flatnested/tables/published_vs_reproduced.csv",
               "results/flatnested/figures/time_by_fields.png"]
    assert [t for t in targets if not (smoke_all.workdir / t).exists()] == []
    results = smoke_all.results("flatnested")
    shapes = ["flat_10", "structured_2x5", "flat_25", "structured_5x5"]       # config/smoke.yaml
    for shape in shapes:
        raw = pl.read_parquet(results / "raw" / f"{shape}.parquet")
        assert raw.height == 3 and raw["docs_examined"].unique().to_list() == [500]
        assert json.loads((results / "data" / shape / "dataset.json").read_text())["documents"] == 500
        assert (results / "provenance" / f"measure_{shape}.json").exists()
    comparison = pl.read_csv(results / "tables" / "comparison.csv")
    assert comparison["fields"].to_list() == [10, 25]
    assert comparison["published_engine"].unique().to_list() == ["inMemory"]
    assert (comparison["size_saving_pct"] > 0).all()
    pvr = pl.read_csv(results / "tables" / "published_vs_reproduced.csv")
    speed = pvr.filter(pl.col("finding").str.starts_with("structured is faster"))
    if not real_mongod:
        assert speed["verdict"].unique().to_list() == ["not comparable"]
        assert speed["reason"].unique().to_list() == ["stand-in"]
        assert speed["server_kind"].unique().to_list() == ["stand-in"]
        spec = (results / "figures" / "time_by_fields.vl.json").read_text()
        assert "stand-in server" in spec
    for ext in ("png", "svg", "vl.json"):
        assert (results / "figures" / f"time_by_fields.{ext}").stat().st_size > 0
