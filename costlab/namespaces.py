"""Per-run namespaces: which database on a server holds one run's copy of one study's data.

A database is named from the run (server.namespace, or this host and working directory) and the
data parameters of the study (what changes the loaded data), so two checkouts or two configs
that share one deployment never read or overwrite each other's collections:

    costlab_<study>_<run id>_<data hash>      e.g. costlab_appversions_3f9c01aa_5b1e7d20

Standard library only: the rule files and the cleanup command import it.
"""
from __future__ import annotations

import hashlib
import json
import re
import socket
from pathlib import Path

from costlab.registry import REGISTRY
from costlab.registry import study as declared_study

PREFIX = "costlab_"
RUN_ID_RE = re.compile(r"^[A-Za-z0-9_]{1,20}$")
# What changes each study's loaded data (and only that): its Study.data_keys, which the rule files'
# `data` params are too (data_params below), so the databases' names and the reloads agree.
STUDY_DATA_KEYS = {name: declared.data_keys for name, declared in REGISTRY.items()}


def _short_hash(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:8]


def run_id(config: dict, cwd: str | Path | None = None) -> str:
    """server.namespace when set, else a hash of this host and the working directory (the results' home)."""
    configured = (config.get("server") or {}).get("namespace")
    if configured:
        if not RUN_ID_RE.match(configured):
            raise ValueError(f"invalid config key server.namespace: {configured!r} "
                             "(allowed: 1-20 letters, digits or _)")
        return configured
    home = Path(cwd) if cwd is not None else Path.cwd()
    return _short_hash(f"{socket.gethostname()}:{home.resolve()}")


def data_params(config: dict, name: str) -> dict:
    """The study's settings that change its loaded data (Study.data_params)."""
    return declared_study(name).data_params(config)


def database_name(config: dict, study: str, cwd: str | Path | None = None) -> str:
    """The database that holds this run's data of `study` (at most 38 characters; MongoDB allows 63)."""
    return describe(config, study, cwd)["database"]


def describe(config: dict, study: str, cwd: str | Path | None = None) -> dict:
    """What provenance records about the namespace."""
    return describe_data(config.get("server") or {}, study, data_params(config, study), cwd)


def describe_data(server: dict, study: str, data: dict, cwd: str | Path | None = None) -> dict:
    """describe() from what a job has: the server section and its rule's data params (data_params())."""
    rid = run_id({"server": server}, cwd)
    return {
        "database": f"{PREFIX}{study}_{rid}_{_short_hash(dict(data))}",
        "run_id": rid,
        "data_params": dict(data),
    }


def run_databases(names: list[str], rid: str) -> list[str]:
    """Of the databases `names`, those that belong to run `rid` (any study, any data parameters)."""
    pattern = re.compile(rf"^{re.escape(PREFIX)}[a-z]+_{re.escape(rid)}_[0-9a-f]{{8}}$")
    return sorted(name for name in names if pattern.match(name))
