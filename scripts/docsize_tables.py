"""Snakemake: docsize summaries, the article's tables with published beside reproduced, findings."""
from pathlib import Path

from costlab.docsize.params import TablesParams
from costlab.docsize.tables import build_tables
from costlab.io import write_csv

tables = build_tables(snakemake.input.raw, snakemake.input.collections, snakemake.input.model,
                      snakemake.input.published_collections, snakemake.input.published_queries,
                      TablesParams.from_params(snakemake.params).window_minutes, snakemake.input.tolerances,
                      snakemake.input.facts)
for name, frame in tables.items():
    write_csv(frame, Path(snakemake.output.summary).parent / f"{name}.csv")
Path(snakemake.log[0]).write_text(tables["published_vs_reproduced"].write_csv())
