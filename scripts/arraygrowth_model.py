"""Snakemake entry: server-free model of the delta-path conditions for the fallback sweep."""
from costlab.arraygrowth.model import write_fallback_model

write_fallback_model(snakemake.params.fallback, snakemake.output[0])
