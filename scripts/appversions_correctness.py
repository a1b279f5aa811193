"""Snakemake: Get Reports of one loaded version must equal the reference model (else the job fails)."""
from pathlib import Path

from costlab.appversions.correctness import correctness_job
from costlab.appversions.params import CorrectnessParams
from costlab.config import run_facts

correctness_job(CorrectnessParams.from_params(snakemake.params), run_facts(snakemake.config, "appversions"),
                snakemake.wildcards.version, snakemake.input.events, snakemake.input.data,
                snakemake.output.checked, snakemake.output.provenance, snakemake.output.midday)
Path(snakemake.log[0]).write_text(f"{snakemake.wildcards.version}: Get Reports equal the model\n")
