"""Snakemake entry: write results/run.json, what this run was, for comparing it with others later."""
import json
from pathlib import Path

from costlab.report.params import ManifestParams
from costlab.report.runs import manifest
from costlab.server.provenance import write_json_atomic

params = ManifestParams.from_params(snakemake.params)  # noqa: F821
record = manifest(params.config, params.server_backend)
write_json_atomic(Path(snakemake.output[0]), record)  # noqa: F821
Path(snakemake.log[0]).write_text(
    json.dumps({k: record[k] for k in ("config_hash", "server_backend")}) + "\n"
)  # noqa: F821
