"""Snakemake entry: load one declared document (docsize.documents) at one size into a server."""
from costlab.config import run_facts
from costlab.docsize.document_runs import load_job
from costlab.docsize.params import DocumentLoadParams

load_job(DocumentLoadParams.from_params(snakemake.params), run_facts(snakemake.config, "docsize"),  # noqa: F821
         snakemake.wildcards.size, snakemake.output.data, snakemake.output.provenance)  # noqa: F821
