"""A profile's memory and CPU limits for a mongod started as a process (the binary backend).

The docker backend gets them from the container runtime. A process gets them from the kernel, where this
user may: memory through a cgroup of its own (cgroup v1's memory controller, or v2's memory.max), made
beside this process's cgroup and removed when the server stops; CPUs through the scheduler's affinity
(the first `cpus` processors this process may use; a fraction rounds up). What could not be applied is
said in the provenance ("not applied: ..."), never assumed.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _own_cgroup_dirs() -> list[tuple[Path, str]]:
    """(directory, limit file) where a child memory cgroup could be made: v1's memory controller, then v2."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return []
    found: list[tuple[Path, str]] = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        rel = path.lstrip("/")
        if "memory" in controllers.split(","):
            found.append((CGROUP_ROOT / "memory" / rel, "memory.limit_in_bytes"))
        elif controllers == "":
            for mount in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
                if (mount / "cgroup.controllers").exists():
                    found.append((mount / rel, "memory.max"))
                    break
    return found


@dataclass
class ProcessLimits:
    """What to do in the child before mongod starts, what was applied, and how to clean up."""

    applied: dict = field(default_factory=dict)
    cgroup: Path | None = None
    cpu_set: set[int] | None = None

    def preexec(self) -> None:
        """In the child, before exec: join the cgroup and take the CPUs (async-signal-safe enough: writes)."""
        if self.cgroup is not None:
            (self.cgroup / "cgroup.procs").write_text(str(os.getpid()))
        if self.cpu_set:
            os.sched_setaffinity(0, self.cpu_set)

    def release(self) -> None:
        if self.cgroup is not None:
            try:
                self.cgroup.rmdir()
            except OSError:
                pass


def _memory_cgroup(limit_bytes: int, name: str) -> tuple[Path | None, str]:
    reasons = []
    for parent, limit_file in _own_cgroup_dirs():
        group = parent / name
        try:
            group.mkdir(exist_ok=True)
            if not (group / limit_file).exists():
                group.rmdir()
                reasons.append(f"{parent} has no {limit_file}")
                continue
            (group / limit_file).write_text(str(limit_bytes))
            if limit_file == "memory.limit_in_bytes":
                # the page cache of the files mongod reads counts against the group, as in a container
                swap = group / "memory.memsw.limit_in_bytes"
                if swap.exists():
                    try:
                        swap.write_text(str(limit_bytes))
                    except OSError:
                        pass
            return group, f"{limit_bytes} (cgroup {group})"
        except OSError as err:
            reasons.append(f"{parent}: {err.strerror or err}")
            try:
                group.rmdir()
            except OSError:
                pass
    why = "; ".join(reasons) or "no memory cgroup found in /proc/self/cgroup"
    return None, f"not applied: {why}"


def process_limits(memory_limit_bytes: int | None, cpus: float | None, name: str,
                   available_cpus: Callable[[], set[int]] | None = None) -> ProcessLimits:
    """The limits a profile asks for, as far as this machine lets a process have them."""
    limits = ProcessLimits()
    if memory_limit_bytes:
        limits.cgroup, limits.applied["memory_limit_bytes"] = _memory_cgroup(int(memory_limit_bytes), name)
    else:
        limits.applied["memory_limit_bytes"] = "none"
    if cpus:
        allowed = sorted((available_cpus or (lambda: os.sched_getaffinity(0)))())
        wanted = max(1, math.ceil(cpus))
        if wanted < len(allowed):
            limits.cpu_set = set(allowed[:wanted])
            limits.applied["cpus"] = f"{cpus:g} (CPU affinity: processors {sorted(limits.cpu_set)})"
        else:
            limits.applied["cpus"] = (f"not applied: {cpus:g} asked, and this process may use only "
                                      f"{len(allowed)} processors (the limit is the machine)")
    else:
        limits.applied["cpus"] = "none"
    return limits
