"""Snakemake entry: one loaded version grown again in the engine lab from the events the server loaded."""
import json
from pathlib import Path

from costlab.appversions.engine_vs_mongod import write_version
from costlab.appversions.params import EngineVsMongodParams

inp = snakemake.input  # noqa: F821
p = EngineVsMongodParams.from_params(snakemake.params)  # noqa: F821
row = write_version(inp.collstats, inp.provenance, inp.events, p.engine, snakemake.output.row)  # noqa: F821
Path(snakemake.log[0]).write_text(json.dumps(row["lab"], default=str) + "\n")  # noqa: F821
