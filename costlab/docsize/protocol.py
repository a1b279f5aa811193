"""The docsize query protocol: one block per query shape, each with its own seeded windows.

The article ran each shape as its own series ("a random window from the whole collection for
each query", after its warm-ups). Running the three shapes back to back on one window lets the
whole-document query bring the window's pages into the cache for the projection after it, which
then reads almost nothing: the opposite of the finding under test. So a run is planned as blocks:

    block 0: shape A, its warm-ups then its measured queries, windows drawn for A alone
    block 1: shape B, ...                                              for B alone
    ...

Each block's windows come from a generator seeded by (seed..., shape), so they do not depend on
the block order or on the other shapes, and the same seed gives the same windows on every
dataset (sizes compared on the same orders). `cold_cache` says whether each block must start
from a cold cache (the small-cache run); the caller decides how (restart the server, reopen a
WiredTiger connection) and records whether it could.

A job that needs no cold cache between blocks need not run them one after another: `interleave` gives
every query of every block in one random order (RMIT: Abedi and Brecht, ICPE '17), each query keeping the
window its block drew; `blockwise` keeps the blocks.

Server-agnostic: this returns data only, for the mongod runs (costlab/docsize/run.py) and the
engine lab alike. numpy and the standard library only.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

SHAPES = ("whole", "projection", "covered")
WINDOW_MODES = ("same", "random")   # the same (middle) window for every query | a random one per query
BLOCK_ORDERS = ("given", "shuffled")  # shapes in the order given | a seeded permutation of them
WARMUPS_IN = ("each", "first")   # warm-ups before every block | before the first block only
PHASES = ("warmup", "measured")


@dataclass(frozen=True)
class PlannedQuery:
    block: int          # position of this query's block in the run (0 = first)
    shape: str
    query: int          # position within the block, warm-ups first (0-based)
    phase: str          # warmup | measured
    rep: int            # position within its phase (0-based)
    window_start: int   # first order of the window (0 = the collection's first order)
    window_end: int     # one past the last order: the window is [window_start, window_end)
    cold_start: bool    # this is the first query of a block that must start from a cold cache

    def as_row(self) -> dict:
        return {"block": self.block, "shape": self.shape, "query": self.query, "phase": self.phase,
                "rep": self.rep, "window_start": self.window_start, "window_end": self.window_end,
                "cold_start": self.cold_start}


@dataclass(frozen=True)
class Block:
    index: int
    shape: str
    cold_cache: bool                    # the block must start from a cold cache
    queries: tuple[PlannedQuery, ...]   # warm-ups first, then the measured queries

    def measured(self) -> tuple[PlannedQuery, ...]:
        return tuple(q for q in self.queries if q.phase == "measured")


@dataclass(frozen=True)
class Plan:
    windows: str                  # same | random
    block_order: tuple[str, ...]  # the shapes in the order their blocks run
    blocks: tuple[Block, ...]

    @property
    def block_order_label(self) -> str:
        """How raw rows record the order, e.g. 'whole>projection>covered'."""
        return ">".join(self.block_order)

    def queries(self) -> Iterator[PlannedQuery]:
        for block in self.blocks:
            yield from block.queries

    def rows(self) -> list[dict]:
        """One dict per planned query (block, shape, query, phase, rep, window_start, window_end,
        cold_start)."""
        return [q.as_row() for q in self.queries()]


def _check(name: str, value: int, minimum: int) -> int:
    if isinstance(value, bool) or int(value) != value or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _seed(seed: int | Sequence[int]) -> list[int]:
    parts = [seed] if isinstance(seed, (int, np.integer)) else list(seed)
    if not parts or any(isinstance(p, bool) or int(p) != p or p < 0 for p in parts):
        raise ValueError(f"seed must be a non-negative integer or a non-empty sequence of them, got {seed!r}")
    return [int(p) for p in parts]


def shape_key(shape: str) -> int:
    """A stable integer per shape name (crc32): its windows do not depend on which shapes run or their
    order."""
    return zlib.crc32(shape.encode("utf-8"))


def window_starts(windows: str, count: int, documents: int, window: int, rng: np.random.Generator | None
                  ) -> list[int]:
    """`count` window starts: the middle window every time (same; rng unused) or uniform over all full
    windows."""
    if windows == "same":
        return [(documents - window) // 2] * count
    return rng.integers(0, documents - window + 1, size=count).tolist()


def plan_blocks(*, documents: int, window: int, windows: str, warmups: int, queries: int,
                seed: int | Sequence[int], cold_cache: bool, shapes: Sequence[str] = SHAPES,
                order: str = "given", warmups_in: str = "each", warmup_shape: str | None = None) -> Plan:
    """Plan one run: a block per shape, each with its own warm-ups and measured windows.

    documents: orders in the collection (one a minute, so a position is an order and a minute);
    window: orders per window; windows: `same` or `random`; warmups / queries: per block;
    seed: the run's seed (an int or a sequence, e.g. [study seed, run index, family index]);
    cold_cache: every block must start from a cold cache; order: `given` (shapes as listed) or
    `shuffled` (a permutation drawn from the seed, recorded in Plan.block_order); warmups_in:
    `each` block has its warm-ups, or only the `first` (the collection is warmed once, then every
    shape's measured queries follow: the article's bytes-read table fits this, docs/engine-lab.md);
    warmup_shape: the shape the warm-ups run as (None: their block's), so a shuffled block order keeps the
    article's whole-document warm-ups before whichever shape comes first.
    """
    documents = _check("documents", documents, 1)
    window = _check("window", window, 1)
    warmups = _check("warmups", warmups, 0)
    queries = _check("queries", queries, 1)
    if window > documents:
        raise ValueError(f"window ({window} orders) is longer than the collection ({documents} orders)")
    if windows not in WINDOW_MODES:
        raise ValueError(f"unknown windows {windows!r}; allowed: {', '.join(WINDOW_MODES)}")
    if order not in BLOCK_ORDERS:
        raise ValueError(f"unknown block order {order!r}; allowed: {', '.join(BLOCK_ORDERS)}")
    if warmups_in not in WARMUPS_IN:
        raise ValueError(f"unknown warmups_in {warmups_in!r}; allowed: {', '.join(WARMUPS_IN)}")
    if warmups_in == "first" and cold_cache:
        raise ValueError("warmups_in='first' with cold_cache: every block but the first would start cold "
                         "and unwarmed; use warmups_in='each'")
    shapes = tuple(shapes)
    if warmup_shape is not None and warmup_shape not in shapes:
        raise ValueError(f"unknown warmup_shape {warmup_shape!r}; allowed: {', '.join(shapes)}")
    if not shapes or len(set(shapes)) != len(shapes):
        raise ValueError(f"shapes must be distinct and at least one, got {list(shapes)}")
    base = _seed(seed)
    if order == "shuffled":
        permutation = np.random.default_rng(base + [len(shapes)]).permutation(len(shapes)).tolist()
        shapes = tuple(shapes[i] for i in permutation)
    blocks = []
    for index, shape in enumerate(shapes):
        rng = np.random.default_rng(base + [shape_key(shape)])
        block_warmups = warmups if warmups_in == "each" or index == 0 else 0
        starts = (window_starts(windows, block_warmups, documents, window, rng)
                  + window_starts(windows, queries, documents, window, rng))
        planned = tuple(
            PlannedQuery(
                block=index,
                shape=(warmup_shape or shape) if i < block_warmups else shape,
                query=i,
                phase="warmup" if i < block_warmups else "measured",
                rep=i if i < block_warmups else i - block_warmups,
                window_start=int(start),
                window_end=int(start) + window,
                cold_start=bool(cold_cache and i == 0),
            )
            for i, start in enumerate(starts)
        )
        blocks.append(Block(index=index, shape=shape, cold_cache=bool(cold_cache), queries=planned))
    return Plan(windows=windows, block_order=shapes, blocks=tuple(blocks))


def interleave(plans: Sequence[Plan], seed: int | Sequence[int]) -> list[tuple[int, PlannedQuery]]:
    """RMIT (Abedi and Brecht, ICPE '17): every plan's queries in one randomised interleaved order.

    `plans`: what one job measures (e.g. one Plan per query family); returns (plan index, query) pairs:
    first every warm-up of every block of every plan in a random order, then every measured query in a
    random order, both drawn from `seed` (the same seed, the same order). Each query keeps its own window
    (drawn for its block alone), so interleaving changes when a query runs, never what it reads. Only for
    a run whose blocks need no cold cache: a cold start per block needs the blocks whole (`blockwise`).
    """
    rng = np.random.default_rng(_seed(seed))
    every = [(index, query) for index, plan in enumerate(plans) for query in plan.queries()]
    out: list[tuple[int, PlannedQuery]] = []
    for phase in PHASES:
        part = [pair for pair in every if pair[1].phase == phase]
        out += [part[i] for i in rng.permutation(len(part)).tolist()]
    return out


def blockwise(plans: Sequence[Plan]) -> list[tuple[int, PlannedQuery]]:
    """Every plan's queries block after block, in each plan's block order (the order `interleave` does not
    keep): (plan index, query) pairs."""
    return [(index, query) for index, plan in enumerate(plans) for query in plan.queries()]


__all__ = [
    "interleave",
    "blockwise",
    "SHAPES",
    "WINDOW_MODES",
    "BLOCK_ORDERS",
    "WARMUPS_IN",
    "PHASES",
    "PlannedQuery",
    "Block",
    "Plan",
    "plan_blocks",
    "shape_key",
    "window_starts",
]
