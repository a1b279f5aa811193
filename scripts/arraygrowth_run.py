"""Snakemake entry: one arraygrowth measuring job (profile x workload, every N)."""
from pathlib import Path

from costlab.arraygrowth.run import run_growth_job

frame = run_growth_job(snakemake.config, snakemake.wildcards.ag_profile, snakemake.wildcards.ag_workload,  # noqa: F821
                       snakemake.params.ns, snakemake.output.raw, snakemake.output.provenance)  # noqa: F821
Path(snakemake.log[0]).write_text(frame.drop("profile_applied").write_csv())  # noqa: F821
