"""Repeats of the appversions engine lab (issue #36, item 1): each version's job once per repeat, each
repeat its own events seed, merged into medians judged by their interval over the repeats."""
from __future__ import annotations

import subprocess
import sys

import polars as pl
import pytest
from test_engine_appversions import _job_args, _tiny_config

from costlab.config import ROOT

PUBLISHED = ROOT / "resources/published/appversions_collection_stats.csv"
NAMES = ["appV1", "appV6R3"]
REPEATS = 3


@pytest.fixture(scope="module")
def repeated(tmp_path_factory):
    """Two versions, three repeats each, at a tiny scale (2,000 events): the version jobs' files."""
    from costlab.appversions.engine import run_version_job

    tmp = tmp_path_factory.mktemp("repeats")
    config = _tiny_config(tmp, NAMES)
    config["engine"]["appversions"]["events_per_year"] = 200
    config["engine"]["appversions"]["repeats"] = REPEATS
    # repeats, not the deployment, are under test here: the standalone grows each in one run (the
    # replica set's bracket would add two more: tests/test_engine_appversions.py)
    config["engine"]["appversions"]["topology"] = "standalone"
    run, version_params, merge_params = _job_args(config)
    paths, records = {}, {}
    for name in NAMES:
        for rep in range(1, REPEATS + 1):
            paths[name, rep] = tmp / name / f"rep{rep}.json"
            records[name, rep] = run_version_job(version_params, run, name, paths[name, rep], rep=rep)
    return config, run, merge_params, paths, records, tmp


def _merge(merge_params, run, paths, out):
    from costlab.appversions.engine import merge_engine_job

    table = merge_engine_job(merge_params, run, list(paths), out / "storage.csv", out / "verdicts.csv",
                             out / "provenance.json", PUBLISHED)
    return table, pl.read_csv(out / "verdicts.csv")


def test_repeats_have_their_own_seeds_and_merge_into_medians_with_an_interval(repeated):
    config, run, merge_params, paths, records, tmp = repeated
    # the job params do not hold the repeats (another count must not rerun the repeats measured)
    assert "repeats" not in _job_args(config)[1].engine["appversions"]
    table, verdicts = _merge(merge_params, run, paths.values(), tmp / "merged")
    for name in NAMES:
        rows = [records[name, rep]["row"] for rep in range(1, REPEATS + 1)]
        seeds = [row["seed"] for row in rows]
        assert seeds[0] == config["appversions"]["seed"] and len(set(seeds)) == REPEATS
        ratios = [row["storage_bytes"] / row["data_bytes"] for row in rows]
        if name == "appV1":   # a document per key and day: other events, other data bytes, another ratio
            assert len({row["data_bytes"] for row in rows}) == len(set(ratios)) == REPEATS, rows
        # (appV6R3's buckets hold the same bytes whatever the seed; its storage moves by whole pages with
        # eviction's timing, from run to run even on one seed at this scale)
        got = table.filter(pl.col("version") == name).row(0, named=True)
        assert got["repeats"] == REPEATS
        assert got["storage_over_data"] == pytest.approx(sorted(ratios)[1])   # the middle one of three
        assert got["storage_bytes"] == sorted(row["storage_bytes"] for row in rows)[1]
        # three repeats: [min, max] at the 75 % it really has (1 - 2 x 0.5^3)
        assert (got["storage_over_data_low"], got["storage_over_data_high"]) == pytest.approx(
            (min(ratios), max(ratios)))
        assert got["interval_confidence"] == pytest.approx(0.75)
        verdict = verdicts.filter(pl.col("finding").str.starts_with(f"{name}:")).row(0, named=True)
        if len(set(ratios)) == 1:   # appV6R3 at this scale can fill the same pages whatever the seed
            assert "the same in all 3 repeats" in verdict["interval"], verdict
        else:
            assert "at 75.0% (median of 3 repeats" in verdict["interval"], verdict
        assert verdict["reproduced"] == pytest.approx(sorted(ratios)[1], rel=1e-3)


def test_one_repeat_is_todays_row_and_says_one_run(repeated):
    """repeats: 1 runs repeat 1 only, on appversions.seed: the storage table holds the columns and values
    one run always had, and each verdict is the point verdict with "one run: no interval"."""
    import dataclasses

    from costlab.appversions.engine import storage_table
    from costlab.engine.wt import wiredtiger_version
    from costlab.finding import judged
    from costlab.published import read_tolerances

    config, run, merge_params, paths, records, tmp = repeated
    once = dataclasses.replace(merge_params, repeats=1)
    table, verdicts = _merge(once, run, [paths[name, 1] for name in NAMES], tmp / "once")
    today = storage_table([{k: v for k, v in records[name, 1]["row"].items() if k not in ("rep", "seed")}
                           for name in NAMES], pl.read_csv(PUBLISHED), wiredtiger_version())
    assert table.select(today.columns).equals(today)
    assert table["repeats"].to_list() == [1, 1]
    assert table["storage_over_data_low"].is_null().all()
    rule = read_tolerances(ROOT / "resources/published/appversions_tolerances.csv")["engine_compression"]
    for r in today.iter_rows(named=True):
        point = judged("x", None, None, r["published_storage_over_data"], r["storage_over_data"],
                       rule.holds(r["published_storage_over_data"]), server_kind=None)
        row = verdicts.filter(pl.col("finding").str.starts_with(f"{r['version']}:")).row(0, named=True)
        assert (row["verdict"], row["interval"]) == (point.verdict.value, "one run: no interval")
    # a merge missing a repeat, or holding one too many, is refused
    with pytest.raises(ValueError, match="repeats 3"):
        _merge(merge_params, run, [paths[name, 1] for name in NAMES], tmp / "short")


def test_an_interval_straddling_the_band_is_inconclusive_with_the_repeats_to_decide(repeated):
    """A constructed case: three repeats at 0.70, 0.80 and 0.90 x published against the 0.75-1.33 band.
    The interval [0.70, 0.90] crosses 0.75; the spread (MAD 0.10 x 1.4826 x sqrt(2 / chi2(0.2; 2) = 0.446),
    times the published ratio) is 0.31 x it, the distance to the edge 0.05 x it: less half the median's
    standard error (1.2533 x 0.31 / sqrt(3) = 0.23) it is below 0, so more than the cap of 50 repeats."""
    from costlab.appversions.engine import over_repeats_table, storage_table, verdicts

    _, _, _, _, records, _ = repeated
    published = pl.read_csv(PUBLISHED)
    pub = published.filter(pl.col("version") == "appV6R3").row(0, named=True)
    ratio = pub["storage_size_gib"] / pub["data_size_gib"]
    rows = []
    for rep, factor in zip((1, 2, 3), (0.9, 0.7, 0.8)):
        row = dict(records["appV6R3", rep]["row"])
        row["data_bytes"] = 1_000_000
        row["storage_bytes"] = round(factor * ratio * 1_000_000)
        rows.append(row)
    table = over_repeats_table(storage_table(rows, published, "11.2.0"))
    assert table["storage_over_data"][0] == pytest.approx(0.8 * ratio, rel=1e-5)
    got = verdicts(table).row(0, named=True)
    if got["verdict"] == "not comparable":   # snappy missing here: the substitution decides first
        pytest.skip(got["reason"])
    assert got["verdict"] == "inconclusive", got
    assert "more than 50 repeats would be needed to decide it" in got["reason"], got


@pytest.fixture(scope="module")
def engine_plan(tmp_path_factory) -> str:
    """One `snakemake -n` of both engine labs' merged tables with repeats 3 for each (the two studies' engine
    jobs are independent): one workflow parse for the two plan tests below."""
    workdir = tmp_path_factory.mktemp("engine_plan")
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles"):
        (workdir / name).symlink_to(ROOT / name)
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "results/appversions/engine/storage.csv",
         "results/arraygrowth/engine/published_vs_engine.csv", "--cores", "1",
         "--directory", str(workdir), "--snakefile", str(workdir / "Snakefile"),
         "--config", "appversions={versions: [appV1, appV6R3]}", "server={backend: none}",
         "engine={appversions: {repeats: 3}, arraygrowth: {repeats: 3}}"],
        cwd=workdir, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    return out


def test_the_plan_runs_each_version_once_per_repeat(engine_plan):
    """`snakemake -n` with repeats 3 plans three engine jobs per version (rep 1-3) and one merge."""
    out = engine_plan
    blocks = [block for block in out.split("\nrule ")[1:] if block.startswith("appversions_engine_version:")]
    planned = sorted(line.split("wildcards:", 1)[1].strip() for block in blocks for line in block.splitlines()
                     if "wildcards:" in line)
    wanted = sorted(f"version={v}, rep=rep{r}" for v in ("appV1", "appV6R3") for r in (1, 2, 3))
    assert planned == wanted, out[-3000:]
    assert sum(block.startswith("appversions_engine:") for block in out.split("\nrule ")[1:]) == 1
    # repeat 1 where a single run always wrote, the others beside it (costlab.repeats.ENGINE_REPEATS)
    for rep in (1, 2, 3):
        assert f"results/appversions/engine/versions/appV6R3/rep{rep}.json" in out, out[-3000:]


def test_the_rigorous_config_merges_over_the_defaults():
    from costlab.appversions.params import EngineParams, EngineVersionParams
    from costlab.config import load_config

    default = load_config(ROOT / "config" / "config.yaml")
    rigorous = load_config(ROOT / "config" / "config.yaml", ROOT / "config" / "rigorous.yaml")
    assert default["engine"]["appversions"]["repeats"] == 1
    assert EngineParams.from_config(rigorous).repeats == 5
    # the version jobs' params are the default's: the rigorous run reuses the default's repeat 1
    assert EngineVersionParams.from_config(rigorous).engine == EngineVersionParams.from_config(default).engine
    # arraygrowth likewise: 5 repeats, the repeat jobs' params the default's (its repeat 1 is reused)
    from costlab.arraygrowth import params as ag

    assert default["engine"]["arraygrowth"]["repeats"] == 1
    assert ag.EngineMergeParams.from_config(rigorous).repeats == 5
    assert ag.EngineParams.from_config(rigorous) == ag.EngineParams.from_config(default)


# ---- arraygrowth's engine lab at repeats (engine.arraygrowth.repeats) -------------------------------

def test_arraygrowth_repeats_merge_into_medians_each_finding_with_its_interval(tmp_path):
    """Two repeats of the arraygrowth engine lab at a small N, merged (not through Snakemake): every row with
    a value carries its interval over the 2 repeats, and a counter that does not move between repeats reads
    [x, x], "the same in all 2 repeats". The journal bytes per write on a replica set: the oplog entry with
    a retryable write's session fields (339 B + ~29 B of record framing = 368, padded to 384 = 3 x 128) and
    the oplog truncate point (71 + 29 = 100, padded to 128) -- 512 per write; on a standalone one record of
    the {_id, ts} document padded to 128 (tests/test_engine.py works both out)."""
    from costlab.arraygrowth.engine import merge_repeats, sweep
    from costlab.engine.connection import EngineSettings

    settings = EngineSettings(journal_compressor="lz4", block_compressor="lz4")
    per_repeat = [sweep([250, 500, 1000], ["standalone", "replset-1"], ["insert", "push"], settings, "lz4",
                        tmp_path / f"rep{rep}").with_columns(pl.lit(rep).alias("rep")) for rep in (1, 2)]
    table, verdicts = merge_repeats(
        per_repeat, ["insert", "push"], pl.read_csv(ROOT / "resources/published/arraygrowth_log_bytes.csv"),
        pl.read_csv(ROOT / "resources/published/arraygrowth_cursor_calls.csv"))
    assert set(table["repeats"]) == {2}
    measured = verdicts.filter(pl.col("reproduced").is_not_null())
    assert measured.height >= 9, verdicts
    for row in measured.iter_rows(named=True):
        assert row["interval"].endswith("2 repeats") or "median of 2 repeats" in row["interval"], row
    # the findings with no value at this N (published at N=10,000 and more) stay what they are
    unmeasured = verdicts.filter(pl.col("reproduced").is_null())
    assert set(unmeasured["verdict"]) == {"not comparable"}, unmeasured
    # Per write the records are fixed (above), but a busy machine can slip in one more timed record (the
    # replica set's periodic flushes; seen once in a loaded `make test`: 512.1 B a write, one repeat 200 B
    # over): each repeat within a record or two of its 1,000 writes, i.e. within 0.3 B a write.
    sweep_rows = {rep: frame.filter((pl.col("workload") == "insert") & (pl.col("n") == 1000))
                  for rep, frame in zip((1, 2), per_repeat, strict=True)}
    for profile, expected in (("standalone", 128.0), ("replset-1", 512.0)):
        row = verdicts.filter(pl.col("metric").str.starts_with(f"log bytes per write ({profile}, insert")) \
            .row(0, named=True)
        assert row["reproduced"] == pytest.approx(expected, abs=0.3), row
        assert row["verdict"] == "reproduced", row
        per_repeat_bytes = {float(f.filter(pl.col("profile") == profile)["log_bytes"][0])
                            for f in sweep_rows.values()}
        if len(per_repeat_bytes) == 1:   # the usual case: both repeats wrote exactly 1,000 x expected
            assert per_repeat_bytes == {expected * 1000}, per_repeat_bytes
            assert row["interval"] == f"{expected:.0f} to {expected:.0f}: the same in all 2 repeats", row
            assert row["reason"] == "the same in all 2 repeats", row
        else:
            assert "median of 2 repeats" in row["interval"], row
    # log_bytes.csv: each repeat's value beside the median (their mean, for two)
    insert = table.filter((pl.col("profile") == "replset-1") & (pl.col("workload") == "insert")
                          & (pl.col("n") == 1000)).row(0, named=True)
    values = [float(f.filter(pl.col("profile") == "replset-1")["log_bytes"][0]) for f in sweep_rows.values()]
    assert insert["log_bytes"] == pytest.approx(sum(values) / 2)
    assert insert["log_bytes_repeats"] == "; ".join(f"{v:.0f}" for v in values), insert
    assert all(abs(v - 512 * 1000) <= 2 * 128 for v in values), values


def test_over_repeat_findings_judges_the_median_by_its_interval():
    """Constructed repeats of one finding under a band [0.9, 1.1]: values 1.0, 1.05, 0.95 -> median 1.0,
    [min, max] = [0.95, 1.05] at 1 - 2 x 0.5^3 = 75 %, inside: reproduced. Values 1.0, 1.2, 0.95 ->
    [0.95, 1.2] crosses 1.1: inconclusive; half-width above 0.2 against a distance 0.1 to the edge: more than
    3 x (0.2 / 0.1)^2 = 12 repeats, so 13. A not-comparable row keeps its verdict and reason."""
    from costlab.finding import judged
    from costlab.repeats import over_repeat_findings
    from costlab.verdicts import Verdict, between

    rule = between(0.9, 1.1)

    def rows(*values):
        return [[judged("f", "m", "ratio", 1.0, v, rule, server_kind="engine")] for v in values]

    inside = over_repeat_findings(rows(1.0, 1.05, 0.95))[0]
    assert (inside.reproduced, inside.verdict) == (1.0, Verdict.REPRODUCED)
    assert inside.interval == "0.95 to 1.05 at 75.0% (median of 3 repeats, order statistics)"
    straddles = over_repeat_findings(rows(1.0, 1.2, 0.95))[0]
    assert straddles.verdict is Verdict.INCONCLUSIVE
    # MAD 0.05 x 1.4826 x sqrt(2 / 0.446) = 0.157; distance 0.1 to 1.1 less half of 1.2533 x 0.157 / sqrt(3)
    # = 0.043: a repeat lands below 1.1 with p = Phi(0.043 / 0.157) = 0.61, too few of 50 (33 needed, P 0.27)
    assert "more than 50 repeats would be needed to decide it" in straddles.reason
    assert straddles.risk is None and inside.risk == "12.5%"   # (1 - 0.75) / 2: 3 repeats' [min, max]
    kept = over_repeat_findings([[r[0].but(Verdict.NOT_COMPARABLE, "stand-in")] for r in rows(1.0, 2.0)])[0]
    assert (kept.verdict, kept.reason, kept.reproduced) == (Verdict.NOT_COMPARABLE, "stand-in", 1.5)


def test_the_plan_runs_the_arraygrowth_engine_once_per_repeat(engine_plan):
    """`snakemake -n` with engine.arraygrowth.repeats 3 plans three arraygrowth engine jobs (rep 1-3) and one
    merge."""
    out = engine_plan
    blocks = out.split("\nrule ")[1:]
    planned = sorted(line.split("wildcards:", 1)[1].strip() for block in blocks
                     if block.startswith("arraygrowth_engine_repeat:")
                     for line in block.splitlines() if "wildcards:" in line)
    assert planned == ["rep=rep1", "rep=rep2", "rep=rep3"], out[-3000:]
    for rep in (1, 2, 3):
        assert f"results/arraygrowth/engine/repeats/rep{rep}/log_bytes.csv" in out, out[-3000:]
    assert sum(block.startswith("arraygrowth_engine:") for block in blocks) == 1
