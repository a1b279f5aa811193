"""The server's own metrics while something runs: serverStatus (and the container's stats) every few seconds.

`ServerSampler` is a background thread with its own client. Every `interval_s` it reads the
serverStatus counters of SERVER_METRICS (WiredTiger cache bytes read into / written from the
cache, bytes in the cache, pages evicted, opcounters, resident and virtual memory, page faults)
and, when the server runs in a Docker container, the container's CPU time, memory and block I/O
from the Docker stats API. It keeps every sample as a long time series (`SAMPLE_SCHEMA`: when,
source, metric, value), cumulative counters as the server reports them. A metric the server does
not report is a row with a null value - never 0 - so "not reported" (the stand-in has no
`wiredTiger` section) can never pass for "nothing happened".
"""
from __future__ import annotations

import threading
import time
from datetime import datetime, timezone
from typing import Callable

import polars as pl
from pymongo import MongoClient

from costlab.measure.counters import snapshot

SERVER_METRICS = (
    "wiredTiger.cache.bytes read into cache",
    "wiredTiger.cache.bytes written from cache",
    "wiredTiger.cache.bytes currently in the cache",
    "wiredTiger.cache.modified pages evicted",
    "wiredTiger.cache.unmodified pages evicted",
    "opcounters.insert", "opcounters.query", "opcounters.update", "opcounters.command", "opcounters.getmore",
    "mem.resident", "mem.virtual",
    "extra_info.page_faults",
)
CONTAINER_METRICS = ("cpu_seconds", "memory_bytes", "block_read_bytes", "block_written_bytes")
SAMPLE_SCHEMA = {"at": pl.Datetime("ms", "UTC"), "source": pl.Utf8, "metric": pl.Utf8, "value": pl.Float64}


def container_stats(stats: dict) -> dict[str, float | None]:
    """CONTAINER_METRICS from one Docker stats reply (None where the engine reports none)."""
    cpu = ((stats.get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage")
    memory = (stats.get("memory_stats") or {}).get("usage")
    io = (stats.get("blkio_stats") or {}).get("io_service_bytes_recursive")
    read = written = None
    if io is not None:
        read = float(sum(e.get("value", 0) for e in io if str(e.get("op", "")).lower() == "read"))
        written = float(sum(e.get("value", 0) for e in io if str(e.get("op", "")).lower() == "write"))
    return {
        "cpu_seconds": None if cpu is None else cpu / 1e9,
        "memory_bytes": None if memory is None else float(memory),
        "block_read_bytes": read,
        "block_written_bytes": written,
    }


class ServerSampler:
    """Samples `uri`'s serverStatus (and `container_stats_source()`, a Docker stats reply) every
    interval_s."""

    def __init__(self, uri: str, interval_s: float = 5.0,
                 container_stats_source: Callable[[], dict] | None = None) -> None:
        if not interval_s > 0:
            raise ValueError(f"sampling interval must be > 0 s, got {interval_s!r}")
        self.uri, self.interval_s, self.container_stats_source = (
            uri,
            float(interval_s),
            container_stats_source,
        )
        self._rows: list[dict] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []

    def sample_once(self, client) -> None:
        at = datetime.now(timezone.utc)
        try:
            values = snapshot(client, SERVER_METRICS)
        except Exception as exc:   # a sample lost is recorded, the run goes on
            self.errors.append(f"serverStatus at {at:%H:%M:%S}: {type(exc).__name__}: {exc}"[:300])
            values = dict.fromkeys(SERVER_METRICS)
        self._rows += [
            {"at": at, "source": "serverStatus", "metric": m, "value": v} for m, v in values.items()
        ]
        if self.container_stats_source is not None:
            try:
                container = container_stats(self.container_stats_source())
            except Exception as exc:
                self.errors.append(f"docker stats at {at:%H:%M:%S}: {type(exc).__name__}: {exc}"[:300])
                container = dict.fromkeys(CONTAINER_METRICS)
            self._rows += [
                {"at": at, "source": "docker stats", "metric": m, "value": v} for m, v in container.items()
            ]

    def _run(self) -> None:
        client = MongoClient(self.uri, serverSelectionTimeoutMS=5000)
        try:
            next_at = time.monotonic()
            while not self._stop.is_set():
                self.sample_once(client)
                next_at += self.interval_s
                self._stop.wait(max(0.0, next_at - time.monotonic()))
            self.sample_once(client)   # the end of the period
        finally:
            client.close()

    def __enter__(self) -> "ServerSampler":
        self._thread = threading.Thread(target=self._run, name="server-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval_s + 30)

    def frame(self) -> pl.DataFrame:
        """Every sample so far (SAMPLE_SCHEMA), in time order."""
        return pl.DataFrame(self._rows, schema=SAMPLE_SCHEMA).sort("at", maintain_order=True)


def docker_stats_source(container_name: str) -> Callable[[], dict] | None:
    """A callable returning the container's one-shot Docker stats, or None without a reachable engine."""
    try:
        from costlab.server.docker_backend import engine_client  # noqa: PLC0415  read at call time: tests replace costlab.server.docker_backend.engine_client

        container = engine_client().containers.get(container_name)
    except Exception:
        return None
    return lambda: container.stats(stream=False, one_shot=True)
