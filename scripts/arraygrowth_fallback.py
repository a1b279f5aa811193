"""Snakemake entry: the arraygrowth fallback sweep on one profile."""
from pathlib import Path

from costlab.arraygrowth.run import run_fallback_job

frame = run_fallback_job(snakemake.config, snakemake.wildcards.ag_profile, snakemake.params.fallback,  # noqa: F821
                         snakemake.output.raw, snakemake.output.provenance)  # noqa: F821
Path(snakemake.log[0]).write_text(frame.drop("profile_applied").write_csv())  # noqa: F821
