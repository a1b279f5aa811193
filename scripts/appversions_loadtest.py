"""Snakemake: the phased load test of one app version on its loaded data directory."""
import sys
from pathlib import Path

from costlab.appversions.loadtest import loadtest_job
from costlab.appversions.params import LoadtestParams
from costlab.config import run_facts

# Load-test workers are spawned processes: they re-import this file as __mp_main__, so guard the job.
if __name__ == "__main__":
    facts = loadtest_job(LoadtestParams.from_params(snakemake.params),
                         run_facts(snakemake.config, "appversions"), snakemake.wildcards.version,
                         snakemake.input.data, snakemake.output.raw, snakemake.output.provenance,
                         snakemake.output.metrics)
    # The log and the console say what ran (operations ok, failed, not started); which steps met their
    # target is judged by appversions_tables, whose params hold the tolerance and binning.
    Path(snakemake.log[0]).write_text(facts["operations"])
    sys.stderr.write(facts["operations"])
