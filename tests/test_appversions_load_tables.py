"""Published-vs-reproduced verdicts of the appversions tables, on synthetic rows with known answers."""
import polars as pl
import pytest

from costlab.appversions.tables import (
    GIB,
    collection_findings,
    loadtest_findings,
    published_collection_stats,
    published_vs_reproduced,
)
from costlab.config import ROOT
from costlab.finding import COLUMNS

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
    rows = {r.finding: r for r in collection_findings(stats_rows(published, "mongod", 1.05))}
    assert rows["appV4: documents per event (bucketing)"].verdict == "reproduced"
    assert rows["appV4: avg doc bytes"].verdict == "reproduced"                 # 5 % off, within 15 %
    assert rows["appV4: avg doc bytes"].ratio == pytest.approx(1.05)
    zstd = next(r for f, r in rows.items() if f.startswith("zstd"))
    assert zstd.published == pytest.approx(1.47 / 2.56)
    assert zstd.verdict == "reproduced"                                         # appV6R4 stores less
    far = {r.finding: r for r in collection_findings(stats_rows(published, "mongod", 1.5))}
    assert far["appV4: avg doc bytes"].verdict == "not reproduced"


def test_collection_findings_on_stand_in_never_compare_sizes(published):
    rows = collection_findings(stats_rows(published, "stand-in", 1.0))
    sizes = [r for r in rows if r.unit in ("B", "B/event", "ratio")]
    assert sizes and {r.text for r in sizes} == {"not comparable (stand-in)"}
    counts = [r for r in rows if r.metric == "documents_per_event"]
    assert {r.verdict for r in counts} == {"reproduced"}                        # a count is a count


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
    reductions = {r.metric: r for r in rows if r.metric.startswith("bulk_upsert peak latency reduction")}
    assert reductions["bulk_upsert peak latency reduction, phase 1"].reproduced == pytest.approx(50.0)
    assert reductions["bulk_upsert peak latency reduction, phase 1"].verdict == "reproduced"
    assert reductions["bulk_upsert peak latency reduction, phase 3"].reproduced == pytest.approx(-10.0)
    assert reductions["bulk_upsert peak latency reduction, phase 3"].verdict == "not reproduced"
    targets = {r.finding.split(":")[0]: r for r in rows if r.metric == "bulk_upsert share of steps at target"}
    assert targets["appV6R3"].reproduced == 1.0 and targets["appV6R3"].verdict == "reproduced"
    assert targets["appV6R4"].reproduced == 0.75 and targets["appV6R4"].verdict == "not reproduced"


def test_published_vs_reproduced_has_contract_columns(published):
    facts = pl.read_csv(PUBLISHED / "appversions_loadtest_facts.csv")
    steps = steps_frame("appV6R3", "upsert", "stand-in", [True] * 4, [1.0] * 4)
    model = pl.DataFrame({"version": ["appV5R1"], "events": [500_000_000], "documents": [33_429_649],
                          "avg_doc_bytes": [600.0], "data_bytes": [0]})
    table = published_vs_reproduced(stats_rows(published, "stand-in", 1.0), steps, facts, model, published)
    assert table.columns == COLUMNS
    model_rows = table.filter(pl.col("server_kind") == "model (no server)")
    assert dict(zip(model_rows["metric"], model_rows["verdict"])) == {"documents_per_event": "reproduced",
                                                                      "avg_doc_bytes": "not reproduced"}


# ---


@pytest.fixture(scope="module")
def models():
    """The model at smoke scale (600 events/year) and at the reference scale (computed, not typed in)."""
    from costlab.appversions.events import generate_events
    from costlab.appversions.model import REFERENCE_EVENTS_PER_YEAR, collection_stats, reference_stats

    versions = ["appV4", "appV5R1", "appV6R3", "appV6R4"]
    here = collection_stats(generate_events(600, 42), versions)
    reference = reference_stats(600, 42, versions)
    assert reference["events_per_year"].to_list() == [REFERENCE_EVENTS_PER_YEAR] * 4
    return here, reference


def measured_as_model(published, model, server_kind="mongod", docs_factor=1.0):
    """A server that holds exactly what the model says at its scale (sizes per event from the published
    ones)."""
    per_event = model.select("version", (pl.col("documents") / pl.col("events") * docs_factor).alias("dpe"),
                             pl.col("avg_doc_bytes").alias("size"))
    return stats_rows(published, server_kind, 1.0).join(per_event, on="version").with_columns(
        pl.col("dpe").alias("documents_per_event"), pl.col("size").alias("avg_doc_bytes"),
        (pl.col("size") * pl.col("dpe")).alias("data_bytes_per_event")).drop("dpe", "size")


def test_small_scale_gap_is_not_comparable_not_red(published, models):
    from costlab.appversions.tables import SCALE_REASON, model_findings, scale_explained

    here, reference = models
    explained = scale_explained(here, reference, published)
    assert explained["appV4"] is True  # 0.91 documents/event at 600 events/year against 0.72 published
    rows = collection_findings(measured_as_model(published, here), here, explained)
    by = {r.finding: r for r in rows}
    server_check = by["appV4: documents per event, server vs model at this scale (6,000 events)"]
    assert server_check.verdict == "reproduced" and server_check.published == pytest.approx(5440 / 6000)
    assert (
        by["appV4: documents per event (bucketing)"].verdict,
        by["appV4: documents per event (bucketing)"].reason,
    ) == ("not comparable", SCALE_REASON)
    per_version = [r for r in rows if r.finding.startswith(("appV4:", "appV5R1:", "appV6R3:", "appV6R4:"))]
    assert "not reproduced" not in {r.verdict for r in per_version}
    model_rows = model_findings(here, published, model_reference=reference)
    assert "not reproduced" not in {r.verdict for r in model_rows}
    at_reference = [r for r in model_rows if "reference scale" in r.finding]
    assert len(at_reference) == 8 and {r.verdict for r in at_reference} == {"reproduced"}
    assert SCALE_REASON in {r.reason for r in model_rows if "reference" not in r.finding}


def test_a_server_that_differs_from_the_model_stays_not_reproduced(published, models):
    from costlab.appversions.tables import scale_explained

    here, reference = models
    explained = scale_explained(here, reference, published)
    rows = {r.finding: r for r in collection_findings(measured_as_model(published, here, docs_factor=1.3),
                                                          here, explained)}
    assert rows["appV4: documents per event, server vs model at this scale (6,000 events)"].verdict == \
        "not reproduced"
    assert rows["appV4: documents per event (bucketing)"].verdict == "not reproduced"


def test_at_a_scale_where_the_model_matches_nothing_is_excused(published, models):
    from costlab.appversions.tables import scale_explained

    _, reference = models
    assert not any(scale_explained(reference, reference, published).values())


def test_storage_bar_with_an_unpublished_part_is_shown_as_not_published(published):
    """Issue #12: appV6R4's published data per event is missing; its bar is not its index part alone."""
    from costlab.appversions.figures import storage_per_event_chart, storage_per_event_frames

    stats = stats_rows(published, "mongod", 1.0).with_columns(
        pl.col("data_bytes_per_event").fill_null(21.0))
    bars, missing = storage_per_event_frames(stats)
    published_bars = bars.filter(pl.col("source") == "published")
    assert "appV6R4" not in set(published_bars["version"])
    assert published_bars.filter(pl.col("version") == "appV6R3").height == 2      # data and index
    assert bars.filter((pl.col("version") == "appV6R4") & (pl.col("source") == "reproduced")).height == 2
    assert missing.to_dicts() == [{"version": "appV6R4", "source": "published",
                                   "missing": "data per event not published"}]
    spec = storage_per_event_chart(stats, stand_in=False).to_dict()
    assert "appV6R4 data per event not published" in " ".join(spec["title"]["subtitle"])
