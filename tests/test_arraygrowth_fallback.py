"""The fallback sweep end to end without Snakemake (it is off in smoke.yaml): jobs, model, table, figure."""
import json

import polars as pl

from costlab.arraygrowth.figures import build_figures
from costlab.arraygrowth.model import write_fallback_model
from costlab.arraygrowth.params import FallbackSweepParams, RunParams
from costlab.arraygrowth.published import LOG_BYTES_CSV
from costlab.arraygrowth.run import run_fallback_job, run_growth_job
from costlab.arraygrowth.tables import build_tables
from costlab.config import run_facts

SECTION = {"enabled": True, "updates": 24, "elements_per_update": 3, "big_element_bytes": 64,
           "small_doc_elements": 8, "slice_elements": 10,
           "variants": ["push_one", "small_docs", "push_many", "big_elements", "push_slice", "set_array"]}


def test_fallback_sweep_table_and_figure(external_server_config, tmp_path, real_mongod):
    run = run_facts({"server": external_server_config}, "arraygrowth")
    raw, prov, fb_raw, fb_prov = [], [], [], []
    for profile in ("standalone", "replset-1"):
        for workload in ("insert", "push"):
            raw.append(tmp_path / f"raw/{profile}_{workload}.parquet")
            prov.append(tmp_path / f"prov/{profile}_{workload}.json")
            run_growth_job(RunParams(ns=[10, 20]), run, profile, workload, raw[-1], prov[-1])
        fb_raw.append(tmp_path / f"raw/fallback_{profile}.parquet")
        fb_prov.append(tmp_path / f"prov/fallback_{profile}.json")
        run_fallback_job(FallbackSweepParams(fallback=SECTION), run, profile, fb_raw[-1], fb_prov[-1])
    model_path = tmp_path / "model/fallback_conditions.csv"
    write_fallback_model(SECTION, model_path)

    tables = {name: tmp_path / f"tables/{name}.csv" for name in
              ("runs", "fit", "counts", "published_vs_reproduced", "fallback")}
    build_tables(raw, prov, tables, fb_raw, fb_prov, model_path)
    fallback = pl.read_csv(tables["fallback"], infer_schema=False)
    assert fallback.height == 12
    # what the server stored equals the model's BSON arithmetic, for every variant and profile
    assert (fallback["max_doc_bytes_after"] == fallback["model_final_doc_bytes"]).all()
    standalone = fallback.filter(pl.col("profile") == "standalone")
    if not real_mongod:
        assert (fallback["cursor_modify_per_update"] == "not reported by this server").all()
        assert (fallback["server_kind"] == "stand-in").all()

    figure = [tmp_path / f"figures/fallback_sweep.{ext}" for ext in ("png", "svg", "vl.json")]
    build_figures(raw, prov, LOG_BYTES_CSV, {"fallback": figure}, fb_raw, fb_prov, model_path)
    assert all(p.stat().st_size > 1000 for p in figure)
    spec = json.dumps(json.loads(figure[2].read_text()))
    if not real_mongod:
        assert "cursor modify calls per update: not reported by this server" in spec
        assert "stand-in server" in spec
    assert standalone.height == 6
