"""Snakemake: the phased load test of one app version on its loaded data directory."""
import sys
from pathlib import Path

from costlab.appversions.loadtest import loadtest_job

# Load-test workers are spawned processes: they re-import this file as __mp_main__, so guard the job.
if __name__ == "__main__":
    facts = loadtest_job(snakemake.config, snakemake.wildcards.version, snakemake.input.data, snakemake.output.raw,
                         snakemake.output.provenance)
    # Say which targets were not met and whether the client or the server fell behind.
    sys.stderr.write(facts["shortfalls"])
    Path(snakemake.log[0]).write_text(facts["shortfalls"])
