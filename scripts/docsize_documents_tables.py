"""Snakemake entry: the declared documents' timings beside the orders', rows of kind "user variant"."""
from pathlib import Path

from costlab.docsize.document_runs import write_server_findings
from costlab.docsize.params import DocumentFindingsParams

frame = write_server_findings(DocumentFindingsParams.from_params(snakemake.params),  # noqa: F821
                              list(snakemake.input.orders), list(snakemake.input.documents),  # noqa: F821
                              snakemake.output[0])  # noqa: F821
Path(snakemake.log[0]).write_text(frame.write_csv())  # noqa: F821
