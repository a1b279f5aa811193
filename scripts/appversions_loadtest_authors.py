"""Snakemake: the authors'-way (closed-loop) load test of one app version on its loaded data directory."""
import json
from pathlib import Path

from costlab.appversions.closedloop import closed_loop_job
from costlab.appversions.params import AuthorsLoadtestParams
from costlab.config import run_facts

# Load-test workers are spawned processes: they re-import this file as __mp_main__, so guard the job.
if __name__ == "__main__":
    facts = closed_loop_job(AuthorsLoadtestParams.from_params(snakemake.params),  # noqa: F821
                            run_facts(snakemake.config, "appversions"),  # noqa: F821
                            snakemake.wildcards.version, snakemake.input.data,  # noqa: F821
                            snakemake.output.raw, snakemake.output.provenance,  # noqa: F821
                            snakemake.output.metrics)  # noqa: F821
    Path(snakemake.log[0]).write_text(
        json.dumps(  # noqa: F821
            {
                k: facts[k]
                for k in ("driver", "concurrent_reports", "write_concern", "update_commands_by_write_concern")
            },
            indent=1,
        )
        + "\n"
    )
