"""Numbers a config plans with: finite (no NaN, no infinity), and a plan within the documented ceilings."""

from __future__ import annotations

import math

import pytest
import yaml

from costlab.config import ROOT, ConfigError, check_finite, load_config


def _numeric_keys(node: dict, path: str = "") -> list[tuple[str, dict]]:
    """Every config key the schema lets hold a number, found from the schema itself (not from the code)."""
    found = []
    types = node.get("type")
    types = set(types) if isinstance(types, list) else {types}
    if types & {"number", "integer"}:
        found.append((path, node))
    for name, child in (node.get("properties") or {}).items():
        found += _numeric_keys(child, f"{path}.{name}" if path else name)
    return found


def _nested(path: str, value) -> dict:
    out: dict = value
    for part in reversed(path.split(".")):
        out = {part: out}
    return out


NUMERIC_KEYS = _numeric_keys(yaml.safe_load((ROOT / "config" / "schema.yaml").read_text()))


def test_the_schema_has_the_numeric_keys_the_issue_names():
    names = {path for path, _ in NUMERIC_KEYS}
    assert {
        "appversions.loadtest.tolerance",
        "appversions.loadtest.rate_scale",
        "appversions.loadtest.bin_seconds",
        "appversions.loadtest.phase_seconds",
        "server.startup_timeout_s",
    } <= names
    assert len(names) >= 40


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
def test_every_numeric_key_refuses_nan_and_infinity_naming_it(bad):
    # One rule for every key the schema lets hold a number (found from the schema, not the code);
    # validate() runs it before the schema (the test below checks that wiring end to end).
    for key, _ in NUMERIC_KEYS:
        with pytest.raises(ConfigError) as err:
            check_finite(_nested(key, bad))
        message = str(err.value)
        assert f"config key {key}:" in message and "finite" in message, message


def test_tolerance_nan_is_refused_by_validation_naming_the_key():
    # appversions.loadtest.tolerance: .nan used to run to exit 0 with 23 steps flipped to "missed"
    with pytest.raises(
        ConfigError, match=r"config key appversions\.loadtest\.tolerance: nan is not a finite"
    ):
        load_config(overrides={"appversions": {"loadtest": {"tolerance": math.nan}}})


def test_a_nan_in_a_config_file_is_refused_naming_the_key(tmp_path):
    # the pre-check (costlab.server.check) and rules/common.smk both validate through load_config/validate
    config = tmp_path / "nan.yaml"
    config.write_text("appversions:\n  loadtest:\n    phase_seconds: .nan\n")
    with pytest.raises(ConfigError, match=r"appversions\.loadtest\.phase_seconds: nan is not a finite"):
        load_config(config)


def test_a_nan_inside_a_list_is_named_with_its_index():
    with pytest.raises(ConfigError, match=r"appversions\.loadtest\.upsert_rates\[1\]: .*finite"):
        load_config(overrides={"appversions": {"loadtest": {"upsert_rates": [250, math.nan]}}})


def test_a_nan_given_as_text_on_the_command_line_is_refused():
    # Snakemake hands nested --config values over as strings; '.nan' becomes a float NaN when typed
    with pytest.raises(ConfigError, match=r"appversions\.loadtest\.rate_scale: .*finite"):
        load_config(overrides={"appversions": "{loadtest: {rate_scale: .nan}}"})


# ---- a ceiling on the work a config plans (costlab/plan.py) ----

RUNAWAY_LOADTEST = {
    "appversions": {
        "loadtest": {
            "upsert_rates": [1000000],
            "report_rates": [1000000],
            "rate_scale": 100,
            "phase_seconds": 86400,
        }
    }
}


def test_a_runaway_load_test_is_refused_naming_the_keys():
    # used to pass the pre-check and planning, run load and correctness, then die
    # "Unable to allocate 62.9 TiB".
    # 1e6 x 100 x 86,400 s = 8.64e12 Get Reports in the phase, + 3.456e10 Bulk Upserts (/ 250), + 3e9 warm-up
    with pytest.raises(ConfigError) as err:
        load_config(overrides=RUNAWAY_LOADTEST)
    message = str(err.value)
    assert "8.68e+12 load-test operations per version" in message
    for key in (
        "upsert_rates",
        "rate_scale",
        "phase_seconds",
        "batch_size",
        "report_rates",
        "plan_ceiling_factor",
    ):
        assert key in message


@pytest.mark.parametrize(
    "override, named",
    [
        ({"docsize": {"docs_per_collection": 10**12}}, "docsize.docs_per_collection"),
        ({"appversions": {"events_per_year": 10**12}}, "appversions.events_per_year"),
        (
            {"appversions": {"events_per_year": 300_000_000}},
            "appversions.events_per_year",
        ),  # wrote 5.6 GB in 200 s
        ({"engine": {"appversions": {"events_per_year": 100_000_000}}}, "engine.appversions.events_per_year"),
        ({"engine": {"docsize": {"docs_per_collection": 1_000_000}}}, "engine.docsize.docs_per_collection"),
    ],
)
def test_runaway_data_is_refused_naming_the_key(override, named):
    with pytest.raises(ConfigError, match="above the ceiling") as err:
        load_config(overrides=override)
    assert named in str(err.value)


def test_the_published_scale_and_the_smoke_scale_are_within_the_ceilings():
    from costlab.plan import CEILINGS, planned_work

    full = load_config(ROOT / "config" / "full.yaml")
    work = planned_work(full)
    # worked out from config/full.yaml: warm-up 25/s x 300 s = 7,500;
    # Bulk Upserts (250+500+750+1000) x 3000 s / 250
    # = 30,000; Get Reports mean(25..250) = 137.5/s x 3000 s x 4 phases = 1,650,000
    assert work["loadtest_operations"] == pytest.approx(1_687_500)
    assert work["events"] == pytest.approx(500_400_000)  # 50 M a year, ten years, the authors' window
    assert work["docsize_bytes"] == 50_000 * (1 + 4 + 16 + 64) * 1024 * 3
    for name, value in work.items():
        assert value * 1.5 <= CEILINGS[name].limit, name  # the published scale has room to spare
    load_config(ROOT / "config" / "smoke.yaml")


def test_plan_ceiling_factor_goes_beyond_on_purpose():
    load_config(overrides={"appversions": {"events_per_year": 300_000_000}, "plan_ceiling_factor": 4})


def test_every_list_in_the_schema_has_a_length_bound():
    schema = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())

    def walk(node: dict, path: str):
        types = node.get("type")
        if "array" in (types if isinstance(types, list) else [types]):
            assert isinstance(node.get("maxItems"), int), f"{path} has no maxItems"
        for name, child in (node.get("properties") or {}).items():
            walk(child, f"{path}.{name}" if path else name)

    walk(schema, "")
    with pytest.raises(ConfigError, match=r"appversions\.loadtest\.report_rates.*maxItems 100"):
        load_config(overrides={"appversions": {"loadtest": {"report_rates": [1] * 101}}})
