"""docsize repeats on a server (issue #36 item 1): each measuring job once per repeat, its queries in a
randomised interleaved order (RMIT, Abedi and Brecht, ICPE '17), and the findings' values the median over
the repeats with their interval. Server-free except the plan of the workflow (snakemake -n)."""
from __future__ import annotations

from collections import Counter

import pytest

from costlab.docsize.datasets import parse_dataset
from costlab.docsize.names import repeat_of, repeat_suffix
from costlab.docsize.run import ORDER_INTERLEAVED, job_order, order_record

# 2 warm-ups and 3 timed queries per shape; spread_customer on: the base dataset has two query families
STUDY = {
    "docs_per_collection": 1200,
    "sizes_kb": [1, 4],
    "seed": 42,
    "customers": 12,
    "window_minutes": 100,
    "runs": {name: {"warmups": 2, "queries": 3} for name in ("same_window", "random_windows", "small_cache")},
    "variants": {"fields_after_history": False, "spread_customer": True, "split_history": False},
}
BASE = parse_dataset("orders_4k")


def _labels(steps) -> list[str]:
    return [s.label for s in steps]


def test_a_warm_runs_order_is_a_permutation_of_every_query_of_every_shape():
    steps = job_order(BASE, "random_windows", STUDY, rep=1)
    # 2 families x 3 shapes x (2 warm-ups + 3 queries) = 30 queries
    assert len(steps) == 30
    per_shape = Counter((s.family, s.query.shape) for s in steps)
    assert per_shape == {(f, shape): 2 + 3 for f in ("window", "customer")
                         for shape in ("whole", "projection", "covered")}
    # the 12 warm-ups (2 families x 3 shapes x 2) all come before the 18 timed queries
    assert [s.query.phase for s in steps] == ["warmup"] * 12 + ["measured"] * 18
    # interleaved: not all of one shape then all of the next (6 blocks would change shape 5 times at most)
    shapes = [(s.family, s.query.shape) for s in steps if s.query.phase == "measured"]
    changes = sum(a != b for a, b in zip(shapes, shapes[1:]))
    assert changes > 5
    # every planned query once: (family, block, position in block) are distinct
    assert len({(s.family, s.query.block, s.query.query) for s in steps}) == 30


def test_the_order_is_seeded_by_the_repeat():
    one, again, two = (_labels(job_order(BASE, "random_windows", STUDY, rep=r)) for r in (1, 1, 2))
    assert one == again
    assert one != two
    assert Counter(one) == Counter(two)   # the same queries, another order
    # another docsize seed, another order
    assert _labels(job_order(BASE, "random_windows", STUDY | {"seed": 7}, rep=1)) != one


def test_repeat_one_keeps_the_windows_a_run_always_had_and_later_repeats_draw_their_own():
    from costlab.docsize.run import family_plan, get_run

    run = get_run("random_windows")
    before = [q.window_start for q in family_plan("window", run, 2, 3, STUDY).queries()]
    one = [q.window_start for q in family_plan("window", run, 2, 3, STUDY, rep=1).queries()]
    two = [q.window_start for q in family_plan("window", run, 2, 3, STUDY, rep=2).queries()]
    assert one == before and two != one


def test_the_small_cache_run_keeps_its_blocks_and_draws_their_order_per_repeat():
    """A cold start, the whole-document warm-ups once, then the shapes as blocks: repeat 1 in the article's
    order, later repeats in a permutation drawn from the seed (the warm-ups stay whole-document)."""
    one = job_order(BASE, "small_cache", STUDY, rep=1)
    # per family: 2 warm-ups (before the first block only) + 3 shapes x 3 queries = 11
    assert len(one) == 22
    window = [s for s in one if s.family == "window"]
    assert [s.label for s in window] == (
        ["window:whole:warmup"] * 2 + ["window:whole:measured"] * 3
        + ["window:projection:measured"] * 3 + ["window:covered:measured"] * 3
    )
    orders = {tuple(s.query.shape for s in job_order(BASE, "small_cache", STUDY, rep=r)
                    if s.family == "window" and s.query.phase == "measured")[::3] for r in range(2, 9)}
    assert len(orders) > 1   # 7 repeats drawing from 6 permutations: not all the same
    for r in range(2, 9):
        steps = [s for s in job_order(BASE, "small_cache", STUDY, rep=r) if s.family == "window"]
        assert [s.query.shape for s in steps[:2]] == ["whole", "whole"]   # the warm-ups
        assert [s.query.phase for s in steps] == ["warmup"] * 2 + ["measured"] * 9
        assert Counter(s.query.shape for s in steps) == {"whole": 5, "projection": 3, "covered": 3}


def test_the_order_record_says_how_the_order_was_made():
    steps = job_order(BASE, "same_window", STUDY, rep=3)
    record = order_record("same_window", steps, 3)
    assert record["repeat"] == 3 and record["mode"] == ORDER_INTERLEAVED and record["block_order"] is None
    assert record["queries"] == _labels(steps) and len(record["queries"]) == 30
    cold = order_record("small_cache", job_order(BASE, "small_cache", STUDY, rep=1), 1)
    assert cold["mode"].startswith("blocks") and cold["block_order"] == {
        "window": "whole>projection>covered", "customer": "whole>projection>covered"}


def test_repeat_wildcards():
    assert [repeat_suffix(r) for r in (1, 2, 10)] == ["", "__rep2", "__rep10"]
    assert [repeat_of(w) for w in ("", "__rep2", "__rep10")] == [1, 2, 10]
    with pytest.raises(ValueError, match="repeats count from 1"):
        repeat_suffix(0)
    with pytest.raises(ValueError, match="r >= 2"):
        repeat_of("__rep1")
