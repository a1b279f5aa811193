"""Snakemake entry: server-free model of the delta-path conditions for the fallback sweep."""
from pathlib import Path

from costlab.arraygrowth.model import write_fallback_model
from costlab.arraygrowth.params import FallbackSweepParams

frame = write_fallback_model(FallbackSweepParams.from_params(snakemake.params).fallback, snakemake.output[0])  # noqa: F821
Path(snakemake.log[0]).write_text(frame.write_csv())  # noqa: F821
