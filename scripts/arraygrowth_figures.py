"""Snakemake entry: one arraygrowth figure (params.figure) as PNG, SVG and Vega-Lite JSON."""
from costlab.arraygrowth.figures import build_figures

inputs, out = snakemake.input, snakemake.output
build_figures(inputs.raw, inputs.provenance, inputs.published, {snakemake.params.figure: [out.png, out.svg, out.json]},
              fallback_raw_paths=getattr(inputs, "fallback_raw", ()),
              fallback_provenance_paths=getattr(inputs, "fallback_provenance", ()),
              model_path=getattr(inputs, "model", None))
