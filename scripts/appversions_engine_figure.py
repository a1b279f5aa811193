"""Snakemake entry: the appversions engine-lab figure (storage per event) as PNG, SVG and Vega-Lite JSON."""
from pathlib import Path

from costlab.appversions.figures import build_engine_figure

inp, out = snakemake.input, snakemake.output  # noqa: F821
build_engine_figure(inp.storage, [out.png, out.svg, out.json])
Path(snakemake.log[0]).write_text(f"wrote {out.png}, {out.svg}, {out.json}\n")  # noqa: F821
