"""What a config asks the machine to do, counted before any job, and the ceilings it must stay under.

Each key is bounded alone by the schema; their product is not: `upsert_rates: [1000000]`,
`rate_scale: 100`, `phase_seconds: 86400` planned 8.64e12 operations and died after hours of load
and correctness ("Unable to allocate 62.9 TiB"); `events_per_year: 3e8` wrote 5.6 GB of temporary
file in 200 s. `plan_problem` multiplies the keys out (plain arithmetic, no polars: the pre-check
and the Snakefile call it) and names the keys of a plan past its ceiling.

Each study declares what it plans and its ceilings (Study.ceilings: costlab/<study>/ceilings.py); this
module runs them, the same way for every study. The ceilings are a few times the published scale
(config/full.yaml), sized against this machine's measured throughput (benchmarks/bench_plan_ceilings.py,
docs/reliability.md). `plan_ceiling_factor` multiplies every ceiling, to go beyond them on purpose.

Then `limit_problem` holds the config to the limits of WiredTiger and this machine: every study's engine
caches (Study.engine_cache_keys), each study's own limits (Study.limit_problem), scratch disk against
the free space of the engine's workdir.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from costlab.registry import REGISTRY
from costlab.study import Ceiling, Study


def _contributions() -> dict[str, list[tuple[str, Ceiling]]]:
    """quantity -> (study, its ceiling) of every study that plans it, in the registry's order."""
    found: dict[str, list[tuple[str, Ceiling]]] = {}
    for study in REGISTRY.values():
        for name, ceiling in study.ceilings.items():
            first = found.setdefault(name, [])
            if first and (first[0][1].what, first[0][1].limit, first[0][1].engine) != (
                ceiling.what, ceiling.limit, ceiling.engine
            ):
                raise RuntimeError(
                    f"study {study.name}: ceiling {name!r} differs from study {first[0][0]}'s "
                    "(a quantity two studies plan needs one description, one limit, one engine flag)"
                )
            first.append((study.name, ceiling))
    return found


_CONTRIBUTIONS = _contributions()
# quantity -> its ceiling; a quantity several studies plan: their published values added, their keys joined
CEILINGS: dict[str, Ceiling] = {
    name: replace(
        parts[0][1],
        published=sum(c.published for _, c in parts),
        keys=" + ".join(c.keys for _, c in parts),
    )
    for name, parts in _CONTRIBUTIONS.items()
}


def _enabled(config: dict) -> list[Study]:
    return [REGISTRY[name] for name in config.get("studies") or () if name in REGISTRY]


def planned_work(config: dict[str, Any]) -> dict[str, float]:
    """Each quantity this (validated) config asks for; a study or engine lab that does not run counts 0."""
    studies = set(config.get("studies") or ())
    engine_on = (config.get("engine") or {}).get("enabled", True)
    return {
        name: sum(
            (c.count(config) for study, c in parts if study in studies and (engine_on or not c.engine)), 0.0
        )
        for name, parts in _CONTRIBUTIONS.items()
    }


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
# every cache key a config can set, MB (each study's Study.engine_cache_keys)
CACHE_KEYS: tuple[tuple[str, ...], ...] = tuple(
    keys for study in REGISTRY.values() for keys in study.engine_cache_keys
)


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


def limit_problem(config: dict[str, Any]) -> str | None:
    """One line naming the first key whose cost is past this machine's or WiredTiger's limit (the key, the
    estimate and the limit), or None."""
    engine_on = (config.get("engine") or {}).get("enabled", True)
    studies = _enabled(config)
    memory = machine_memory_mb()
    if engine_on:
        for keys in (keys for study in studies for keys in study.engine_cache_keys):
            value = _get(config, keys)
            if value is None:
                continue
            key = ".".join(keys)
            if int(value) > WT_MAX_CACHE_MB:
                return (f"invalid config key {key}: {int(value):,} MB is more than WiredTiger's largest "
                        f"cache ({WT_MAX_CACHE_MB:,} MB = 10 TB)")
            if memory is not None and int(value) > memory:
                return (f"invalid config key {key}: a cache of {int(value):,} MB is more than this machine's "
                        f"memory ({memory:,} MB): allowed at most {memory:,} MB")
    for study in studies:
        problem = study.limit_problem(config)
        if problem:
            return problem
    if engine_on:
        work = planned_work(config)
        scratch, key = 0.0, ""
        for name, ceiling in CEILINGS.items():   # the largest; of two equal, the later
            if ceiling.scratch_key and work[name] and work[name] >= scratch:
                scratch, key = work[name], ceiling.scratch_key
        where = engine_scratch_dir(config)
        free = free_bytes(where)
        if scratch and free is not None and scratch > free:
            return (f"invalid config key {key}: the engine lab's scratch needs about {_human(scratch)} "
                    f"bytes in {where}, which has {_human(free)} free (engine.workdir): lower {key}, "
                    "or point engine.workdir at a disk with room")
    return None
