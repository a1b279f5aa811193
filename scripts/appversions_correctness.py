"""Snakemake: Get Reports of one loaded version must equal the reference model (else the job fails)."""
from pathlib import Path

from costlab.appversions.correctness import correctness_job

correctness_job(snakemake.config, snakemake.wildcards.version, snakemake.input.events, snakemake.input.data,
                snakemake.output.checked, snakemake.output.provenance, snakemake.output.midday)
Path(snakemake.log[0]).write_text(f"{snakemake.wildcards.version}: Get Reports equal the model\n")
