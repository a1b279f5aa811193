"""Snakemake: the appversions figures (PNG, SVG, Vega-Lite JSON), stand-in labelled from provenance."""
from pathlib import Path

from costlab.appversions.figures import build_figures
from costlab.appversions.params import FiguresParams
from costlab.server.provenance import is_stand_in, read_provenance

params = FiguresParams.from_params(snakemake.params)
stand_in = any(is_stand_in(read_provenance(p)) for p in snakemake.input.provenance)
written = build_figures(
    snakemake.input.collection_stats,
    snakemake.input.loadtest_bins,
    snakemake.input.facts,
    params.loadtest_versions,
    stand_in,
    Path(snakemake.output[0]).parent,
    params.loadtest,
    snakemake.input.metrics,
)
Path(snakemake.log[0]).write_text("".join(f"{path}\n" for path in written))
