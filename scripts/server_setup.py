"""Snakemake entry: resolve the server of one profile and write results/servers/<profile>.json."""
import sys

from costlab.server.setup import run_setup_step

sys.exit(run_setup_step(snakemake.output[0], snakemake.config["server"], snakemake.params.backend,  # noqa: F821
                        snakemake.wildcards.server_profile, snakemake.log[0]))  # noqa: F821
