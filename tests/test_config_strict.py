"""Config mistakes that used to pass: unknown keys, empty lists, zero rates, YAML errors without a place."""
from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from costlab.config import ROOT, ConfigError, load_config


def _object_paths(node: dict, prefix: str = "") -> list[str]:
    if node.get("type") != "object" and "properties" not in node:
        return []
    paths = [prefix or "(top level)"]
    for name, child in (node.get("properties") or {}).items():
        paths += _object_paths(child, f"{prefix}.{name}" if prefix else name)
    return paths


def test_every_schema_section_rejects_unknown_keys():
    schema = yaml.safe_load((ROOT / "config" / "schema.yaml").read_text())

    def walk(node: dict, path: str):
        if "properties" in node:
            assert node.get("additionalProperties") is False, f"{path or '(top level)'} accepts unknown keys"
            for name, child in node["properties"].items():
                walk(child, f"{path}.{name}" if path else name)

    walk(schema, "")
    assert len(_object_paths(schema)) >= 10


@pytest.mark.parametrize("override, key", [
    ({"appversions": {"event_per_year": 600}}, "appversions"),           # a typo used to run 200,000
    ({"appversions": {"loadtest": {"phase_secs": 5}}}, "appversions.loadtest"),
    ({"server": {"url": "mongodb://h/"}}, "server"),
    ({"docsize": {"sizes": [1]}}, "docsize"),
])
def test_unknown_key_is_rejected_naming_it(override, key):
    with pytest.raises(ConfigError) as err:
        load_config(overrides=override)
    message = str(err.value)
    assert key in message
    bad = next(iter(next(iter(override.values())).keys())) if key.count(".") == 0 else "phase_secs"
    assert bad in message


@pytest.mark.parametrize("override, key", [
    ({"appversions": {"load_versions": []}}, "appversions.load_versions"),    # used to mean all 14
    ({"appversions": {"loadtest": {"versions": []}}}, "appversions.loadtest.versions"),
    ({"studies": []}, "studies"),
    ({"appversions": {"loadtest": {"upsert_rates": [250, 0]}}}, "appversions.loadtest.upsert_rates"),
    ({"appversions": {"loadtest": {"report_rates": [0]}}}, "appversions.loadtest.report_rates"),
])
def test_empty_lists_and_zero_rates_are_rejected(override, key):
    with pytest.raises(ConfigError) as err:
        load_config(overrides=override)
    assert key in str(err.value)


def test_yaml_error_names_the_file_and_line(tmp_path):
    bad = tmp_path / "mine.yaml"
    bad.write_text("appversions:\n  seed: 1\n   bad: [\n")
    with pytest.raises(ConfigError) as err:
        load_config(bad)
    assert str(bad) in str(err.value) and "line 3" in str(err.value)


def test_a_config_file_that_is_not_a_mapping_is_named(tmp_path):
    bad = tmp_path / "list.yaml"
    bad.write_text("- server\n- uri\n")
    with pytest.raises(ConfigError, match="list.yaml"):
        load_config(bad)


def test_precheck_reports_a_yaml_error_with_file_and_line(tmp_path):
    # Snakemake's own message for this names neither; `make all` runs the pre-check first.
    bad = tmp_path / "mine.yaml"
    bad.write_text("docsize:\n  seed: [1\n")
    result = subprocess.run([sys.executable, "-m", "costlab.server.check", "--configfile", str(bad)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert str(bad) in result.stderr and "line 3" in result.stderr


@pytest.mark.parametrize("override, key", [
    ({"server": {"namespace": "has space"}}, "server.namespace"),
    ({"server": {"namespace": "x" * 21}}, "server.namespace"),
    ({"server": {"operation_timeout_s": 0}}, "server.operation_timeout_s"),
])
def test_server_namespace_and_operation_timeout_are_checked(override, key):
    with pytest.raises(ConfigError, match=key.replace(".", "\\.")):
        load_config(overrides=override)


# --- round two: configs that cannot hang or crash (docs/reliability.md) ---

BOMB = "\n".join(['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'] + [
    f"{b}: &{b} [{', '.join(['*' + a] * 9)}]" for a, b in zip("abcdefgh", "bcdefghi")]) + "\n"


def test_a_yaml_alias_bomb_is_refused_at_once_by_the_precheck_and_the_workflow_check(tmp_path, capsys):
    import time

    from costlab.config import check_size, validate
    from costlab.server.check import main

    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(BOMB)                       # ~350 bytes, 9**9 strings when walked or printed
    started = time.monotonic()
    assert main(["all", "--configfile", str(bomb)]) == 2
    message = capsys.readouterr().err
    assert str(bomb) in message and "more than 100,000 values" in message and len(message) < 400
    # what Snakemake loads itself (aliases shared) is refused by validate before jsonschema sees it
    with pytest.raises(ConfigError, match="more than 100,000 values"):
        validate(yaml.safe_load(BOMB))
    # the same bomb given with --config (Snakemake reads it with YAML's BaseLoader, aliases shared)
    from costlab.config import typed_command_line_config
    with pytest.raises(ConfigError, match="--config holds more than 100,000 values"):
        typed_command_line_config({"docsize": yaml.load(BOMB, Loader=yaml.BaseLoader)})
    assert time.monotonic() - started < 10       # was: 100 % CPU past 120 s, RSS over 1 GB
    many = tmp_path / "aliases.yaml"
    many.write_text("a: &a 1\nb: [" + ", ".join(["*a"] * 101) + "]\n")
    with pytest.raises(ConfigError, match=r"aliases.yaml: more than 100 YAML aliases"):
        load_config(many)
    deep = {"docsize": {}}
    node = deep["docsize"]
    for _ in range(40):
        node["x"] = {}
        node = node["x"]
    with pytest.raises(ConfigError, match="nests deeper than 32 levels at key docsize.x"):
        check_size(deep)


def test_a_validation_error_never_prints_the_whole_value():
    with pytest.raises(ConfigError) as err:
        load_config(overrides={"docsize": {"sizes_kb": [[str(i)] * 50 for i in range(200)]}})
    assert "docsize.sizes_kb" in str(err.value) and len(str(err.value)) < 500


def test_an_empty_config_file_is_named(tmp_path):
    empty = tmp_path / "my-lab.yaml"
    empty.write_text("")
    with pytest.raises(ConfigError, match=r"config file .*my-lab.yaml is empty"):
        load_config(empty)
    empty.write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match=r"my-lab.yaml .*no config keys|my-lab.yaml is empty"):
        load_config(empty)


@pytest.mark.parametrize("options, named", [("connectTimeoutMS=abc", "connecttimeoutms"),
                                             ("replicaset=rs0&w=banana&wtimeoutMS=-5", "wtimeoutms"),
                                             ("retryWritez=true", "retrywritez")])
def test_uri_options_are_checked_by_pymongos_parser(options, named):
    uri = f"mongodb://alice@db.example:27017/?{options}"
    with pytest.raises(ConfigError, match=f"server.uri: .*pymongo refuses: .*{named}"):
        load_config(overrides={"server": {"backend": "external", "uri": uri}})
    load_config(overrides={"server": {"backend": "external",
                                      "uri": "mongodb://alice@db.example:27017/?connectTimeoutMS=2000&replicaSet=rs0"}})
