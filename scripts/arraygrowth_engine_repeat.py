"""Snakemake entry: one repeat of the arraygrowth study on the WiredTiger engine lab (no server)."""
from pathlib import Path

from costlab.arraygrowth.engine import run_engine_repeat
from costlab.arraygrowth.params import EngineParams
from costlab.config import run_facts
from costlab.repeats import ENGINE_REPEATS

out = snakemake.output  # noqa: F821
table = run_engine_repeat(EngineParams.from_params(snakemake.params),  # noqa: F821
                          run_facts(snakemake.config, "arraygrowth"),  # noqa: F821
                          ENGINE_REPEATS.repeat_of(snakemake.wildcards.rep),  # noqa: F821
                          out.log_bytes, out.provenance, out.get("fallback"), out.get("elements"))
Path(snakemake.log[0]).write_text(table.write_csv())  # noqa: F821
