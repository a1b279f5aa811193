"""What a config asks the machine to do, counted before any job, and the ceilings it must stay under.

Each key is bounded alone by the schema; their product is not: `upsert_rates: [1000000]`,
`rate_scale: 100`, `phase_seconds: 86400` planned 8.64e12 operations and died after hours of load
and correctness ("Unable to allocate 62.9 TiB"); `events_per_year: 3e8` wrote 5.6 GB of temporary
file in 200 s. `plan_problem` multiplies the keys out (plain arithmetic, no polars: the pre-check
and the Snakefile call it) and names the keys of a plan past its ceiling.

The ceilings are a few times the published scale (config/full.yaml), sized against this machine's
measured throughput (benchmarks/bench_plan_ceilings.py, docs/reliability.md). `plan_ceiling_factor`
multiplies every ceiling, to go beyond them on purpose.

This module is the one place of every ceiling on a cost a config can ask for (docs/reliability.md lists
each with its test): the planned work above (CEILINGS), and the limits `limit_problem` holds the config to
against WiredTiger and this machine: a cache, samples per second, bins, scratch disk against the free
space of the engine's workdir; and the time a layout file of yours may take to import.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

YEARS = 10  # the events span 2010-2020 (appversions/events.py); the authors' window is 0.08 % more
AUTHORS_WINDOW = 1.0008  # 500,390,000 events at 50,000,000 a year (window.py)
KB = 1024


@dataclass(frozen=True)
class Ceiling:
    what: str
    limit: float
    published: float  # the same quantity at the published scale (config/full.yaml), for the message
    keys: str  # the keys that multiply to it


def _loadtest_operations(config: dict) -> float:
    """The sum of appversions.phases.expected_phase_operations (a shared module imports no study):
    warm-up Get Reports, then per phase its Bulk Upserts and Get Reports."""
    loadtest = (config.get("appversions") or {}).get("loadtest") or {}
    scale, phase_s = float(loadtest["rate_scale"]), float(loadtest["phase_seconds"])
    reports = [float(r) for r in loadtest["report_rates"]]
    warmup = reports[0] * scale * float(loadtest["warmup_seconds"])
    upserts = sum(float(r) for r in loadtest["upsert_rates"]) * scale * phase_s / int(loadtest["batch_size"])
    gets = len(loadtest["upsert_rates"]) * sum(reports) * scale * phase_s / len(reports)
    return warmup + upserts + gets


def _events(config: dict) -> float:
    return float((config.get("appversions") or {}).get("events_per_year", 0)) * YEARS * AUTHORS_WINDOW


def _docsize_datasets_per_size(docsize: dict) -> int:
    variants = docsize.get("variants") or {}
    return 1 + bool(variants.get("fields_after_history", True)) + bool(variants.get("split_history", True))


def _docsize_bytes(config: dict) -> float:
    docsize = config.get("docsize") or {}
    return (
        float(docsize.get("docs_per_collection", 0))
        * sum(docsize.get("sizes_kb") or ())
        * KB
        * _docsize_datasets_per_size(docsize)
    )


def _documents(config: dict) -> float:
    docsize, flat = config.get("docsize") or {}, config.get("flatnested") or {}
    studies = config.get("studies") or ()
    total = 0.0
    if "docsize" in studies:
        total += (
            float(docsize.get("docs_per_collection", 0))
            * len(docsize.get("sizes_kb") or ())
            * _docsize_datasets_per_size(docsize)
        )
    if "flatnested" in studies:
        total += float(flat.get("documents", 0)) * len(flat.get("flat_fields") or ()) * 2  # flat and nested
    return total


def _engine_bytes(config: dict) -> float:
    engine, docsize = config.get("engine") or {}, config.get("docsize") or {}
    return (
        float((engine.get("docsize") or {}).get("docs_per_collection", 0))
        * max(docsize.get("sizes_kb") or [0])
        * KB
    )


# The arraygrowth engine lab's standalone push run journals the whole document on each $push, so its journal
# grows with N squared: 1.3 GB at N = 20,000 (issue #43; engine.arraygrowth.ns [100000, 200000] filled a
# 400 MB workdir in 20 s), 1.3e9 / 20,000**2 bytes per N squared.
JOURNAL_BYTES_PER_N2 = 1.3e9 / 20_000**2


def _engine_ns(config: dict) -> list[int]:
    engine = (config.get("engine") or {}).get("arraygrowth") or {}
    return [int(n) for n in (engine.get("ns") or (config.get("arraygrowth") or {}).get("ns") or [0])]


def _engine_journal_bytes(config: dict) -> float:
    return JOURNAL_BYTES_PER_N2 * max(_engine_ns(config)) ** 2


def own_event_rows(config: dict) -> int | None:
    """The rows of your own events file (appversions.events: Parquet from its footer, CSV its lines but the
    header), None without one or where it cannot be read (the study's config check says why)."""
    path = (config.get("appversions") or {}).get("events")
    if not isinstance(path, str) or not path:
        return None
    from costlab.paths import user_file_path

    resolved = user_file_path(path)
    try:
        if resolved.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            with pq.ParquetFile(resolved) as parquet:
                return parquet.metadata.num_rows
        lines, last = 0, b"\n"
        with open(resolved, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                lines, last = lines + block.count(b"\n"), block[-1:]
        return max(0, lines + (last != b"\n") - 1)
    except Exception:  # noqa: BLE001  an unreadable file is the config check's to name
        return None


def _engine_events(config: dict) -> float:
    """Events each engine-lab version job grows: your own events file's rows, else the generator's."""
    own = own_event_rows(config)
    if own is not None:
        return float(own)
    engine = config.get("engine") or {}
    return float((engine.get("appversions") or {}).get("events_per_year", 0)) * YEARS * AUTHORS_WINDOW


CEILINGS: dict[str, Ceiling] = {
    "loadtest_operations": Ceiling(
        "load-test operations per version",
        10_000_000,
        1_687_500,
        "appversions.loadtest: per phase upsert_rates[i] x rate_scale x phase_seconds / batch_size "
        "+ mean(report_rates) x rate_scale x phase_seconds, + report_rates[0] x rate_scale x warmup_seconds",
    ),
    "events": Ceiling(
        "events to generate", 1_000_000_000, 500_390_000, "appversions.events_per_year x 10 years"
    ),
    "docsize_bytes": Ceiling(
        "bytes of orders to generate and load",
        50e9,
        50_000 * 85 * KB * 3,
        "docsize.docs_per_collection x sum(docsize.sizes_kb) KB x datasets per size",
    ),
    "documents": Ceiling(
        "documents to generate and load",
        20_000_000,
        50_000 * 4 * 3 + 10_000 * 4 * 2,
        "docsize.docs_per_collection x sizes x datasets + flatnested.documents x flat_fields x 2",
    ),
    "engine_bytes": Ceiling(
        "bytes of the largest engine collection (scratch)",
        20e9,
        50_000 * 64 * KB,
        "engine.docsize.docs_per_collection x max(docsize.sizes_kb) KB",
    ),
    "engine_events": Ceiling(
        "engine events per version", 5_000_000, 500_400,
        "engine.appversions.events_per_year x 10 years, or the rows of appversions.events"
    ),
    "engine_journal_bytes": Ceiling(
        "bytes of the arraygrowth engine lab's journal (scratch; quadratic in N)",
        20e9,
        JOURNAL_BYTES_PER_N2 * 40_000**2,
        f"{JOURNAL_BYTES_PER_N2:.2f} B x max(engine.arraygrowth.ns, or arraygrowth.ns) squared",
    ),
}

# quantity -> (how to count it, whether this config runs it)
_COUNTS: dict[str, tuple[Callable[[dict], float], Callable[[dict], bool]]] = {
    "loadtest_operations": (_loadtest_operations, lambda c: "appversions" in c.get("studies", ())),
    "events": (_events, lambda c: "appversions" in c.get("studies", ())),
    "docsize_bytes": (_docsize_bytes, lambda c: "docsize" in c.get("studies", ())),
    "documents": (_documents, lambda c: True),
    "engine_bytes": (
        _engine_bytes,
        lambda c: (c.get("engine") or {}).get("enabled", True) and "docsize" in c.get("studies", ()),
    ),
    "engine_events": (
        _engine_events,
        lambda c: (c.get("engine") or {}).get("enabled", True) and "appversions" in c.get("studies", ()),
    ),
    "engine_journal_bytes": (
        _engine_journal_bytes,
        lambda c: (c.get("engine") or {}).get("enabled", True) and "arraygrowth" in c.get("studies", ()),
    ),
}


def planned_work(config: dict[str, Any]) -> dict[str, float]:
    """Each quantity this (validated) config asks for; a study or engine lab that does not run counts 0."""
    return {name: (count(config) if runs(config) else 0.0) for name, (count, runs) in _COUNTS.items()}


def _human(value: float) -> str:
    return f"{value:,.0f}" if value < 1e12 else f"{value:.3g}"


def plan_problem(config: dict[str, Any]) -> str | None:
    """One line naming the first quantity past its ceiling and the keys that multiply to it (then the
    limits against WiredTiger and this machine: limit_problem), or None."""
    factor = float(config.get("plan_ceiling_factor", 1) or 1)
    for name, value in planned_work(config).items():
        ceiling = CEILINGS[name]
        limit = ceiling.limit * factor
        if value > limit:
            return (
                f"invalid config: the plan asks for {_human(value)} {ceiling.what} ({ceiling.keys}), "
                f"above the ceiling of {_human(limit)} (the published scale is {_human(ceiling.published)}); "
                "lower those keys, or raise plan_ceiling_factor on purpose (docs/reliability.md)"
            )
    return limit_problem(config)


# --- Limits against WiredTiger and this machine (not multiplied by plan_ceiling_factor) -----------------
WT_MAX_CACHE_MB = 10 * 1024 * 1024   # WiredTiger: cache_size max=10TB
MAX_METRICS_PER_S = 10               # serverStatus samples a second in a load test (metrics_seconds >= 0.1)
MAX_BINS_PER_VERSION = 100_000       # load-test time bins per version (its seconds / bin_seconds)
LAYOUT_IMPORT_S = 20.0               # a layout file of yours is imported in a child with this time limit

# every cache key a config can set, MB
CACHE_KEYS = (("engine", "appversions", "cache_mb"), ("engine", "docsize", "default_cache_mb"),
              ("engine", "docsize", "small_cache_mb"))


def machine_memory_mb() -> int | None:
    """This machine's physical memory in MB (None where the OS does not say)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // (1 << 20)
    except (ValueError, OSError, AttributeError):
        return None


def engine_scratch_dir(config: dict) -> Path:
    """Where the engine lab's scratch homes go: engine.workdir, or the system's temporary directory."""
    return Path((config.get("engine") or {}).get("workdir") or tempfile.gettempdir())


def free_bytes(path: Path) -> int | None:
    """Free bytes of the file system `path` (or its nearest existing parent) is on; None if unknown."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            try:
                return shutil.disk_usage(candidate).free
            except OSError:
                return None
    return None


def _get(config: dict, keys: tuple[str, ...]):
    node = config
    for key in keys:
        node = node.get(key) if isinstance(node, dict) else None
    return node


def _loadtest_seconds(loadtest: dict) -> float:
    """A version's load test: the warm-up, then each phase of phase_seconds (its report-rate steps inside)."""
    phases = len(loadtest["upsert_rates"])
    return float(loadtest["warmup_seconds"]) + phases * float(loadtest["phase_seconds"])


def limit_problem(config: dict[str, Any]) -> str | None:
    """One line naming the first key whose cost is past this machine's or WiredTiger's limit (the key, the
    estimate and the limit), or None."""
    engine_on = (config.get("engine") or {}).get("enabled", True)
    studies = config.get("studies") or ()
    memory = machine_memory_mb()
    if engine_on:
        for keys in CACHE_KEYS:
            value = _get(config, keys)
            if value is None or keys[1] not in studies:
                continue
            key = ".".join(keys)
            if int(value) > WT_MAX_CACHE_MB:
                return (f"invalid config key {key}: {int(value):,} MB is more than WiredTiger's largest "
                        f"cache ({WT_MAX_CACHE_MB:,} MB = 10 TB)")
            if memory is not None and int(value) > memory:
                return (f"invalid config key {key}: a cache of {int(value):,} MB is more than this machine's "
                        f"memory ({memory:,} MB): allowed at most {memory:,} MB")
    loadtest = (config.get("appversions") or {}).get("loadtest") or {}
    if "appversions" in studies and loadtest:
        seconds = _loadtest_seconds(loadtest)
        metrics = float(loadtest["metrics_seconds"])
        if 1 / metrics > MAX_METRICS_PER_S:
            return (f"invalid config key appversions.loadtest.metrics_seconds: {metrics:g} s asks for "
                    f"{1 / metrics:.3g} server metrics samples a second ({seconds / metrics:.3g} in a "
                    f"{seconds:g}-s load test), above the limit of {MAX_METRICS_PER_S} a second: allowed at "
                    f"least {1 / MAX_METRICS_PER_S:g} s")
        bins = loadtest.get("bin_seconds")
        if bins is not None and seconds / float(bins) > MAX_BINS_PER_VERSION:
            return (f"invalid config key appversions.loadtest.bin_seconds: {float(bins):g} s cuts a "
                    f"{seconds:g}-s load test into {seconds / float(bins):.3g} bins, above the limit of "
                    f"{MAX_BINS_PER_VERSION:,}: allowed at least {seconds / MAX_BINS_PER_VERSION:.3g} s")
    if engine_on:
        work = planned_work(config)
        scratch = max(work["engine_bytes"], work["engine_journal_bytes"])
        where = engine_scratch_dir(config)
        free = free_bytes(where)
        if scratch and free is not None and scratch > free:
            key = ("engine.arraygrowth.ns" if work["engine_journal_bytes"] >= work["engine_bytes"]
                   else "engine.docsize.docs_per_collection")
            return (f"invalid config key {key}: the engine lab's scratch needs about {_human(scratch)} "
                    f"bytes in {where}, which has {_human(free)} free (engine.workdir): lower {key}, "
                    "or point engine.workdir at a disk with room")
    return None
