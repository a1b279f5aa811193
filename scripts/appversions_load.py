"""Snakemake: load one app version through its Bulk Upsert, then collStats (dataset.json written last)."""
import json
from pathlib import Path

from costlab.appversions.load import load_job
from costlab.appversions.params import LoadParams
from costlab.config import run_facts

# Load workers are spawned processes: they re-import this file as __mp_main__, so guard the job.
if __name__ == "__main__":
    row = load_job(LoadParams.from_params(snakemake.params), run_facts(snakemake.config, "appversions"),
                   snakemake.wildcards.version, snakemake.input.events, snakemake.output.data,
                   snakemake.output.collstats, snakemake.output.provenance)
    Path(snakemake.log[0]).write_text(json.dumps(row, indent=2) + "\n")
