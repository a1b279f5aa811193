"""Engine-lab settings WiredTiger would refuse part-way through, checked with the config (no
WiredTiger import: the pre-check and the Snakefile call this before any job).

- engine.workdir, where scratch homes go, must be a directory (or not exist yet);
- each enabled study's own engine limits (its Study.engine_problem; docsize's: costlab/docsize/ceilings.py);
- WiredTiger's cache_size is at most 10 TB (its own configuration limit; costlab/plan.py holds every
  study's cache keys, Study.engine_cache_keys, to it and to this machine's memory).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from costlab.registry import REGISTRY


def engine_problem(config: dict[str, Any]) -> str | None:
    """One line naming the engine key that cannot work and what is allowed, or None."""
    engine = config.get("engine") or {}
    if not engine.get("enabled", True):
        return None
    workdir = engine.get("workdir")
    if workdir:
        path = Path(workdir)
        if path.exists() and not path.is_dir():
            return (
                f"invalid config key engine.workdir: {workdir!r} is a file, not a directory "
                "(allowed: a directory, or null)"
            )
    for name in config.get("studies") or ():
        problem = REGISTRY[name].engine_problem(config) if name in REGISTRY else None
        if problem:
            return problem
    return None
