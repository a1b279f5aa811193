"""The load test's regime: working set (collStats data + indexes) against the WiredTiger cache (issue #12)."""
from __future__ import annotations

import json

import polars as pl
import pytest

from costlab.appversions.regime import EXCEEDS, FITS, UNKNOWN, measure_regime, working_set_regime
from costlab.appversions.tables import loadtest_findings, loadtest_regimes
from costlab.config import ROOT

GB = 10 ** 9


def test_regime_from_sizes():
    beyond = working_set_regime(10 * GB, 2 * GB, 1.5 * 2 ** 30)
    assert beyond["regime"] == EXCEEDS and beyond["working_set_bytes"] == 12 * GB
    assert beyond["working_set_to_cache"] == pytest.approx(12 * GB / (1.5 * 2 ** 30))
    assert working_set_regime(100e6, 20e6, 1.5 * 2 ** 30)["regime"] == FITS
    assert working_set_regime(100e6, 20e6, None)["regime"] == UNKNOWN
    assert working_set_regime(None, 20e6, 1e9)["regime"] == UNKNOWN


def test_measure_regime_on_the_test_server(test_db, real_mongod):
    test_db.c.insert_many([{"i": i, "pad": "x" * 100} for i in range(200)])
    regime = measure_regime(test_db.client, test_db.name, "c")
    assert regime["working_set_bytes"] > 200 * 100
    if not real_mongod:  # the stand-in reports no wiredTiger cache
        assert regime["regime"] == UNKNOWN


def steps_frame(version, regime, met=True):
    return pl.DataFrame(
        {
            "version": [version] * 4,
            "kind": ["upsert"] * 4,
            "phase": [1, 2, 3, 4],
            "step": [1] * 4,
            "met": [met] * 4,
            "call_ms_max": [100.0, 200.0, 300.0, 400.0],
            "achieved_rate": [1.0] * 4,
            "target_rate": [1.0] * 4,
            "server_kind": ["mongod"] * 4,
            "regime": [regime] * 4,
        }
    )


def test_findings_that_rest_on_the_regime_are_not_comparable_when_the_working_set_fits():
    facts = pl.read_csv(ROOT / "resources" / "published" / "appversions_loadtest_facts.csv")
    def judged(rows):   # the published facts no rule judges here have rows of their own that say why
        return [r for r in rows if not r.tolerance.startswith("none: not judged")]

    every = loadtest_findings(pl.concat([steps_frame("appV6R3", FITS), steps_frame("appV6R4", FITS)]), facts)
    fits = judged(every)
    assert fits and {(r.verdict, r.reason) for r in fits} == {("not comparable", FITS)}
    assert all(r.verdict == "not comparable" and r.reason for r in every if r not in fits)
    beyond = loadtest_findings(
        pl.concat([steps_frame("appV6R3", EXCEEDS), steps_frame("appV6R4", EXCEEDS)]), facts
    )
    assert FITS not in {r.reason for r in beyond}
    assert "reproduced" in {r.verdict for r in beyond}
    # one version of a compared pair in cache is enough to make the comparison not comparable
    mixed = loadtest_findings(
        pl.concat([steps_frame("appV6R3", FITS), steps_frame("appV6R4", EXCEEDS)]), facts
    )
    pairs = [r for r in mixed if " vs " in r.finding]
    assert pairs and {(r.verdict, r.reason) for r in pairs} == {("not comparable", FITS)}


def test_regime_read_from_the_load_test_provenance(tmp_path):
    path = tmp_path / "loadtest_appV6R3.json"
    path.write_text(json.dumps({"server_kind": "mongod", "extra": {"regime": {"regime": EXCEEDS}}}))
    old = tmp_path / "loadtest_appV6R4.json"
    old.write_text(json.dumps({"server_kind": "mongod", "extra": {}}))
    assert loadtest_regimes([path, old]) == {"appV6R3": EXCEEDS, "appV6R4": UNKNOWN}


def published_working_set_bytes_per_event(version: str) -> float:
    """Published data + index bytes per event; appV6R4 holds appV6R3's documents (its data size is not
    published)."""
    stats = pl.read_csv(ROOT / "resources" / "published" / "appversions_event_stats.csv")
    per = {r["version"]: r for r in stats.iter_rows(named=True)}
    data = per[version]["data_bytes_per_event"] or per["appV6R3"]["data_bytes_per_event"]
    return data + per[version]["index_bytes_per_event"]


def test_beyond_cache_config_puts_every_tested_working_set_beyond_the_profile_cache(tmp_path):
    import subprocess
    import sys

    from costlab.config import load_config
    from costlab.server.profiles import GIB, get_profile

    config = load_config(ROOT / "config" / "beyond-cache.yaml")
    app = config["appversions"]
    profile = get_profile(app["loadtest"]["profile"])
    assert (profile.cpus, profile.memory_limit_bytes, profile.cache_size_gb) == (2.0, 4 * GIB, 1.5)
    events = app["events_per_year"] * 10
    for version in app["loadtest"]["versions"]:
        regime = working_set_regime(events * published_working_set_bytes_per_event(version), 0,
                                    profile.cache_size_gb * GIB)
        assert regime["regime"] == EXCEEDS and regime["working_set_to_cache"] > 1.3, (version, regime)
    # ... while the default scale (2 million events) fits: its load-test findings are "not comparable"
    default = load_config()["appversions"]["events_per_year"] * 10
    assert working_set_regime(default * published_working_set_bytes_per_event("appV6R3"), 0,
                              1.5 * GIB)["regime"] == FITS
    for name in ("Snakefile", "rules", "scripts", "config", "resources", "profiles", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    plan = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "-n",
            "all",
            "--configfile",
            "config/beyond-cache.yaml",
            # the config is meant for the docker backend; named explicitly, the plan does not
            # depend on whether this machine has an engine (with no server it plans no load test)
            "--config",
            "server={backend: docker}",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert plan.returncode == 0, plan.stderr[-2000:]
    assert "appversions_loadtest" in plan.stdout
