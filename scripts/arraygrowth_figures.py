"""Snakemake entry: one arraygrowth figure (params.figure) as PNG, SVG and Vega-Lite JSON."""
from pathlib import Path

from costlab.arraygrowth.figures import build_figures
from costlab.arraygrowth.params import FigureParams

inputs, out = snakemake.input, snakemake.output  # noqa: F821
build_figures(inputs.raw, inputs.provenance, inputs.published,
              {FigureParams.from_params(snakemake.params).figure: [out.png, out.svg, out.json]},  # noqa: F821
              fallback_raw_paths=getattr(inputs, "fallback_raw", ()),
              fallback_provenance_paths=getattr(inputs, "fallback_provenance", ()),
              model_path=getattr(inputs, "model", None))
Path(snakemake.log[0]).write_text(f"wrote {out.png}, {out.svg}, {out.json}\n")  # noqa: F821
