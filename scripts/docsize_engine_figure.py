"""Snakemake entry: the docsize engine-lab figure (bytes read into cache per query) as PNG, SVG and Vega-Lite
JSON."""

from pathlib import Path

from costlab.docsize.figures import build_engine_figure

inp, out = snakemake.input, snakemake.output  # noqa: F821
build_engine_figure(inp.cache_reads, inp.published_queries, [out.png, out.svg, out.json])
Path(snakemake.log[0]).write_text(f"wrote {out.png}, {out.svg}, {out.json}\n")  # noqa: F821
