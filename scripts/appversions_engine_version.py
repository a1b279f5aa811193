"""Snakemake entry: one app version's storage sizes on the WiredTiger engine lab (no server)."""
import json
from pathlib import Path

from costlab.appversions.engine import run_version_job

record = run_version_job(snakemake.config, snakemake.wildcards.version, snakemake.output.row)  # noqa: F821
Path(snakemake.log[0]).write_text(json.dumps(record["row"], default=str) + "\n")  # noqa: F821
