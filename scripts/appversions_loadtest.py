"""Snakemake: the phased load test of one app version on its loaded data directory."""
import sys
from pathlib import Path

from costlab.appversions.loadtest import loadtest_job

# Load-test workers are spawned processes: they re-import this file as __mp_main__, so guard the job.
if __name__ == "__main__":
    facts = loadtest_job(
        snakemake.config,
        snakemake.wildcards.version,
        snakemake.input.data,
        snakemake.output.raw,
        snakemake.output.provenance,
        snakemake.output.metrics,
    )
    # The log says which targets were not met and whether the client or the server fell behind;
    # the console gets its first line (steps at target) and where the rest is.
    Path(snakemake.log[0]).write_text(facts["shortfalls"])
    sys.stderr.write(f"{facts['shortfalls'].splitlines()[0]} (which side fell behind: {snakemake.log[0]})\n")
