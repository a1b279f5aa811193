"""Snakemake entry: the docsize study on the WiredTiger engine lab (no server)."""
from pathlib import Path

from costlab.docsize.engine import run_engine_job

out = snakemake.output  # noqa: F821
table = run_engine_job(snakemake.config, out.cache_reads, out.queries, out.provenance,  # noqa: F821
                       out.verdicts, snakemake.input.published_queries,  # noqa: F821
                       tolerances_path=snakemake.input.tolerances)  # noqa: F821
Path(snakemake.log[0]).write_text(table.write_csv())  # noqa: F821
