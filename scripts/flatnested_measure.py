"""Snakemake: time the absent-field query on one shape (one row per query)."""
from pathlib import Path

from costlab.config import run_facts
from costlab.flatnested.params import MeasureParams
from costlab.flatnested.run import measure_dataset
from costlab.io import write_parquet
from costlab.repeats import SERVER_REPEATS

raw = measure_dataset(MeasureParams.from_params(snakemake.params), run_facts(snakemake.config, "flatnested"),  # noqa: F821
                      snakemake.input.data, snakemake.wildcards.shape, snakemake.output.provenance,  # noqa: F821
                      rep=SERVER_REPEATS.repeat_of(snakemake.wildcards.rep))  # noqa: F821
write_parquet(raw, snakemake.output.raw)  # noqa: F821
Path(snakemake.log[0]).write_text(  # noqa: F821
    f"{raw.height} runs, client median {raw['client_ms'].median():.3f} ms, server kind "
    f"{raw['server_kind'][0]}\n"
)
