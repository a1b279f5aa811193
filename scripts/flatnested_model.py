"""Snakemake: BSON data size of every shape, computed without a server."""
from pathlib import Path

from costlab.flatnested.generate import MAX_FIELDS
from costlab.flatnested.model import published_vs_model, size_table
from costlab.flatnested.params import ModelParams
from costlab.flatnested.shapes import parse_shape
from costlab.inputs import read_csv, read_parquet
from costlab.io import write_csv
from costlab.published import read_tolerances

shapes = [parse_shape(name, MAX_FIELDS) for name in ModelParams.from_params(snakemake.params).shapes]  # noqa: F821
sizes = size_table(read_parquet(snakemake.input.values), shapes)  # noqa: F821
write_csv(sizes, snakemake.output.sizes)  # noqa: F821
write_csv(published_vs_model(sizes, read_csv(snakemake.input.published_sizes),  # noqa: F821
                             read_tolerances(snakemake.input.tolerances)),  # noqa: F821
          snakemake.output.published_vs_model)  # noqa: F821
Path(snakemake.log[0]).write_text(sizes.write_csv())  # noqa: F821
