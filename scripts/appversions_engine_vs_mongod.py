"""Snakemake entry: appversions' engine lab against mongod on the same work (every loaded version)."""
from pathlib import Path

from costlab.appversions.engine_vs_mongod import write_comparison
from costlab.engine.vs_mongod import summary_line

out = snakemake.output  # noqa: F821
frame = write_comparison(list(snakemake.input.versions), out.csv, [out.png, out.svg])  # noqa: F821
Path(snakemake.log[0]).write_text(summary_line(frame) + "\n")  # noqa: F821
