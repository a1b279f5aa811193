"""Snakemake entry: the arraygrowth study on the WiredTiger engine lab (no server)."""
from pathlib import Path

from costlab.arraygrowth.engine import run_engine_job

out = snakemake.output  # noqa: F821
table = run_engine_job(snakemake.config, out.log_bytes, out.fit, out.provenance,  # noqa: F821
                       out.get("fallback"))
Path(snakemake.log[0]).write_text(table.write_csv())  # noqa: F821
