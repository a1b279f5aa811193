"""Snakemake entry: appversions storage sizes on the WiredTiger engine lab (no server)."""
from pathlib import Path

from costlab.appversions.engine import run_engine_job

out = snakemake.output  # noqa: F821
table = run_engine_job(snakemake.config, out.storage, out.verdicts, out.provenance,  # noqa: F821
                       snakemake.input.published)  # noqa: F821
Path(snakemake.log[0]).write_text(table.write_csv())  # noqa: F821
