"""Snakemake entry: arraygrowth tables (runs, fit, counts, published_vs_reproduced, fallback)."""
from pathlib import Path

from costlab.arraygrowth.tables import build_tables

inputs, outputs = snakemake.input, snakemake.output  # noqa: F821
build_tables(
    inputs.raw,
    inputs.provenance,
    dict(outputs.items()),
    fallback_raw_paths=getattr(inputs, "fallback_raw", ()),
    fallback_provenance_paths=getattr(inputs, "fallback_provenance", ()),
    model_path=getattr(inputs, "model", None),
    published_log_bytes=inputs.published_log_bytes,
    published_cursor_calls=inputs.published_cursor_calls,
    tolerances_path=inputs.tolerances,
    element_raw_paths=getattr(inputs, "element_raw", ()),
    element_provenance_paths=getattr(inputs, "element_provenance", ()),
)
Path(snakemake.log[0]).write_text(Path(outputs.fit).read_text())  # noqa: F821
