"""Snakemake entry: the docsize study on the WiredTiger engine lab (no server)."""
from pathlib import Path

from costlab.config import run_facts
from costlab.docsize.engine import run_engine_job
from costlab.docsize.params import EngineParams

out = snakemake.output  # noqa: F821
table = run_engine_job(EngineParams.from_params(snakemake.params), run_facts(snakemake.config, "docsize"),  # noqa: F821
                       out.cache_reads, out.queries, out.provenance, out.verdicts,
                       snakemake.input.published_queries, tolerances_path=snakemake.input.tolerances)  # noqa: F821
Path(snakemake.log[0]).write_text(table.write_csv())  # noqa: F821
