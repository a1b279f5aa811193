"""The uniqueidx rule's params (costlab.jobs says why).
Light imports only (no polars, pymongo, WiredTiger): the rule files import it."""
from __future__ import annotations

from dataclasses import dataclass

from costlab.jobs import JobParams


@dataclass(frozen=True)
class ConformanceParams(JobParams):
    steps: list[int]

    @classmethod
    def declare(cls, config):
        return {"steps": config["uniqueidx"]["steps"]}
