"""Snakemake: Get Reports of one loaded version must equal the reference model (else the job fails)."""
from pathlib import Path

from costlab.appversions.correctness import correctness_job
from costlab.appversions.variants import register_variants

# your own versions (appversions.variants) are versions in this process too
register_variants(snakemake.config)  # noqa: F821

correctness_job(snakemake.config, snakemake.wildcards.version, snakemake.input.events, snakemake.input.data,
                snakemake.output.checked, snakemake.output.provenance, snakemake.output.midday)
Path(snakemake.log[0]).write_text(f"{snakemake.wildcards.version}: Get Reports equal the model\n")
