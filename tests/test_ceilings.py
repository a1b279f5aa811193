"""A ceiling on every cost a config can ask for (issue #43), declared by each study (Study.ceilings) and run
by costlab/plan.py: each at its limit passes and just past it is refused before any job, naming the key,
the estimate and the limit. Every boundary below is worked out by hand from the ceiling's formula (the
comment beside it)."""
from __future__ import annotations

import pytest

from costlab import plan
from costlab.appversions import ceilings as appversions_ceilings
from costlab.config import ConfigError, load_config

LOADTEST = {"upsert_rates": [250], "report_rates": [1000], "rate_scale": 1, "batch_size": 250,
            "warmup_seconds": 0}

# quantity -> (at the ceiling, just past it, a key the message names, the estimate it names)
THREE_DATASETS = {"fields_after_history": True, "split_history": True}

PLANNED = {
    # 250 x P / 250 + 1000 x P = 1001 P: P = 9990 -> 9,999,990; P = 9991 -> 10,000,991 > 10,000,000
    "loadtest_operations": ({"studies": ["appversions"],
                             "appversions": {"loadtest": LOADTEST | {"phase_seconds": 9990}}},
                            {"studies": ["appversions"],
                             "appversions": {"loadtest": LOADTEST | {"phase_seconds": 9991}}},
                            "phase_seconds", "10,000,991"),
    # x 10 years x 1.0008: 99,920,063 -> 999,999,990.5; 99,920,064 -> 1,000,000,000.5 > 1e9
    "events": ({"appversions": {"events_per_year": 99_920_063}},
               {"appversions": {"events_per_year": 99_920_064}},
               "appversions.events_per_year", "1,000,000,001"),
    # docs x 64 KB x 3 datasets: 254,313 -> 49,999,970,304 B; 254,314 -> 50,000,166,912 > 50e9
    # (the tail and split variants on: three datasets a size)
    "docsize_bytes": ({"studies": ["docsize"], "docsize": {"docs_per_collection": 254_313, "sizes_kb": [64],
                                                           "variants": THREE_DATASETS}},
                      {"studies": ["docsize"], "docsize": {"docs_per_collection": 254_314, "sizes_kb": [64],
                                                           "variants": THREE_DATASETS}},
                      "docsize.docs_per_collection", "50,000,166,912"),
    # flatnested documents x 2 shape sizes x 2 (flat and nested): 5,000,000 -> 2e7; 5,000,001 -> 20,000,004
    "documents": ({"studies": ["flatnested"],
                   "flatnested": {"documents": 5_000_000, "flat_fields": [10, 25]}},
                  {"studies": ["flatnested"],
                   "flatnested": {"documents": 5_000_001, "flat_fields": [10, 25]}},
                  "flatnested.documents", "20,000,004"),
    # docs x 64 KB: 305,175 -> 19,999,948,800 B; 305,176 -> 20,000,014,336 > 20e9
    "engine_bytes": ({"studies": ["docsize"], "engine": {"docsize": {"docs_per_collection": 305_175}},
                      "docsize": {"sizes_kb": [64]}},
                     {"studies": ["docsize"], "engine": {"docsize": {"docs_per_collection": 305_176}},
                      "docsize": {"sizes_kb": [64]}},
                     "engine.docsize.docs_per_collection", "20,000,014,336"),
    # x 10 years x 1.0008: 499,600 -> 4,999,996.8; 499,601 -> 5,000,006.8 > 5e6
    "engine_events": ({"engine": {"appversions": {"events_per_year": 499_600}}},
                      {"engine": {"appversions": {"events_per_year": 499_601}}},
                      "engine.appversions.events_per_year", "5,000,007"),
    # 1.3e9 / 20,000^2 = 3.25 B x N^2: 78,446 -> 19,999,98x,xxx; 78,447 -> 20,000,278,379 > 20e9
    # (engine.arraygrowth.ns [100000, 200000], which filled a 400 MB workdir in 20 s, asks for 130 GB)
    "engine_journal_bytes": ({"studies": ["arraygrowth"], "engine": {"arraygrowth": {"ns": [10, 78_446]}}},
                             {"studies": ["arraygrowth"], "engine": {"arraygrowth": {"ns": [10, 78_447]}}},
                             "engine.arraygrowth.ns", "20,000,278,379"),
}


def test_every_planned_quantity_has_a_case_here():
    assert set(PLANNED) == set(plan.CEILINGS)


@pytest.mark.parametrize("name", sorted(PLANNED))
def test_each_planned_ceiling_holds_at_its_limit_and_refuses_just_past_it(name, monkeypatch):
    # the ceiling is the subject here, not this machine's free disk (its own test is below): a workdir
    # with room for the largest case (the engine lab's about 20 GB at its limits)
    monkeypatch.setattr(plan, "free_bytes", lambda path: 10**15)
    at, past, key, estimate = PLANNED[name]
    load_config(overrides=at)
    with pytest.raises(ConfigError, match="above the ceiling") as err:
        load_config(overrides=past)
    message = str(err.value)
    assert key in message and estimate in message and plan.CEILINGS[name].what in message, message
    assert "\n" not in message


def test_the_issue_journal_case_is_refused():
    with pytest.raises(ConfigError, match=r"130,000,000,000 bytes of the arraygrowth engine lab's journal"):
        load_config(overrides={"engine": {"arraygrowth": {"ns": [100_000, 200_000]}}})


@pytest.mark.parametrize("key", [k[2] for k in plan.CACHE_KEYS])
def test_a_cache_past_this_machines_memory_is_refused(key, monkeypatch):
    monkeypatch.setattr(plan, "machine_memory_mb", lambda: 1000)
    section = "appversions" if key == "cache_mb" else "docsize"
    at = {"engine": {section: {key: 1000}}}
    if section == "docsize":
        at["docsize"] = {"sizes_kb": [1]}
    load_config(overrides=at)
    at["engine"][section][key] = 1001
    with pytest.raises(ConfigError, match=rf"engine\.{section}\.{key}: a cache of 1,001 MB is more than this "
                                          r"machine's memory \(1,000 MB\)"):
        load_config(overrides=at)


def test_the_issue_cache_case_is_refused_past_wiredtigers_limit(monkeypatch):
    # 20,000,000 MB passed the pre-check and died in WiredTiger: "Value too large for key cache_size";
    # WiredTiger's limit is 10 TB = 10 x 1024 x 1024 MB = 10,485,760 MB
    monkeypatch.setattr(plan, "machine_memory_mb", lambda: 10**9)
    load_config(overrides={"engine": {"appversions": {"cache_mb": 10_485_760}}})
    with pytest.raises(ConfigError, match=r"engine\.appversions\.cache_mb: 10,485,761 MB is more than "
                                          r"WiredTiger's largest cache \(10,485,760 MB = 10 TB\)"):
        load_config(overrides={"engine": {"appversions": {"cache_mb": 10_485_761}}})
    with pytest.raises(ConfigError, match=r"engine\.appversions\.cache_mb: 20,000,000 MB"):
        load_config(overrides={"engine": {"appversions": {"cache_mb": 20_000_000}}})


SMOKE_LOADTEST = {"phase_seconds": 2, "warmup_seconds": 1}   # with the default 4 phases: a 9-s load test


def test_server_metrics_samples_per_second_have_a_ceiling():
    # at most 10 a second: 0.1 s passes; 0.0999 s is 10.01 a second. 1e-300 took 116,779 samples in 9 s
    load_config(overrides={"appversions": {"loadtest": SMOKE_LOADTEST | {"metrics_seconds": 0.1}}})
    for value, said in ((0.0999, "10 server metrics samples a second"), (1e-300, "1e+300 server metrics")):
        with pytest.raises(ConfigError, match=r"appversions\.loadtest\.metrics_seconds: .*above the limit of "
                                              r"10 a second: allowed at least 0\.1 s") as err:
            load_config(overrides={"appversions": {"loadtest": SMOKE_LOADTEST | {"metrics_seconds": value}}})
        assert said in str(err.value)


def test_load_test_bins_have_a_ceiling():
    # a 9-s test in bins of 1e-4 s = 90,000 bins (at most 100,000); of 8.9e-5 s = 101,124 bins
    load_config(overrides={"appversions": {"loadtest": SMOKE_LOADTEST | {"bin_seconds": 1e-4}}})
    for value in (8.9e-5, 1e-300):   # 1e-300 ran load and load test, then crashed the tables
        with pytest.raises(ConfigError, match=r"appversions\.loadtest\.bin_seconds: .* bins, above the limit "
                                              r"of 100,000: allowed at least 9e-05 s"):
            load_config(overrides={"appversions": {"loadtest": SMOKE_LOADTEST | {"bin_seconds": value}}})


def test_engine_scratch_against_the_free_space_of_its_workdir(tmp_path, monkeypatch):
    # the default engine scratch: arraygrowth's journal at N = 20,000, 3.25 x 20,000^2 = 1.3e9 B, is the
    # largest (docsize's collection: 50,000 x 64 KB = 3,276,800,000 B is larger): 3,276,800,000 needed
    monkeypatch.setattr(plan, "free_bytes", lambda path: 3_276_800_000)
    load_config(overrides={"engine": {"workdir": str(tmp_path)}})
    monkeypatch.setattr(plan, "free_bytes", lambda path: 3_276_799_999)
    with pytest.raises(ConfigError) as err:
        load_config(overrides={"engine": {"workdir": str(tmp_path)}})
    message = str(err.value)
    assert message.startswith("invalid config key engine.docsize.docs_per_collection: the engine lab's "
                              "scratch needs about 3,276,800,000 bytes in " + str(tmp_path)), message
    assert "which has 3,276,799,999 free" in message


def test_the_layout_import_time_limit_lives_with_appversions_ceilings():
    assert appversions_ceilings.LAYOUT_IMPORT_S == 20.0
