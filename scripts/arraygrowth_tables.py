"""Snakemake entry: arraygrowth tables (runs, fit, counts, published_vs_reproduced, fallback)."""
from costlab.arraygrowth.tables import build_tables

inputs = snakemake.input
build_tables(inputs.raw, inputs.provenance, dict(snakemake.output.items()),
             fallback_raw_paths=getattr(inputs, "fallback_raw", ()),
             fallback_provenance_paths=getattr(inputs, "fallback_provenance", ()),
             model_path=getattr(inputs, "model", None),
             published_log_bytes=inputs.published_log_bytes, published_cursor_calls=inputs.published_cursor_calls)
