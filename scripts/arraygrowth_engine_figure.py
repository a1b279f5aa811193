"""Snakemake entry: the arraygrowth engine-lab figure (journal bytes vs N) as PNG, SVG and Vega-Lite JSON."""
from pathlib import Path

from costlab.arraygrowth.figures import build_engine_figure

inp, out = snakemake.input, snakemake.output  # noqa: F821
build_engine_figure(inp.log_bytes, inp.fit, inp.published, [out.png, out.svg, out.json])
Path(snakemake.log[0]).write_text(f"wrote {out.png}, {out.svg}, {out.json}\n")  # noqa: F821
