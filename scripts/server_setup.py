"""Snakemake entry: resolve the server of one profile and write results/servers/<profile>.json."""
import sys

from costlab.config import run_facts
from costlab.server.params import SetupParams
from costlab.server.setup import run_setup_step

# The server section (with any credentials) is the run's fact, never a param: costlab.jobs.RunFacts.
sys.exit(run_setup_step(snakemake.output[0], run_facts(snakemake.config).server,  # noqa: F821
                        SetupParams.from_params(snakemake.params).backend,  # noqa: F821
                        snakemake.wildcards.server_profile, snakemake.log[0]))  # noqa: F821
