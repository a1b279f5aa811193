"""End to end: the arraygrowth part of the workflow on config/smoke.yaml against the test server."""
import json

import polars as pl

from tests.known import FINDINGS_COLUMNS

TABLES = ["runs", "fit", "counts", "published_vs_reproduced"]
FIGURES = ["log_bytes_vs_n", "bytes_per_op_vs_n"]


def test_smoke_run_builds_tables_and_figures(smoke_all, real_mongod):
    targets = [f"results/arraygrowth/tables/{t}.csv" for t in TABLES]
    targets += [
        f"results/arraygrowth/figures/{f}.{ext}" for f in FIGURES for ext in ("png", "svg", "vl.json")
    ]
    assert [t for t in targets if not (smoke_all.workdir / t).exists()] == []
    out = smoke_all.results("arraygrowth")

    raw = pl.concat([pl.read_parquet(p) for p in sorted((out / "raw").glob("*.parquet"))])
    assert sorted(raw["job"].unique().to_list()) == ["replset-1_insert", "replset-1_push",
                                                     "standalone_insert", "standalone_push"]
    assert sorted(raw["n"].unique().to_list()) == [50, 100, 200]          # smoke.yaml
    assert (raw["operations"] == raw["n"]).all()
    push = raw.filter(pl.col("workload") == "push")
    assert (push["elements_after"] == push["n"]).all() and (push["documents_after"] == 1).all()
    assert not (out / "raw" / "fallback_standalone.parquet").exists()     # fallback is off in smoke

    for job in raw["job"].unique():
        record = json.loads((out / "provenance" / f"{job}.json").read_text())
        assert record["backend"] == "external"

    fit = pl.read_csv(out / "tables" / "fit.csv")
    pvr = pl.read_csv(out / "tables" / "published_vs_reproduced.csv")
    assert pvr.columns == list(FINDINGS_COLUMNS)
    if not real_mongod:
        assert raw["log_bytes"].null_count() == raw.height
        assert fit["status"].str.starts_with("not fitted: wiredTiger.log not reported by this server").all()
        assert (pvr["verdict"] == "not comparable").all() and (pvr["reason"] == "stand-in").all()
        runs = pl.read_csv(out / "tables" / "runs.csv", infer_schema=False)
        assert (runs["log_bytes"] == "not reported by this server").all()
        spec = json.loads((out / "figures" / "log_bytes_vs_n.vl.json").read_text())
        assert "stand-in server" in json.dumps(spec["title"]) and "not reported by this server" in json.dumps(
            spec["title"]
        )
        # only the article's points are drawn: nothing measured is plotted as zero
        values = spec["data"]["values"] if "data" in spec else next(iter(spec["datasets"].values()))
        assert {v["source"] for v in values} == {"published (article)"}
    for name in FIGURES:
        assert (out / "figures" / f"{name}.png").stat().st_size > 5000
