"""Snakemake: collection stats beside the published, load-test summaries, published vs reproduced."""
from pathlib import Path

from costlab.appversions.tables import write_tables

verdicts = write_tables(
    snakemake.input, snakemake.output, snakemake.params.loadtest, snakemake.params.model_tolerance
)
Path(snakemake.log[0]).write_text(verdicts.write_csv())
