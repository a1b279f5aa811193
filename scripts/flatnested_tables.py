"""Snakemake: timing summary, reproduced-vs-published comparison and the report's contract table."""
from pathlib import Path

from costlab.flatnested.tables import build_tables
from costlab.io import write_csv

inputs = snakemake.input  # noqa: F821
tables = build_tables(
    inputs.raw,
    inputs.sizes,
    inputs.published_timings,
    inputs.published_sizes,
    inputs.provenance,
    inputs.tolerances,
)
for name, frame in tables.items():
    write_csv(frame, snakemake.output[name])  # noqa: F821
Path(snakemake.log[0]).write_text(tables["published_vs_reproduced"].write_csv())  # noqa: F821
