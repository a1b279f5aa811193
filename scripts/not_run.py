"""Snakemake entry: record that this study's mongod part was not run (no MongoDB server)."""
from pathlib import Path

from costlab.server.setup import write_not_run

record = write_not_run(snakemake.output[0])  # noqa: F821
Path(snakemake.log[0]).write_text(
    f"{snakemake.wildcards.study}: {record['part']} part not run: {record['reason']}\n"
)  # noqa: F821
