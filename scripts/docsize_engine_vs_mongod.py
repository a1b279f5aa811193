"""Snakemake entry: docsize's engine lab against mongod on the same work (the small-cache run)."""

from pathlib import Path

from costlab.docsize.engine_vs_mongod import write_comparison
from costlab.docsize.params import EngineVsMongodParams
from costlab.engine.vs_mongod import summary_line

out = snakemake.output  # noqa: F821
inp = snakemake.input  # noqa: F821
p = EngineVsMongodParams.from_params(snakemake.params)  # noqa: F821
frame, rerun = write_comparison(
    list(inp.raw),
    list(inp.collections),
    list(inp.provenance),
    inp.engine_queries,
    p.study,
    p.engine,
    out.csv,
    [out.png, out.svg],
)
Path(snakemake.log[0]).write_text(  # noqa: F821
    summary_line(frame)
    + "\n"
    + (
        f"the lab ran the server's work again: {'; '.join(rerun)}\n"
        if rerun
        else "the engine job's own run\n"
    )
)
