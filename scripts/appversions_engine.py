"""Snakemake entry: appversions storage sizes on the WiredTiger engine lab (no server), the versions' runs
merged."""

from pathlib import Path

from costlab.appversions.engine import merge_engine_job
from costlab.appversions.params import EngineParams
from costlab.config import run_facts

out = snakemake.output  # noqa: F821
table = merge_engine_job(
    EngineParams.from_params(snakemake.params),
    run_facts(snakemake.config, "appversions"),  # noqa: F821
    list(snakemake.input.versions),
    out.storage,
    out.verdicts,  # noqa: F821
    out.provenance,
    snakemake.input.published,
    snakemake.input.tolerances,
    snakemake.input.spread,  # noqa: F821
)  # noqa: F821
Path(snakemake.log[0]).write_text(table.write_csv())  # noqa: F821
