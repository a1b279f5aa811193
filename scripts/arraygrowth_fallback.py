"""Snakemake entry: the arraygrowth fallback sweep on one profile."""
from pathlib import Path

from costlab.arraygrowth.params import FallbackSweepParams
from costlab.arraygrowth.run import run_fallback_job
from costlab.config import run_facts

frame = run_fallback_job(
    FallbackSweepParams.from_params(snakemake.params),
    run_facts(snakemake.config, "arraygrowth"),  # noqa: F821
    snakemake.wildcards.ag_profile,
    snakemake.output.raw,
    snakemake.output.provenance,
)  # noqa: F821
Path(snakemake.log[0]).write_text(frame.drop("profile_applied").write_csv())  # noqa: F821
