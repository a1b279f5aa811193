"""Provenance of an engine-lab job: `server_kind: engine`, the WiredTiger build and compressors."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from costlab.config import run_facts
from costlab.engine.extensions import extension_status
from costlab.engine.wt import available_compressors, compressor_or_nearest, wiredtiger_version
from costlab.jobs import RunFacts
from costlab.server.provenance import with_run_facts

SERVER_KIND = "engine"
LABEL = "WiredTiger engine lab: mongod's storage calls reproduced; not a mongod run"


def resolved_compressors(engine_config: dict) -> dict[str, Any]:
    """Wanted and used journal/block compressors, with the note when one was substituted."""
    journal, journal_note = compressor_or_nearest(engine_config.get("journal_compressor", "snappy"))
    block, block_note = compressor_or_nearest(engine_config.get("block_compressor", "snappy"))
    return {"journal_compressor_wanted": engine_config.get("journal_compressor", "snappy"),
            "journal_compressor": journal, "journal_compressor_note": journal_note,
            "block_compressor_wanted": engine_config.get("block_compressor", "snappy"),
            "block_compressor": block, "block_compressor_note": block_note}


def engine_provenance(job: str, run: RunFacts | dict, started_at: datetime, ended_at: datetime,
                      extra: dict | None = None, engine_config: dict | None = None) -> dict[str, Any]:
    """`run`: the run's facts (costlab.jobs), `engine_config` the job's engine params; or a whole config."""

    if not isinstance(run, RunFacts):
        engine_config = run.get("engine", {}) if engine_config is None else engine_config
        run = run_facts(run, job.split("_", 1)[0])
    engine_config = engine_config or {}
    record: dict[str, Any] = {
        "job": job,
        "server_kind": SERVER_KIND,
        "label": LABEL,
        "server": {
            "kind": SERVER_KIND,
            "storage_engine": "wiredTiger",
            "wiredtiger_version": wiredtiger_version(),
            "wiredtiger_module": "wiredtiger (shipped in the secantusdb wheel)",
            "compressors_built_in": list(available_compressors()),
            # mongod's snappy / zstd: the extension file, its library's version and the
            # WiredTiger header version it was compiled against (or why it is not loaded)
            "compressor_extensions": extension_status(),
        },
        "compressors": resolved_compressors(engine_config),
        "backend": "engine",
        "profile": None,
        # what a rerun of this engine job depends on: its study's keys and the engine's
        "engine_config_hash": run.engine_config_hash,
    }
    return with_run_facts(record, run, started_at, ended_at, extra)
