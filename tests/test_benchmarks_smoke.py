"""The benchmarks import, and their baselines build what the product builds (no timing here).

A benchmark's speed-up is only meaningful if its baseline produces the same output; these checks
fail when the product code changes shape and a baseline was not updated with it.
"""
from __future__ import annotations

import importlib
import sys
from datetime import date
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))


@pytest.mark.parametrize("name", sorted(p.stem for p in BENCHMARKS.glob("bench_*.py")))
def test_benchmark_imports_and_has_main(name):
    module = importlib.import_module(name)
    assert callable(module.main)


def test_upsert_baseline_and_product_build_the_same_statements_for_every_version():
    bench = importlib.import_module("bench_upsert_ops")
    from costlab.appversions.events import generate_events
    from costlab.appversions.statements import driver_statement
    from costlab.appversions.versions import VERSIONS

    events = generate_events(300, seed=5)  # 3,000 events over 10 years
    for name, version in VERSIONS.items():
        reference = [driver_statement(op) for op in version.bulk_upsert_ops(events)]
        assert [driver_statement(op) for op in bench.baseline_ops(version, events)] == reference, name
        assert bench.same_statements(version, events.head(50)) == (True, True), name


def test_upsert_product_figure_counts_the_commands_the_driver_sends():
    bench = importlib.import_module("bench_upsert_ops")
    from costlab.appversions.events import generate_events
    from costlab.appversions.statements import driver_statement
    from costlab.appversions.versions import get_version

    version = get_version("appV4")
    events = generate_events(300, seed=5).head(600)   # three commands: 250 + 250 + 100 statements
    statement_bytes = sum(len(driver_statement(op)) for op in version.bulk_upsert_ops(events))
    # Each command adds its header ("update", name, "ordered") and an array index key per statement.
    overhead = bench.product(version, events) - statement_bytes
    assert 600 * 4 < overhead < 600 * 8 + 3 * 64, overhead


def test_docsize_dict_baseline_builds_the_same_bytes():
    bench = importlib.import_module("bench_docsize_generation")
    from costlab.docsize.generate import generate_bson_batches

    documents = 40
    generated = [doc for batch in generate_bson_batches(2, documents, seed=42) for doc in batch]
    assert bench.dict_documents(2, documents, documents) == generated


def test_events_baseline_draws_the_same_distribution():
    bench = importlib.import_module("bench_events")
    from costlab.appversions import events as ev

    loop = bench.baseline_loop(20_000, ev.users_for(100_000), seed=3)
    # 100,000 events a year over 73 days: 20,000 events drawn over the same users as the loop's.
    vectorised = ev.generate_events(100_000, seed=3, start=date(2010, 1, 1), end=date(2010, 3, 15))
    assert vectorised.height == 20_000
    assert loop.schema == vectorised.schema
    for frame in (loop, vectorised):
        approved = (frame["status"] == "approved").mean()
        assert abs(approved - 0.8) < 0.015, approved
    # The dense keys: |N(0, 0.015)| piles ~40 % of events onto the first ~4 % of users in both.
    users = ev.users_for(100_000)
    first = set(ev.keys_for_users(max(1, users * 4 // 100)).to_list())
    shares = [frame["key"].is_in(list(first)).mean() for frame in (loop, vectorised)]
    assert abs(shares[0] - shares[1]) < 0.02 and shares[0] > 0.35, shares
