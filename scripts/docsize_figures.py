"""Snakemake: the docsize figures (PNG, SVG, Vega-Lite JSON), stand-in labelled from provenance."""
from pathlib import Path

from costlab.docsize.figures import build_figures
from costlab.docsize.params import FiguresParams
from costlab.server.provenance import is_stand_in, read_provenance

stand_in = any(is_stand_in(read_provenance(p)) for p in snakemake.input.provenance)
written = build_figures(
    snakemake.input.summary,
    snakemake.input.published_queries,
    stand_in,
    Path(snakemake.output[0]).parent,
    FiguresParams.from_params(snakemake.params).window_minutes,
)
Path(snakemake.log[0]).write_text(f"stand-in: {stand_in}\n" + "".join(f"{p}\n" for p in written))
