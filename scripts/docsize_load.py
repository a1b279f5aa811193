"""Snakemake: load one docsize dataset into a server on its data directory (dataset.json written last)."""
from costlab.docsize.load import load_job

load_job(snakemake.config, snakemake.wildcards.dataset, snakemake.output.data, snakemake.output.provenance)
