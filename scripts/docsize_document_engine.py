"""Snakemake entry: one declared document (docsize.documents) on the WiredTiger engine lab (no server)."""
from pathlib import Path

from costlab.config import run_facts
from costlab.docsize.engine import run_document_engine_job
from costlab.docsize.params import DocumentEngineParams

out = snakemake.output  # noqa: F821
table = run_document_engine_job(DocumentEngineParams.from_params(snakemake.params),  # noqa: F821
                                run_facts(snakemake.config, "docsize"),  # noqa: F821
                                out.cache_reads, out.queries, out.provenance)
Path(snakemake.log[0]).write_text(table.write_csv())  # noqa: F821
