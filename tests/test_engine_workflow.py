"""The engine-lab targets build through Snakemake with no server at all."""
import json

import polars as pl
import pytest

from tests.conftest import run_snakemake

NO_SERVER = "mongodb://127.0.0.1:9/"   # nothing listens there: the engine rules must not connect


@pytest.mark.workflow
def test_engine_targets_build_without_a_server(tmp_path):
    targets = ["results/arraygrowth/engine/log_bytes.csv", "results/docsize/engine/cache_reads.csv"]
    proc = run_snakemake(tmp_path, targets, NO_SERVER)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = tmp_path / "results" / "arraygrowth" / "engine"
    table = pl.read_csv(out / "log_bytes.csv")
    assert {"profile", "workload", "n", "log_bytes", "modify_calls", "update_calls", "wt_version",
            "journal_compressor"} <= set(table.columns)
    assert sorted(table["n"].unique().to_list()) == [200, 400, 800]          # smoke.yaml engine.arraygrowth.ns
    assert table.height == 2 * 2 * 3
    record = json.loads((out / "provenance.json").read_text())
    assert record["server_kind"] == "engine" and record["server"]["wiredtiger_version"] == "11.2.0"
    assert record["compressors"]["journal_compressor_wanted"] == "snappy"
    fit = pl.read_csv(out / "fit.csv")
    assert fit.height == 4 and fit["exponent"].null_count() == 0
    assert not any((tmp_path / "results").glob("servers/*.json"))          # no server was resolved

    docsize = tmp_path / "results" / "docsize" / "engine"
    reads = pl.read_csv(docsize / "cache_reads.csv")
    assert {"size_kb", "cache_mb", "windows", "shape", "queries", "bytes_read_into_cache_median",
            "pages_read_median"} <= set(reads.columns)
    assert sorted(reads["size_kb"].unique().to_list()) == [1, 4]                # smoke.yaml docsize.sizes_kb
    assert reads.height == 2 * 3 * 3 and (reads["queries"] == 3).all()
    assert reads["windows"].str.contains("^(same|random)").all()
    assert json.loads((docsize / "provenance.json").read_text())["server_kind"] == "engine"
