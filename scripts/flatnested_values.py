"""Snakemake: the fake values every flatnested shape is built from (server-free)."""
from pathlib import Path

from costlab.flatnested.generate import generate_values
from costlab.io import write_parquet

values = generate_values(snakemake.params.documents, snakemake.params.groups, snakemake.params.seed)  # noqa: F821
write_parquet(values, snakemake.output[0])  # noqa: F821
Path(snakemake.log[0]).write_text(f"{values.height} documents x {values.width - 1} fields, "  # noqa: F821
                                  f"seed {snakemake.params.seed}\n")  # noqa: F821
