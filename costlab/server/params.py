"""The server setup rule's params (costlab.jobs says why).
Light imports only (no polars, pymongo, WiredTiger): the rule files import it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from costlab.credentials import public_server_config
from costlab.jobs import JobParams
from costlab.server.availability import server_identity


@dataclass(frozen=True)
class SetupParams(JobParams):
    backend: str | None   # the backend this run measures on, decided when the workflow is parsed
    identity: dict[str, Any]   # the profile's server with credentials removed: another one reruns the step

    @classmethod
    def declare(cls, config, backend: str | None = None):
        public = public_server_config(config["server"])
        return {"backend": backend,
                "identity": lambda wildcards: server_identity(public, backend, wildcards.server_profile)}
