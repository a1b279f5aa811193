"""Snakemake: collection stats beside the published, load-test summaries, published vs reproduced."""
import sys
from pathlib import Path

from costlab.appversions.params import TablesParams
from costlab.appversions.tables import write_tables

params = TablesParams.from_params(snakemake.params)
verdicts, shortfalls = write_tables(
    snakemake.input, snakemake.output, params.loadtest, params.model_tolerance, bool(params.events_file)
)
# The log says, per load-tested version, which steps missed their target at appversions.loadtest.tolerance
# and who fell behind (the load test's own log does not judge: these keys are this job's params, not its);
# the console gets each version's first line (steps at target) and where the rest is.
Path(snakemake.log[0]).write_text(verdicts.write_csv() + "\n" + shortfalls)
for line in shortfalls.splitlines():
    if not line.startswith(" "):
        sys.stderr.write(f"{line} (which side fell behind: {snakemake.log[0]})\n")
