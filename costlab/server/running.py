"""A server one job runs against (costlab.server starts it; provenance describes it)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from costlab.credentials import redact_uri
from costlab.server.profiles import Profile

if TYPE_CHECKING:  # pymongo is imported by the backends only: the rule files import the light modules
    from pymongo import MongoClient


@dataclass
class RunningServer:
    client: MongoClient         # connected, ready (and primary, for a replica-set profile)
    uri: str                    # connection string with any password removed
    backend: str                # docker | binary | external
    profile: Profile
    applied: dict = field(default_factory=dict)  # the options actually applied, for provenance
    data_dir: Path | None = None
    restarts: int = 0           # how many times restart() stopped and restarted the server
    database: str | None = None  # this run's database of the job's study (costlab.namespaces)
    load_id: str | None = None   # a load job's id: into dataset.json; the server's marker gets it on success
    _restart: Callable[[], tuple[MongoClient, str, dict]] | None = field(default=None, repr=False)

    def restart(self) -> bool:
        """Stop the server and start it again on the same data directory: an empty WiredTiger cache.

        Returns False, and changes nothing, when the backend cannot restart it (external: the
        deployment is the user's); the caller records that the cache could not be reset. After a
        restart `client` is a new, ready connection (the old one is closed).
        """
        if self._restart is None:
            return False
        self.client, uri, self.applied = self._restart()
        self.uri = redact_uri(uri)
        self.restarts += 1
        return True
