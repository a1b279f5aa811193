"""Snakemake: the phased load test of one app version on its loaded data directory."""
from costlab.appversions.loadtest import loadtest_job

# Load-test workers are spawned processes: they re-import this file as __mp_main__, so guard the job.
if __name__ == "__main__":
    loadtest_job(snakemake.config, snakemake.wildcards.version, snakemake.input.data, snakemake.output.raw,
                 snakemake.output.provenance)
