"""Snakemake entry: one arraygrowth measuring job (profile x workload, every N)."""
from costlab.arraygrowth.run import run_growth_job

run_growth_job(snakemake.config, snakemake.wildcards.ag_profile, snakemake.wildcards.ag_workload,
               snakemake.params.ns, snakemake.output.raw, snakemake.output.provenance)
