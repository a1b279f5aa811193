"""Snakemake: time of 100 queries by field count, flat vs structured, published points marked."""
from pathlib import Path

from costlab.flatnested.figures import time_chart
from costlab.inputs import read_csv
from costlab.report.charts import save_chart

comparison = read_csv(snakemake.input.comparison)  # noqa: F821
stand_in = bool((comparison["server_kind"] == "stand-in").any())
out = snakemake.output  # noqa: F821
save_chart(time_chart(comparison, stand_in), out.png, out.svg, out.json)
Path(snakemake.log[0]).write_text(f"stand-in: {stand_in}\n")  # noqa: F821
