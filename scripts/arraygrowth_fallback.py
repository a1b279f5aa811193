"""Snakemake entry: the arraygrowth fallback sweep on one profile."""
from costlab.arraygrowth.run import run_fallback_job

run_fallback_job(snakemake.config, snakemake.wildcards.ag_profile, snakemake.params.fallback,
                 snakemake.output.raw, snakemake.output.provenance)
