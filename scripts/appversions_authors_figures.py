"""Snakemake: the authors'-driver load-test figures (PNG, SVG, Vega-Lite JSON), stand-in labelled from
provenance."""

from pathlib import Path

from costlab.appversions.figures import build_authors_figures
from costlab.appversions.params import FiguresParams
from costlab.server.provenance import is_stand_in, read_provenance

params = FiguresParams.from_params(snakemake.params)  # noqa: F821
stand_in = any(is_stand_in(read_provenance(p)) for p in snakemake.input.provenance)  # noqa: F821
written = build_authors_figures(snakemake.input.steps, params.loadtest_versions, stand_in,  # noqa: F821
                                Path(snakemake.output[0]).parent, params.loadtest,  # noqa: F821
                                snakemake.input.metrics)  # noqa: F821
Path(snakemake.log[0]).write_text("".join(f"{path}\n" for path in written))  # noqa: F821
