"""Snakemake entry: one app version's storage sizes on the WiredTiger engine lab (no server), one repeat."""
import json
from pathlib import Path

from costlab.appversions.engine import run_version_job
from costlab.appversions.params import EngineVersionParams
from costlab.config import run_facts
from costlab.repeats import ENGINE_REPEATS

record = run_version_job(EngineVersionParams.from_params(snakemake.params),  # noqa: F821
                         run_facts(snakemake.config, "appversions"),  # noqa: F821
                         snakemake.wildcards.version, snakemake.output.row,  # noqa: F821
                         rep=ENGINE_REPEATS.repeat_of(snakemake.wildcards.rep),  # noqa: F821
                         # your own events (appversions.events): the events job's file of them
                         own_events=(list(snakemake.input.events) or [None])[0])  # noqa: F821
Path(snakemake.log[0]).write_text(json.dumps(record["row"], default=str) + "\n")  # noqa: F821
