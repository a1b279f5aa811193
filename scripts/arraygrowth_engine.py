"""Snakemake entry: the arraygrowth study on the WiredTiger engine lab (no server)."""
from pathlib import Path

from costlab.arraygrowth.engine import run_engine_job
from costlab.arraygrowth.params import EngineParams
from costlab.config import run_facts

out = snakemake.output  # noqa: F821
inp = snakemake.input  # noqa: F821
table = run_engine_job(EngineParams.from_params(snakemake.params), run_facts(snakemake.config, "arraygrowth"),  # noqa: F821
                       out.log_bytes, out.fit, out.provenance, out.get("fallback"), out.verdicts,
                       inp.published_log_bytes, inp.published_cursor_calls, inp.tolerances,
                       out.get("elements"))
Path(snakemake.log[0]).write_text(table.write_csv())  # noqa: F821
