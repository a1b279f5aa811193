"""Server profiles: what a measuring rule asks for. Backends decide how to apply them."""
from __future__ import annotations

from dataclasses import dataclass

GIB = 1024 ** 3


@dataclass(frozen=True)
class Profile:
    name: str
    cache_size_gb: float | None = None    # --wiredTigerCacheSizeGB; None = server default
    memory_limit_bytes: int | None = None  # container memory limit; None = unlimited
    replica_set: str | None = None         # replica set name for a single-node set; None = standalone
    cpus: float | None = None              # container CPU limit (docker nano_cpus); None = unlimited

    def mongod_args(self) -> list[str]:
        """Options that mongod itself takes (shared by the docker and binary backends)."""
        args: list[str] = []
        if self.cache_size_gb is not None:
            args += ["--wiredTigerCacheSizeGB", f"{self.cache_size_gb:g}"]
        if self.replica_set:
            args += ["--replSet", self.replica_set]
        return args


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("standalone"),
        Profile("standalone-small-cache", cache_size_gb=0.25, memory_limit_bytes=1 * GIB),
        Profile("replset-1", replica_set="rs0"),
        # The appversions load test's machine: 2 vCPU, 4 GB, 1.5 GB WiredTiger cache (series
        # Introduction), where the working set is larger than memory.
        Profile("standalone-2cpu-4gb", cache_size_gb=1.5, memory_limit_bytes=4 * GIB, cpus=2.0),
        # The authors' deployment for their load test: that machine as a one-node replica set, where
        # {w: "majority", j: true} waits for the journal and the oplog entry (Part 1, the test setup).
        Profile(
            "replset-1-2cpu-4gb", cache_size_gb=1.5, memory_limit_bytes=4 * GIB, cpus=2.0, replica_set="rs0"
        ),
    )
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown server profile {name!r}; allowed: {', '.join(PROFILES)}") from None
