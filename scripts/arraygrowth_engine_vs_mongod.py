"""Snakemake entry: arraygrowth's engine lab against mongod on the same work."""
from pathlib import Path

from costlab.arraygrowth.engine_vs_mongod import write_comparison
from costlab.arraygrowth.params import EngineVsMongodParams
from costlab.engine.vs_mongod import summary_line

out = snakemake.output  # noqa: F821
inp = snakemake.input  # noqa: F821
p = EngineVsMongodParams.from_params(snakemake.params)  # noqa: F821
frame = write_comparison(list(inp.raw), list(inp.provenance), p.engine, p.writes_per_second,
                         out.csv, [out.png, out.svg])
Path(snakemake.log[0]).write_text(summary_line(frame) + "\n")  # noqa: F821
