"""docsize repeats on a server (issue #36 item 1): each measuring job once per repeat, its queries in a
randomised interleaved order (RMIT, Abedi and Brecht, ICPE '17), and the findings' values the median over
the repeats with their interval. Server-free except the plan of the workflow (snakemake -n)."""
from __future__ import annotations

from collections import Counter

import pytest

from costlab.docsize.datasets import parse_dataset
from costlab.docsize.run import ORDER_INTERLEAVED, job_order, order_record
from costlab.repeats import SERVER_REPEATS

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


def test_the_small_cache_run_keeps_the_articles_protocol_in_every_repeat():
    """A cold start, the whole-document warm-ups once, then the shapes as blocks in the article's order, in
    every repeat (a repeat repeats the protocol: the projection after the whole documents reads what they
    left unread), each repeat with its own windows."""
    one = job_order(BASE, "small_cache", STUDY, rep=1)
    # per family: 2 warm-ups (before the first block only) + 3 shapes x 3 queries = 11
    assert len(one) == 22
    window = [s for s in one if s.family == "window"]
    assert [s.label for s in window] == (
        ["window:whole:warmup"] * 2 + ["window:whole:measured"] * 3
        + ["window:projection:measured"] * 3 + ["window:covered:measured"] * 3
    )
    orders = {tuple(s.query.shape for s in job_order(BASE, "small_cache", STUDY, rep=r)
                    if s.family == "window" and s.query.phase == "measured")[::3] for r in range(1, 9)}
    assert orders == {("whole", "projection", "covered")}
    windows = {tuple(s.query.window_start for s in job_order(BASE, "small_cache", STUDY, rep=r))
               for r in range(1, 9)}
    assert len(windows) == 8   # each repeat its own windows
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
    assert [SERVER_REPEATS.wildcard(r) for r in (1, 2, 10)] == ["", "__rep2", "__rep10"]
    assert [SERVER_REPEATS.repeat_of(w) for w in ("", "__rep2", "__rep10")] == [1, 2, 10]
    with pytest.raises(ValueError, match="repeats count from 1"):
        SERVER_REPEATS.wildcard(0)
    with pytest.raises(ValueError, match="r >= 2"):
        SERVER_REPEATS.repeat_of("__rep1")


# --- tables over repeats: raw frames of 3 repeats built by hand (one query per cell, so a cell's median is
# its one value); the findings' values and intervals worked out below, not by the code under test ----------

PUBLISHED_QUERIES = "resources/published/docsize_query_tables.csv"
READS = "bytes read into cache, projection / whole documents, 64 KB, 256 MB cache"
SLOWDOWN = "projection median client time, 256 MB cache / default cache, 64 KB"


def _raw(repeat: int, kind: str, projection_bytes: float, random_projection_ms: float):
    import polars as pl

    from costlab.docsize.run import RAW_SCHEMA

    cells = [  # run, shape, client ms, bytes read into cache
        ("small_cache", "whole", 550.0, 60e6),
        ("small_cache", "projection", 34.0, projection_bytes),
        ("random_windows", "projection", random_projection_ms, 0.0),
    ]
    rows = [{c: None for c in RAW_SCHEMA} | {
        "run": run, "run_label": run, "profile": "standalone", "dataset": "orders_64k", "variant": "base",
        "size_kb": 64, "family": "window", "shape": shape, "rep": 0, "client_ms": ms,
        "bytes_read_into_cache": read, "plan": "IXSCAN > FETCH", "server_kind": kind, "repeat": repeat,
    } for run, shape, ms, read in cells]
    return pl.DataFrame(rows, schema=RAW_SCHEMA)


def _model():
    import polars as pl

    return pl.DataFrame({"variant": ["base"], "size_kb": [64], "avg_doc_bytes": [65536.0],
                         "published_avg_doc_bytes": [65876.0]})


def _verdicts(raw):
    from costlab.docsize.tables import published_vs_reproduced, repeat_summaries, summary_table

    pvr = published_vs_reproduced(summary_table(raw), _model(), PUBLISHED_QUERIES, 1000,
                                  repeats=repeat_summaries(raw))
    return {r["metric"]: r for r in pvr.iter_rows(named=True)}


# projection / whole bytes per repeat: 24/60 = 0.4, 54/60 = 0.9, 66/60 = 1.1; the slowdown, small-cache
# projection 34 ms over the default cache's 3.4, 5.0 and 2.0 ms: 10, 6.8, 17
REPEATS = [(1, 24e6, 3.4), (2, 54e6, 5.0), (3, 66e6, 2.0)]


CAP = "more than 50 repeats would be needed to decide it: the value sits close to the band's edge"


def test_three_repeats_give_the_median_its_interval_and_the_verdict_from_the_band():
    import polars as pl

    from costlab.docsize.tables import summary_table

    raw = pl.concat([_raw(r, "mongod", b, ms) for r, b, ms in REPEATS])
    rows = _verdicts(raw)
    reads = rows[READS]
    # median of (0.4, 0.9, 1.1) = 0.9; 3 repeats: [min, max] = [0.4, 1.1] at 1 - 2 x 0.5^3 = 75 %
    assert reads["reproduced"] == pytest.approx(0.9)
    assert reads["interval"] == "0.4 to 1.1 at 75.0% (median of 3 repeats, order statistics)"
    # rule: ratio >= 0.5, band [0.5, inf): the interval straddles 0.5 -> inconclusive. The suggestion
    # (intervals.repeats_to_decide): MAD 0.2 x 1.4826 = 0.297, x sqrt(2 / chi2(0.2; 2) = 0.446) = 0.628; the
    # distance 0.4 less half the median's standard error 1.2533 x 0.628 / sqrt(3) = 0.454 is 0.173, so a
    # repeat lands above 0.5 with p = Phi(0.173 / 0.628) = 0.61; 50 repeats (interval x(18)..x(33)) need 33
    # of 50 above: P = 0.27 < 0.8 -> more than the cap of 50
    assert reads["verdict"] == "inconclusive"
    assert reads["reason"] == f"the interval straddles the tolerance band; {CAP}"
    slowdown = rows[SLOWDOWN]
    # 34 / (3.4, 5.0, 2.0) = (10, 6.8, 17): median 10, [6.8, 17] wholly inside [2, inf) -> reproduced
    assert slowdown["reproduced"] == pytest.approx(10.0)
    assert slowdown["interval"] == "6.8 to 17 at 75.0% (median of 3 repeats, order statistics)"
    assert slowdown["verdict"] == "reproduced"
    # the generated sizes are no server measurement: no interval
    assert rows["mean document, 64 KB"]["interval"] is None
    # the summary: each cell's median over the repeats' medians, n every repeat's queries
    summary = summary_table(raw)
    projection = summary.filter((pl.col("run") == "small_cache") & (pl.col("shape") == "projection"))
    assert projection.select("n", "repeats", "bytes_read_into_cache_p50").row(0) == (3, 3, 54e6)


def test_one_repeat_gives_the_row_one_run_always_gave():
    from costlab.docsize.tables import published_vs_reproduced, summary_table

    raw = _raw(1, "mongod", 24e6, 3.4)
    reads = _verdicts(raw)[READS]
    # 24 / 60 = 0.4 < 0.5: the point verdict, no interval
    assert (reads["reproduced"], reads["verdict"], reads["interval"]) == (
        pytest.approx(0.4), "not reproduced", "one run: no interval")
    # the same row as without repeats (a frame measured before repeats existed has no repeat column)
    before = published_vs_reproduced(summary_table(raw.drop("repeat")), _model(), PUBLISHED_QUERIES, 1000)
    row = before.filter(before["metric"] == READS).row(0, named=True)
    assert row == reads


def test_the_stand_ins_rows_stay_the_stand_ins_over_repeats():
    import polars as pl

    raw = pl.concat([_raw(r, "stand-in", b, ms) for r, b, ms in REPEATS])
    reads = _verdicts(raw)[READS]
    assert (reads["verdict"], reads["reason"], reads["server_kind"]) == (
        "not comparable", "stand-in", "stand-in")
    assert reads["reproduced"] == pytest.approx(0.9) and reads["interval"].startswith("0.4 to 1.1 at 75.0%")


# --- the plan: snakemake -n, no server needed (the external URI is never dialled in a dry run) ----------

@pytest.mark.workflow
def test_three_repeats_plan_three_measuring_jobs_per_run_and_dataset_and_one_load(tmp_path):
    from workflow import external, planned, run_workflow

    extra = tmp_path / "repeats.yaml"
    # config/smoke.yaml: sizes 1 and 4 KB, no tail or split variants -> 2 datasets, 3 runs
    extra.write_text("docsize:\n  repeats: 3\n")
    result = run_workflow(tmp_path, external("mongodb://127.0.0.1:9"),
                          ("-n", "results/docsize/tables/summary.csv"),
                          configfiles=("config/smoke.yaml", str(extra)))
    assert result.returncode == 0, result.stderr[-3000:]
    counts = planned(result)
    assert counts["docsize_load"] == 2
    assert counts["docsize_measure"] == 2 * 3 * 3
    assert "results/docsize/raw/small_cache__orders_4k__rep3.parquet" in result.stdout
    assert "results/docsize/raw/small_cache__orders_4k.parquet" in result.stdout   # repeat 1: its old path
    # one repeat's output alone: that job and the load before it
    one = run_workflow(tmp_path, external("mongodb://127.0.0.1:9"),
                       ("-n", "results/docsize/raw/same_window__orders_1k__rep2.parquet"),
                       configfiles=("config/smoke.yaml", str(extra)))
    assert one.returncode == 0, one.stderr[-3000:]
    assert planned(one)["docsize_measure"] == 1 and planned(one)["docsize_load"] == 1


def test_repeats_config_the_model_and_the_cluster():
    from costlab.cluster import measuring_job_counts
    from costlab.config import ROOT, load_config, study_config_hash
    from costlab.docsize.params import ModelParams

    one = load_config(ROOT / "config" / "smoke.yaml")
    three = load_config(ROOT / "config" / "smoke.yaml", overrides={"docsize": {"repeats": 3}})
    assert one["docsize"]["repeats"] == 1   # the schema's default
    # smoke: 2 datasets x 3 runs, once per repeat
    assert measuring_job_counts(one)["docsize_measure"] == 6
    assert measuring_job_counts(three)["docsize_measure"] == 18
    assert measuring_job_counts(three)["docsize_load"] == 2
    # more repeats do not rerun the model, nor make the measurements already made stale (they only add jobs)
    assert ModelParams.declare(one) == ModelParams.declare(three)
    assert study_config_hash(one, "docsize") == study_config_hash(three, "docsize")
    with pytest.raises(Exception, match=r"docsize\.repeats") as error:
        load_config(ROOT / "config" / "smoke.yaml", overrides={"docsize": {"repeats": 0}})
    assert len(str(error.value).splitlines()) == 1


def test_a_small_cache_bytes_cell_is_the_mean_of_its_queries_and_over_repeats_the_median_of_the_means():
    """The article's bytes-read figures are means, and at 1 and 4 KB a cell's queries are bimodal (a window or
    nothing): 64 KB projection queries reading 0, 0, 0 and 244 MB have the median 0 and the mean 61 MB, the
    published 61 MB (ratio 1.0). Over 3 repeats the cell is the median of the repeats' means."""
    import polars as pl

    def raw(repeat: int, reads: list[float]):
        base = _raw(repeat, "mongod", 0.0, 3.4).filter(pl.col("shape") == "projection")
        return pl.concat([base.with_columns(pl.lit(read).alias("bytes_read_into_cache")) for read in reads])

    metric = ("mean bytes read into cache per query, 64 KB, 256 MB cache, random windows, projection "
              "(window 1000 orders scaled to 1,000)")
    one = _verdicts(raw(1, [0.0, 0.0, 0.0, 244e6]))[metric]
    assert one["reproduced"] == pytest.approx(61e6) and one["verdict"] == "reproduced"
    # three repeats whose means are 61, 30.5 and 122 MB: the median 61 MB, the interval [30.5, 122] MB
    repeats = [raw(1, [0.0, 0.0, 0.0, 244e6]), raw(2, [0.0, 61e6]), raw(3, [122e6])]
    three = _verdicts(pl.concat(repeats))[metric]
    assert three["reproduced"] == pytest.approx(61e6)
    assert three["interval"].endswith("(median of 3 repeats, order statistics)")
