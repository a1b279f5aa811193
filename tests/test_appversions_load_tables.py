"""Published-vs-reproduced verdicts of the appversions tables, on synthetic rows with known answers."""
import polars as pl
import pytest

from costlab.appversions.tables import (GIB, PVR_COLUMNS, collection_findings, loadtest_findings,
                                        published_collection_stats, published_vs_reproduced)
from costlab.config import ROOT

PUBLISHED = ROOT / "resources" / "published"


@pytest.fixture(scope="module")
def published():
    return published_collection_stats(PUBLISHED / "appversions_collection_stats.csv",
                                      PUBLISHED / "appversions_event_stats.csv")


def stats_rows(published, server_kind, scale):
    """Our stats = published per-event figures times `scale` (documents per event unchanged)."""
    rows = published.filter(pl.col("version").is_in(["appV4", "appV5R1", "appV6R3", "appV6R4"]))
    return rows.with_columns(
        pl.col("published_documents_per_event").alias("documents_per_event"),
        (pl.col("published_avg_doc_bytes") * scale).alias("avg_doc_bytes"),
        (pl.col("published_data_bytes_per_event") * scale).alias("data_bytes_per_event"),
        (pl.col("published_index_bytes_per_event") * scale).alias("index_bytes_per_event"),
        (pl.col("published_total_bytes_per_event") * scale).alias("total_bytes_per_event"),
        (pl.col("published_storage_bytes_per_event") * scale).alias("storage_bytes_per_event"),
        (pl.col("published_storage_bytes") * scale).alias("storage_bytes"),
        pl.lit(server_kind).alias("server_kind"))


def test_published_sizes_are_gib(published):
    appv1 = published.filter(pl.col("version") == "appV1").row(0, named=True)
    assert appv1["published_data_bytes"] == pytest.approx(39.58 * GIB)
    assert appv1["published_data_bytes"] / 500_000_000 == pytest.approx(85.0, abs=0.05)
    assert appv1["published_documents_per_event"] == pytest.approx(359_639_622 / 500_000_000)


def test_collection_findings_on_mongod_compare_values(published):
    rows = {r["finding"]: r for r in collection_findings(stats_rows(published, "mongod", 1.05))}
    assert rows["appV4: documents per event (bucketing)"]["verdict"] == "reproduced"
    assert rows["appV4: avg doc bytes"]["verdict"] == "reproduced"                 # 5 % off, within 15 %
    assert rows["appV4: avg doc bytes"]["ratio"] == pytest.approx(1.05)
    zstd = next(r for f, r in rows.items() if f.startswith("zstd"))
    assert zstd["published"] == pytest.approx(1.47 / 2.56)
    assert zstd["verdict"] == "reproduced"                                         # appV6R4 stores less
    far = {r["finding"]: r for r in collection_findings(stats_rows(published, "mongod", 1.5))}
    assert far["appV4: avg doc bytes"]["verdict"] == "not reproduced"


def test_collection_findings_on_stand_in_never_compare_sizes(published):
    rows = collection_findings(stats_rows(published, "stand-in", 1.0))
    sizes = [r for r in rows if r["unit"] in ("B", "B/event", "ratio")]
    assert sizes and {r["verdict"] for r in sizes} == {"not comparable (stand-in)"}
    counts = [r for r in rows if r["metric"] == "documents_per_event"]
    assert {r["verdict"] for r in counts} == {"reproduced"}                        # a count is a count


def steps_frame(version, kind, server_kind, met, latency_max):
    return pl.DataFrame({"version": [version] * 4, "kind": [kind] * 4, "phase": [1, 2, 3, 4], "step": [1] * 4,
                         "met": met, "call_ms_max": latency_max, "achieved_rate": [1.0] * 4,
                         "target_rate": [1.0] * 4, "server_kind": [server_kind] * 4})


def test_loadtest_findings_peak_latency_reduction_and_targets():
    facts = pl.read_csv(PUBLISHED / "appversions_loadtest_facts.csv")
    steps = pl.concat([
        steps_frame("appV6R3", "upsert", "mongod", [True] * 4, [100.0, 200.0, 300.0, 400.0]),
        steps_frame("appV6R4", "upsert", "mongod", [True, True, True, False], [50.0, 100.0, 330.0, 200.0]),
    ])
    rows = loadtest_findings(steps, facts)
    reductions = {r["metric"]: r for r in rows if r["metric"].startswith("bulk_upsert peak latency reduction")}
    assert reductions["bulk_upsert peak latency reduction, phase 1"]["reproduced"] == pytest.approx(50.0)
    assert reductions["bulk_upsert peak latency reduction, phase 1"]["verdict"] == "reproduced"
    assert reductions["bulk_upsert peak latency reduction, phase 3"]["reproduced"] == pytest.approx(-10.0)
    assert reductions["bulk_upsert peak latency reduction, phase 3"]["verdict"] == "not reproduced"
    targets = {r["finding"].split(":")[0]: r for r in rows if r["metric"] == "bulk_upsert share of steps at target"}
    assert targets["appV6R3"]["reproduced"] == 1.0 and targets["appV6R3"]["verdict"] == "reproduced"
    assert targets["appV6R4"]["reproduced"] == 0.75 and targets["appV6R4"]["verdict"] == "not reproduced"


def test_published_vs_reproduced_has_contract_columns(published):
    facts = pl.read_csv(PUBLISHED / "appversions_loadtest_facts.csv")
    steps = steps_frame("appV6R3", "upsert", "stand-in", [True] * 4, [1.0] * 4)
    model = pl.DataFrame({"version": ["appV5R1"], "events": [500_000_000], "documents": [33_429_649],
                          "avg_doc_bytes": [600.0], "data_bytes": [0]})
    table = published_vs_reproduced(stats_rows(published, "stand-in", 1.0), steps, facts, model, published)
    assert table.columns == PVR_COLUMNS
    model_rows = table.filter(pl.col("server_kind") == "model (no server)")
    assert dict(zip(model_rows["metric"], model_rows["verdict"])) == {"documents_per_event": "reproduced",
                                                                      "avg_doc_bytes": "not reproduced"}
