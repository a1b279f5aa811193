"""Snakemake: run the article's unique-index steps against the configured server; a failing step is a
result."""

from pathlib import Path

from costlab.config import run_facts
from costlab.io import write_csv
from costlab.uniqueidx.check import check_server, published_vs_reproduced
from costlab.uniqueidx.params import ConformanceParams

out = snakemake.output  # noqa: F821
conformance = check_server(
    ConformanceParams.from_params(snakemake.params),
    run_facts(snakemake.config, "uniqueidx"),  # noqa: F821
    out.provenance,
)
write_csv(conformance, out.conformance)
write_csv(published_vs_reproduced(conformance), out.published_vs_reproduced)
Path(snakemake.log[0]).write_text("".join(  # noqa: F821
    f"step {row['step']}: {row['outcome']} {row['detail']}\n" for row in conformance.iter_rows(named=True)))
