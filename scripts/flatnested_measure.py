"""Snakemake: time the absent-field query on one shape (one row per query)."""
from pathlib import Path

from costlab.flatnested.run import measure_dataset
from costlab.io import write_parquet

raw = measure_dataset(snakemake.config, snakemake.input.data, snakemake.wildcards.shape,  # noqa: F821
                      snakemake.params.runs, snakemake.params.warmup_runs, snakemake.output.provenance)  # noqa: F821
write_parquet(raw, snakemake.output.raw)  # noqa: F821
Path(snakemake.log[0]).write_text(  # noqa: F821
    f"{raw.height} runs, client median {raw['client_ms'].median():.3f} ms, server kind "
    f"{raw['server_kind'][0]}\n"
)
