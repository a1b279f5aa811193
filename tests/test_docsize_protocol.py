"""The docsize query protocol planner: one block per shape, its own seeded windows, cold starts."""
from __future__ import annotations

import pytest

from costlab.docsize.protocol import SHAPES, plan_blocks

BASE = dict(documents=50_000, window=1_000, warmups=50, queries=30, seed=[42, 2, 0])


def test_one_block_per_shape_each_contiguous_warmups_first():
    plan = plan_blocks(windows="random", cold_cache=False, **BASE)
    assert [b.shape for b in plan.blocks] == list(SHAPES) and plan.block_order == SHAPES
    assert plan.block_order_label == "whole>projection>covered"
    rows = plan.rows()
    assert len(rows) == 3 * (50 + 30)
    # Shapes never interleave: the shape changes exactly twice over the whole run.
    changes = sum(a["shape"] != b["shape"] for a, b in zip(rows, rows[1:]))
    assert changes == 2
    for block in plan.blocks:
        phases = [q.phase for q in block.queries]
        assert phases == ["warmup"] * 50 + ["measured"] * 30
        assert [q.query for q in block.queries] == list(range(80))
        assert [q.rep for q in block.measured()] == list(range(30))


def test_random_windows_are_each_shapes_own_and_valid():
    plan = plan_blocks(windows="random", cold_cache=False, **BASE)
    starts = {b.shape: [q.window_start for q in b.queries] for b in plan.blocks}
    assert starts["whole"] != starts["projection"] != starts["covered"]
    assert len(set(starts["whole"])) > 70  # a new window (almost) every query
    for q in plan.queries():
        assert 0 <= q.window_start <= 50_000 - 1_000 and q.window_end - q.window_start == 1_000
    # No window is queried by two shapes back to back (the cache warming the issue is about).
    rows = plan.rows()
    assert not any(
        a["shape"] != b["shape"] and a["window_start"] == b["window_start"] for a, b in zip(rows, rows[1:])
    )


def test_windows_depend_on_seed_and_shape_not_on_block_order_or_other_shapes():
    plan = plan_blocks(windows="random", cold_cache=False, **BASE)
    again = plan_blocks(windows="random", cold_cache=False, **BASE)
    assert plan == again
    alone = plan_blocks(windows="random", cold_cache=False, shapes=["projection"], **BASE)
    assert alone.blocks[0].queries == tuple(q.__class__(**(q.as_row() | {"block": 0}))
                                            for q in plan.blocks[1].queries)
    shuffled = plan_blocks(windows="random", cold_cache=False, order="shuffled", **BASE)
    assert sorted(shuffled.block_order) == sorted(SHAPES)
    by_shape = {b.shape: [q.window_start for q in b.queries] for b in shuffled.blocks}
    assert by_shape == {b.shape: [q.window_start for q in b.queries] for b in plan.blocks}
    other = plan_blocks(windows="random", cold_cache=False, **(BASE | {"seed": [42, 1, 0]}))
    assert [q.window_start for q in other.queries()] != [q.window_start for q in plan.queries()]


def test_shuffled_order_is_seeded_and_recorded():
    orders = {
        plan_blocks(
            windows="random", cold_cache=False, order="shuffled", **(BASE | {"seed": [s]})
        ).block_order
        for s in range(30)
    }
    assert len(orders) > 1  # the seed picks the order
    plan = plan_blocks(windows="random", cold_cache=False, order="shuffled", **BASE)
    assert [b.shape for b in plan.blocks] == list(plan.block_order)
    assert [b.index for b in plan.blocks] == [0, 1, 2]


def test_same_window_series_reads_the_middle_window():
    plan = plan_blocks(windows="same", cold_cache=False, **BASE)
    assert {q.window_start for q in plan.queries()} == {24_500}


def test_cold_cache_marks_the_first_query_of_every_block():
    cold = plan_blocks(windows="random", cold_cache=True, **BASE)
    assert all(b.cold_cache for b in cold.blocks)
    assert [q.query for q in cold.queries() if q.cold_start] == [0, 0, 0]
    warm = plan_blocks(windows="random", cold_cache=False, **BASE)
    assert not any(q.cold_start for q in warm.queries()) and not any(b.cold_cache for b in warm.blocks)


@pytest.mark.parametrize("override, message", [
    ({"windows": "sequential"}, "allowed: same, random"),
    ({"order": "alphabetical"}, "allowed: given, shuffled"),
    ({"window": 60_000}, "longer than the collection"),
    ({"queries": 0}, "queries must be an integer >= 1"),
    ({"warmups": -1}, "warmups must be an integer >= 0"),
    ({"shapes": ["whole", "whole"]}, "distinct"),
    ({"seed": []}, "seed must be"),
])
def test_bad_input_is_named(override, message):
    args = BASE | {"windows": "random", "cold_cache": False} | override
    with pytest.raises(ValueError, match=message):
        plan_blocks(**args)


def test_warmups_once_before_the_first_shape_then_every_shapes_measured_queries():
    """The article's bytes-read table fits one warm-up series per collection (docs/engine-lab.md)."""
    once = plan_blocks(windows="random", cold_cache=False, warmups_in="first", **BASE)
    each = plan_blocks(windows="random", cold_cache=False, **BASE)
    assert [sum(q.phase == "warmup" for q in b.queries) for b in once.blocks] == [50, 0, 0]
    assert [len(b.measured()) for b in once.blocks] == [30, 30, 30]
    # the first block is the per-shape plan's first block; the others start with their measured queries
    assert once.blocks[0].queries == each.blocks[0].queries
    assert [q.rep for q in once.blocks[1].queries] == list(range(30))
    with pytest.raises(ValueError, match="allowed: each, first"):
        plan_blocks(windows="random", cold_cache=False, warmups_in="once", **BASE)
    with pytest.raises(ValueError, match="cold_cache"):
        plan_blocks(windows="random", cold_cache=True, warmups_in="first", **BASE)
