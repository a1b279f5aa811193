"""Snakemake entry: one run of the docsize protocol on one declared document's dataset."""
from pathlib import Path

from costlab.config import run_facts
from costlab.docsize.document_runs import measure_job
from costlab.docsize.params import DocumentMeasureParams
from costlab.io import write_parquet

raw = measure_job(DocumentMeasureParams.from_params(snakemake.params),  # noqa: F821
                  run_facts(snakemake.config, "docsize"), snakemake.wildcards.run,  # noqa: F821
                  snakemake.wildcards.size, snakemake.input.data, snakemake.output.provenance)  # noqa: F821
write_parquet(raw, snakemake.output.raw)  # noqa: F821
Path(snakemake.log[0]).write_text(f"{raw.height} timed queries\n")  # noqa: F821
