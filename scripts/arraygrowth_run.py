"""Snakemake entry: one arraygrowth measuring job (profile x workload, every N)."""
from pathlib import Path

from costlab.arraygrowth.params import RunParams
from costlab.arraygrowth.run import run_growth_job
from costlab.config import run_facts

frame = run_growth_job(RunParams.from_params(snakemake.params), run_facts(snakemake.config, "arraygrowth"),  # noqa: F821
                       snakemake.wildcards.ag_profile, snakemake.wildcards.ag_workload,  # noqa: F821
                       snakemake.output.raw, snakemake.output.provenance)  # noqa: F821
Path(snakemake.log[0]).write_text(frame.drop("profile_applied").write_csv())  # noqa: F821
