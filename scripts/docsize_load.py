"""Snakemake: load one docsize dataset into a server on its data directory (dataset.json written last)."""
import json
from pathlib import Path

from costlab.config import run_facts
from costlab.docsize.load import load_job
from costlab.docsize.params import LoadParams

record = load_job(LoadParams.from_params(snakemake.params), run_facts(snakemake.config, "docsize"),
                  snakemake.wildcards.dataset, snakemake.output.data, snakemake.output.provenance)
Path(snakemake.log[0]).write_text(json.dumps(record, indent=2, default=str) + "\n")
