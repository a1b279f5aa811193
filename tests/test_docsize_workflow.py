"""docsize end to end: the smoke config through Snakemake against the test server; the model without one."""
from __future__ import annotations

import json

import polars as pl
import pytest

from costlab.config import ROOT
from tests.known import FINDINGS_COLUMNS


def test_smoke_study_end_to_end(smoke_all, real_mongod):
    targets = [
        "results/docsize/tables/published_vs_reproduced.csv",
        "results/docsize/figures/time_by_size.png",
        "results/docsize/figures/bytes_read.vl.json",
        "results/docsize/figures/server_vs_client.svg",
    ]
    assert [t for t in targets if not (smoke_all.workdir / t).exists()] == []
    out = smoke_all.results("docsize")
    # smoke: sizes 1 and 4 KB, variants off -> two datasets, three runs each (and the smoke config's own
    # document, docsize.documents.ticket, at both sizes: tests/test_docsize_documents.py)
    assert sorted(p.name for p in (out / "data").iterdir()) == ["doc_ticket_1k", "doc_ticket_4k", "orders_1k",
                                                                 "orders_4k"]
    marker = json.loads((out / "data" / "orders_4k" / "dataset.json").read_text())
    assert marker["documents"] == 2000
    raw = pl.concat([pl.read_parquet(p) for p in sorted((out / "raw").glob("*__orders_*.parquet"))
                     if not p.name.startswith("collstats_")])
    assert sorted(set(raw["run"])) == ["random_windows", "same_window", "small_cache"]
    assert set(raw["n_returned"]) == {100}  # window_minutes in config/smoke.yaml
    assert raw.height == 3 * 2 * 3 * 2      # runs x sizes x shapes x queries
    if not real_mongod:
        assert raw["bytes_read_into_cache"].null_count() == raw.height  # missing, not 0
    pvr = pl.read_csv(out / "tables" / "published_vs_reproduced.csv")
    assert pvr.columns == list(FINDINGS_COLUMNS)
    assert pvr["tolerance"].null_count() == 0  # every row says what it was judged by
    provenance = json.loads((out / "provenance" / "small_cache__orders_4k.json").read_text())
    assert provenance["profile"] == "standalone-small-cache"
    if not real_mongod:
        assert provenance["server_kind"] == "stand-in"
        assert set(pvr.filter(pl.col("server_kind") == "stand-in").select("verdict", "reason").rows()) == {
            ("not comparable", "stand-in")}
        spec = json.loads((out / "figures" / "bytes_read.vl.json").read_text())
        assert "stand-in" in json.dumps(spec["title"])
        assert "missing, not 0" in json.dumps(spec["title"])
    table = pl.read_csv(out / "tables" / "client_time_same_window.csv")
    assert table["document"].to_list() == ["1 KB", "4 KB"]
    assert table["whole_published"].to_list() == [12.0, 38.0]
    assert (out / "figures" / "time_by_size.png").stat().st_size > 10_000


@pytest.mark.workflow   # a Snakemake run: make test-workflow
def test_model_needs_no_server(snakemake_run):
    # A docker backend that cannot exist here: the model must not ask for a server at all.
    result = snakemake_run(["results/docsize/model/collections.csv"],
                           extra_args=("--config", "server={backend: docker, image: 'no-such-image:0'}"))
    assert result.returncode == 0, result.stderr[-3000:]
    model = pl.read_csv(snakemake_run.workdir / "results" / "docsize" / "model" / "collections.csv")
    assert model.columns == ["size_kb", "documents", "avg_doc_bytes", "data_bytes"]
    # the orders are filled to the article's mean documents (resources/published), not to n x 1,024 B
    published = pl.read_csv(ROOT / "resources" / "published" / "docsize_collections.csv")
    means = dict(zip(published["size_kb"].to_list(), published["mean_document_bytes"].to_list()))
    assert model["avg_doc_bytes"].to_list() == [float(means[1]), float(means[4])]


def test_window_larger_than_collection_stops_before_any_job(snakemake_run, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("docsize:\n  docs_per_collection: 1000\n  window_minutes: 5000\n")
    result = snakemake_run(
        ["results/docsize/model/collections.csv"],
        configfiles=("config/smoke.yaml", str(bad)),
        extra_args=("-n",),
    )
    assert result.returncode != 0
    assert (
        "invalid config key docsize.window_minutes: 5000 exceeds docsize.docs_per_collection (1000); "
        "allowed: at most 1000"
    ) in result.stderr + result.stdout
