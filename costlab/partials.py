"""Temporary result files whose writer is gone, found by the owner in their names and removed.

Standard library only: rules/common.smk sweeps at every run's start (costlab.io writes the files).
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from costlab.procs import pid_alive, start_time

# .<name>.<owner pid>.<owner start time>.<random>.tmp: whose temporary file it is, in its name. An older
# costlab's .<name>.<random>.tmp carries no owner; digests' .<name>.<pid>.tmp carries the pid only.
_PARTIAL = (re.compile(r"^\.(?P<name>.+?)\.(?:(?P<pid>\d+)\.(?P<started>\d+)\.)?[a-z0-9_]{8}\.tmp$"),
            re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)(?P<started>)\.tmp$"))


def owner() -> str:
    return f"{os.getpid()}.{start_time(os.getpid()) or 0}"


def _owner_gone(pid: str | None, started: str | None) -> bool:
    if pid is None:
        return True     # an older costlab's, by a job that is not running (Snakemake locks the directory)
    if started and start_time(os.getpid()) is not None:
        return start_time(int(pid)) != int(started)     # another start time: the pid was reused
    return not pid_alive(int(pid))


def sweep_partial_files(directory: str | Path, name: str | None = None) -> list[Path]:
    """Remove the temporary files (`.<name>.….tmp`) in `directory` whose writer is gone: a job stopped by
    `kill -9`, the OOM killer or a lost node, or an older costlab's job that SIGTERM ended where it
    stood. Only those of the file `name` when given (what atomic_path does before writing it)."""
    removed = []
    try:
        candidates = [Path(entry.path) for entry in os.scandir(directory)
                      if entry.name.startswith(f".{name}." if name else ".") and entry.name.endswith(".tmp")]
    except OSError:
        return removed
    for candidate in candidates:
        match = _PARTIAL[0].match(candidate.name) or _PARTIAL[1].match(candidate.name)
        if match is None or (name is not None and match["name"] != name):
            continue
        if _owner_gone(match["pid"], match["started"]):
            candidate.unlink(missing_ok=True)
            removed.append(candidate)
    return removed


def sweep_results(results: str | Path = "results") -> list[Path]:
    """sweep_partial_files in every folder under `results` (the next run's start: rules/common.smk)."""
    removed: list[Path] = []
    for folder, _, files in os.walk(results):
        if any(f.startswith(".") and f.endswith(".tmp") for f in files):
            removed += sweep_partial_files(folder)
    return removed
