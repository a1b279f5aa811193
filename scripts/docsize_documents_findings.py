"""Snakemake entry: the declared documents beside the orders, rows of kind "user variant" (no server)."""
from pathlib import Path

from costlab.docsize.document_findings import write_document_findings
from costlab.docsize.params import DocumentFindingsParams

frame = write_document_findings(DocumentFindingsParams.from_params(snakemake.params),  # noqa: F821
                                snakemake.input.orders, list(snakemake.input.documents),  # noqa: F821
                                snakemake.output[0])  # noqa: F821
Path(snakemake.log[0]).write_text(frame.write_csv())  # noqa: F821
