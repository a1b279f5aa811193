"""What an arraygrowth config plans for the engine lab, counted before any job, with its ceiling
(costlab/plan.py runs it). Standard library only: the pre-check and the Snakefile call it."""
from __future__ import annotations

from costlab.study import Ceiling

# The engine lab's standalone push run journals the whole document on each $push, so its journal grows with
# N squared: 1.3 GB at N = 20,000 (issue #43; engine.arraygrowth.ns [100000, 200000] filled a 400 MB workdir
# in 20 s), 1.3e9 / 20,000**2 bytes per N squared.
JOURNAL_BYTES_PER_N2 = 1.3e9 / 20_000**2


def _engine_ns(config: dict) -> list[int]:
    engine = (config.get("engine") or {}).get("arraygrowth") or {}
    return [int(n) for n in (engine.get("ns") or (config.get("arraygrowth") or {}).get("ns") or [0])]


def engine_journal_bytes(config: dict) -> float:
    return JOURNAL_BYTES_PER_N2 * max(_engine_ns(config)) ** 2


CEILINGS: dict[str, Ceiling] = {
    "engine_journal_bytes": Ceiling(
        "bytes of the arraygrowth engine lab's journal (scratch; quadratic in N)",
        20e9,
        JOURNAL_BYTES_PER_N2 * 40_000**2,
        f"{JOURNAL_BYTES_PER_N2:.2f} B x max(engine.arraygrowth.ns, or arraygrowth.ns) squared",
        engine_journal_bytes,
        engine=True,
        scratch_key="engine.arraygrowth.ns",
    ),
}
