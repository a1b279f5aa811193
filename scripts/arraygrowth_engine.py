"""Snakemake entry: the arraygrowth engine lab's repeats merged (no server)."""
from pathlib import Path

from costlab.arraygrowth.engine import merge_engine_repeats
from costlab.arraygrowth.params import EngineMergeParams
from costlab.config import run_facts

out = snakemake.output  # noqa: F821
inp = snakemake.input  # noqa: F821
table = merge_engine_repeats(EngineMergeParams.from_params(snakemake.params),  # noqa: F821
                             run_facts(snakemake.config, "arraygrowth"),  # noqa: F821
                             list(inp.rep_log_bytes), list(inp.rep_provenance), out.log_bytes, out.fit,
                             out.provenance, out.verdicts, inp.published_log_bytes,
                             inp.published_cursor_calls,
                             inp.tolerances, list(inp.get("rep_fallback", [])), out.get("fallback"),
                             list(inp.get("rep_elements", [])), out.get("elements"))
Path(snakemake.log[0]).write_text(table.write_csv())  # noqa: F821
