"""Snakemake: load one docsize dataset into a server on its data directory (dataset.json written last)."""
import json
from pathlib import Path

from costlab.docsize.load import load_job

record = load_job(
    snakemake.config, snakemake.wildcards.dataset, snakemake.output.data, snakemake.output.provenance
)
Path(snakemake.log[0]).write_text(json.dumps(record, indent=2, default=str) + "\n")
