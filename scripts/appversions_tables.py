"""Snakemake: collection stats beside the published, load-test summaries, published vs reproduced."""
from costlab.appversions.tables import write_tables

write_tables(snakemake.input, snakemake.output, snakemake.params.loadtest, snakemake.params.model_tolerance)
