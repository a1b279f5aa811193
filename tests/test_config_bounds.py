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
    assert {"appversions.loadtest.tolerance", "appversions.loadtest.rate_scale", "appversions.loadtest.bin_seconds",
            "appversions.loadtest.phase_seconds", "server.startup_timeout_s"} <= names
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
    with pytest.raises(ConfigError, match=r"config key appversions\.loadtest\.tolerance: nan is not a finite"):
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
