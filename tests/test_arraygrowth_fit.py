"""arraygrowth analysis: the power-law fit, the fit table's refusal, and the published-vs-reproduced
verdicts."""

import numpy as np
import polars as pl
import pytest

from costlab.arraygrowth.fit import FitError, fit_power_law
from costlab.arraygrowth.published import read_published_cursor_calls, read_published_log_bytes
from costlab.arraygrowth.tables import fit_table, fits_by_pair, published_vs_reproduced, runs_table
from costlab.finding import COLUMNS

NS = [2500, 5000, 10000, 20000]


def test_exact_quadratic_recovers_exponent_two():
    n = np.array(NS, dtype=float)
    fit = fit_power_law(n, 3 * n ** 2)
    assert fit.exponent == pytest.approx(2.0, abs=1e-9)
    assert fit.coefficient == pytest.approx(3.0, rel=1e-6)
    assert fit.r_squared == pytest.approx(1.0, abs=1e-12)
    assert fit.predict(40000) == pytest.approx(3 * 40000 ** 2, rel=1e-6)


def test_exact_linear_recovers_exponent_one():
    fit = fit_power_law([10, 100, 1000], [512 * 10, 512 * 100, 512 * 1000])
    assert fit.exponent == pytest.approx(1.0, abs=1e-9)
    assert fit.coefficient == pytest.approx(512, rel=1e-6)


def test_noisy_data_gives_close_exponent_and_imperfect_r_squared():
    rng = np.random.default_rng(7)
    n = np.geomspace(1000, 64000, 12)
    y = 29.75 * n ** 1.5 * rng.lognormal(0.0, 0.15, n.size)
    fit = fit_power_law(n, y)
    assert abs(fit.exponent - 1.5) < 0.1
    assert 0.9 < fit.r_squared < 1.0


def test_all_missing_is_refused_as_not_reported():
    with pytest.raises(FitError, match="wiredTiger.log not reported by this server") as err:
        fit_power_law([50, 100, 200], [None, None, None], label="wiredTiger.log")
    assert "N=50, 100, 200" in str(err.value)


def test_partly_missing_is_refused_naming_the_n():
    with pytest.raises(FitError, match=r"1 of 3 values missing at N=100"):
        fit_power_law([50, 100, 200], [10.0, None, 40.0])
    with pytest.raises(FitError, match="missing"):
        fit_power_law([50, 100], [10.0, float("nan")])


def test_non_positive_and_degenerate_inputs_are_refused():
    with pytest.raises(FitError, match=r"values must be > 0, got 0 at N=100"):
        fit_power_law([50, 100], [10.0, 0.0])
    with pytest.raises(FitError, match="at least 2 distinct N"):
        fit_power_law([100, 100], [1.0, 2.0])
    with pytest.raises(FitError, match="N must be positive"):
        fit_power_law([0, 100], [1.0, 2.0])
    with pytest.raises(FitError, match="2 N values but 3"):
        fit_power_law([1, 2], [1.0, 2.0, 3.0])


# the article's tables per write (arraygrowth_cursor_calls.csv at N=10000: 20000, 10006, 50012, 30082)
INSERTS_PER_WRITE = {("standalone", "insert"): 2, ("standalone", "push"): 1, ("replset-1", "insert"): 5,
                     ("replset-1", "push"): 3}


def _raw(log_bytes, kind="mongod", modify=None, ns=NS):
    """Synthetic raw rows: log_bytes(profile, workload, n) -> value or None."""
    rows = []
    for profile in ("standalone", "replset-1"):
        for workload in ("insert", "push"):
            for n in ns:
                value = log_bytes(profile, workload, n)
                mod = modify(profile, workload, n) if modify else None
                rows.append(
                    {
                        "job": f"{profile}_{workload}",
                        "profile": profile,
                        "workload": workload,
                        "n": n,
                        "operations": n,
                        "wall_s": 0.5,
                        "log_bytes": value,
                        "cursor_insert_calls": None
                        if value is None
                        else INSERTS_PER_WRITE[(profile, workload)] * n,
                        "cursor_modify_calls": mod,
                        "cursor_update_calls": None,
                        "cursor_remove_calls": None,
                        "documents_after": 1,
                        "elements_after": n,
                        "max_doc_bytes_after": 100,
                        "topology": "standalone",
                        "server_kind": kind,
                        "backend": "docker",
                        "profile_applied": "{}",
                    }
                )
    return pl.DataFrame(
        rows,
        schema_overrides={
            c: pl.Int64
            for c in (
                "log_bytes",
                "cursor_insert_calls",
                "cursor_modify_calls",
                "cursor_update_calls",
                "cursor_remove_calls",
            )
        },
    )


def _article_like(profile, workload, n):
    if profile == "standalone" and workload == "push":
        return int(3 * n ** 2)        # quadratic, ~30 KB per push at N=10000
    if profile == "standalone":
        return 128 * n
    return 512 * n


def _article_modify(profile, workload, n):
    return int(1.8 * n) if (profile, workload) == ("replset-1", "push") else 0


def test_fit_table_refuses_stand_in_data_with_the_reason():
    raw = _raw(lambda *a: None, kind="stand-in")
    table = fit_table(raw, read_published_log_bytes())
    assert table.height == 4
    assert table["status"].str.starts_with("not fitted: wiredTiger.log not reported by this server").all()
    assert (table["exponent"] == "not fitted").all() and (table["r_squared"] == "not fitted").all()
    assert (table["server_kind"] == "stand-in").all()


def test_fit_table_fits_real_looking_data():
    table = fit_table(_raw(_article_like), read_published_log_bytes())
    by_pair = {(r["profile"], r["workload"]): r for r in table.iter_rows(named=True)}
    assert float(by_pair[("standalone", "push")]["exponent"]) == pytest.approx(2.0, abs=1e-3)
    assert float(by_pair[("replset-1", "push")]["exponent"]) == pytest.approx(1.0, abs=1e-3)
    assert by_pair[("standalone", "push")]["status"] == "fitted"
    # the article's three standalone $push points: 29750*1e4, 62445*2e4, 131520*4e4 bytes -> ~2.07
    assert float(by_pair[("standalone", "push")]["published_exponent"]) == pytest.approx(2.07, abs=0.01)
    assert by_pair[("replset-1", "push")]["published_exponent"] == "not published"


def test_runs_table_writes_not_reported_never_zero():
    table = runs_table(_raw(lambda *a: None, kind="stand-in"))
    assert (table["log_bytes"] == "not reported by this server").all()
    assert (table["cursor_modify_per_op"] == "not reported by this server").all()
    assert not (table["log_bytes"] == "0").any()


def test_published_vs_reproduced_verdicts_follow_the_finding():
    raw = _raw(_article_like, modify=_article_modify)
    table = published_vs_reproduced(
        raw, fits_by_pair(raw), read_published_log_bytes(), read_published_cursor_calls()
    )
    assert table.columns == COLUMNS
    # every verdict says what it held the value to
    tolerance = dict(zip(table["finding"], table["tolerance"]))
    assert tolerance["standalone $push: journal bytes grow quadratically with N"].startswith("k in [")
    assert all(tolerance.values()), tolerance
    verdicts = dict(zip(table["finding"], table["verdict"]))
    reasons = dict(zip(table["finding"], table["reason"]))
    # the article's N=40000 bytes per $push: this run has no such N, and says so (N=20000 is judged)
    finding = next(
        f for f in verdicts if f.startswith("standalone $push journal bytes per update at N=40000 ")
    )
    assert (verdicts.pop(finding), reasons[finding]) == (
        "not comparable", "at this scale: published N=40000; this run N=" + ", ".join(map(str, NS)))
    assert any(f.startswith("standalone $push journal bytes per update at N=20000 ") for f in verdicts)
    assert verdicts.pop("the article's wall times per run (7 published)") == "not comparable"
    assert reasons["the article's wall times per run (7 published)"].startswith("times of")
    assert set(verdicts.values()) == {"reproduced"}, table.select(
        "finding", "reproduced", "verdict"
    ).to_dicts()
    assert sum("WiredTiger insert calls per write" in f for f in verdicts) == 4

    # a standalone that grows only linearly does not reproduce the quadratic finding
    linear = _raw(lambda p, w, n: 512 * n, modify=_article_modify)
    table = published_vs_reproduced(linear, fits_by_pair(linear), read_published_log_bytes(),
                                     read_published_cursor_calls())
    verdicts = dict(zip(table["finding"], table["verdict"]))
    assert verdicts["standalone $push: journal bytes grow quadratically with N"] == "not reproduced"
    assert verdicts["a replica set writes far less journal for the same $push sequence"] == "not reproduced"


def test_published_vs_reproduced_on_stand_in_is_not_comparable():
    raw = _raw(lambda *a: None, kind="stand-in")
    table = published_vs_reproduced(
        raw, fits_by_pair(raw), read_published_log_bytes(), read_published_cursor_calls()
    )
    assert (table["verdict"] == "not comparable").all() and (table["reason"] == "stand-in").all()
    assert table["reproduced"].null_count() == table.height   # nothing reported: no value (never 0)
    # every published number beside its row, but the wall times' row (the article's machine: not judged)
    assert (
        table.filter(~pl.col("finding").str.starts_with("the article's wall times"))["published"].null_count()
        == 0
    )
