"""Snakemake: the fake values every flatnested shape is built from (server-free)."""
from pathlib import Path

from costlab.flatnested.generate import generate_values
from costlab.flatnested.params import ValuesParams
from costlab.io import write_parquet

params = ValuesParams.from_params(snakemake.params)  # noqa: F821
values = generate_values(params.documents, params.groups, params.seed)
write_parquet(values, snakemake.output[0])  # noqa: F821
Path(snakemake.log[0]).write_text(f"{values.height} documents x {values.width - 1} fields, "  # noqa: F821
                                  f"seed {params.seed}\n")
