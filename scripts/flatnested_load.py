"""Snakemake: load one shape into its data directory (dataset.json marker written last)."""
import json
from pathlib import Path

from costlab.config import run_facts
from costlab.flatnested.params import LoadParams
from costlab.flatnested.run import load_dataset

record = load_dataset(LoadParams.from_params(snakemake.params), run_facts(snakemake.config, "flatnested"),  # noqa: F821
                      snakemake.input.values, snakemake.wildcards.shape,  # noqa: F821
                      snakemake.output.data, snakemake.output.provenance)  # noqa: F821
Path(snakemake.log[0]).write_text(json.dumps(record) + "\n")  # noqa: F821
