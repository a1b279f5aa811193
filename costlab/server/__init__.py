"""Server lifecycle: get a MongoDB server for one job, however it is provided, and always clean up.

    with start_server(config["server"], "standalone", data_dir) as server:
        server.client.db.coll.find_one()

measuring_job() does the same and also writes the job's provenance JSON when the job succeeds.

This face stays light: every Snakemake parse imports it (the rule files import costlab.server's light
modules, and a package's __init__ comes first). The lifecycle itself, with pymongo, is
costlab.server.lifecycle, imported when one of its names is first asked for.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from costlab.server.errors import ServerStartError, ServerUnavailable
from costlab.server.profiles import PROFILES, Profile, get_profile
from costlab.server.running import RunningServer

if TYPE_CHECKING:
    from costlab.server.lifecycle import measuring_job, resolve_backend, start_server

__all__ = ["RunningServer", "start_server", "measuring_job", "resolve_backend", "ServerUnavailable",
           "ServerStartError", "PROFILES", "Profile", "get_profile"]
_LIFECYCLE = ("start_server", "measuring_job", "resolve_backend")


def __getattr__(name: str):
    """costlab.server.start_server, measuring_job and resolve_backend, from costlab.server.lifecycle."""
    if name in _LIFECYCLE:
        from costlab.server import lifecycle  # noqa: PLC0415  heavy: docker, polars, portpicker, psutil, ...; the rule files import this module

        return getattr(lifecycle, name)
    raise AttributeError(f"module 'costlab.server' has no attribute {name!r}")
