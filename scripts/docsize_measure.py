"""Snakemake: one docsize run on one dataset, one repeat (one row per timed query, plus collection stats)."""
from pathlib import Path

from costlab.config import run_facts
from costlab.docsize.params import MeasureParams
from costlab.docsize.run import measure_job
from costlab.io import write_parquet
from costlab.repeats import SERVER_REPEATS

rep = SERVER_REPEATS.repeat_of(snakemake.wildcards.rep)
raw, collections = measure_job(MeasureParams.from_params(snakemake.params),
                               run_facts(snakemake.config, "docsize"), snakemake.wildcards.run,
                               snakemake.wildcards.dataset, snakemake.input.data, snakemake.output.provenance,
                               rep=rep)
write_parquet(raw, snakemake.output.raw)
write_parquet(collections, snakemake.output.collections)
Path(snakemake.log[0]).write_text(f"{raw.height} timed queries\n" + collections.write_csv())
