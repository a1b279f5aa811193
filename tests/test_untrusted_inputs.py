"""Files of yours are untrusted input, checked before any job (issue #43): a layout file imported first in a
child process with a time limit; duplicate config keys; names that collide with costlab's own paths;
documents held to mongod's limits; paths Snakemake cannot carry. Each refusal is one line naming the key."""
from __future__ import annotations

import json
import time

import bson
import pytest

from costlab.appversions import variants
from costlab.config import ConfigError, load_config, read_yaml
from costlab.server.check import main as precheck


@pytest.fixture(autouse=True)
def _forget_layouts():
    yield
    variants.forget_layout_files()


def _one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


# ---- layout files ------------------------------------------------------------------------------------

def _layout_config(tmp_path, text: str) -> tuple:
    layout = tmp_path / "mine.py"
    layout.write_text(text)
    config = tmp_path / "lab.yaml"
    config.write_text("appversions:\n  versions: [appV4, mine]\n  variants:\n"
                      f"    mine: {{layout_file: '{layout}', bucket: day, report: match_group}}\n")
    return layout, config


@pytest.mark.parametrize("text, said", [
    ("import sys\nsys.exit(0)\n", "failed: SystemExit: 0"),      # used to exit 0 with nothing built
    ("import os\nos._exit(0)\n", "ended the process (exit code 0)"),
    ("raise SystemExit(3)\n", "failed: SystemExit: 3"),
    ("print('hello')\nraise KeyError('x')\n", "failed: KeyError: 'x'"),
])
def test_a_layout_file_that_exits_at_import_fails_the_precheck_in_one_line(tmp_path, capsys, text, said):
    layout, config = _layout_config(tmp_path, text)
    assert precheck(["--configfile", str(config), "--config", "server={backend: none}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"appversions.variants.mine.layout_file: importing {layout} {said}" in err, err


def test_a_layout_file_that_loops_at_import_is_stopped_at_the_time_limit(tmp_path, monkeypatch):
    from costlab.appversions import ceilings

    monkeypatch.setattr(ceilings, "LAYOUT_IMPORT_S", 2.0)
    layout, config = _layout_config(tmp_path, "while True:\n    pass\n")
    started = time.monotonic()
    with pytest.raises(ConfigError) as err:
        load_config(config)
    assert time.monotonic() - started < 15
    assert f"importing {layout} did not return within 2 s (a loop at import?)" in _one_line(err)


# ---- config files ------------------------------------------------------------------------------------

def test_a_variant_declared_twice_is_refused(tmp_path):
    # YAML keeps the last of two equal keys; the first variant used to vanish silently
    path = tmp_path / "lab.yaml"
    path.write_text("appversions:\n  variants:\n    mine: {base: appV4}\n    mine: {base: appV5R0}\n")
    with pytest.raises(ConfigError) as err:
        read_yaml(path)
    assert _one_line(err) == (f"config file {path}: key 'mine' is given twice (lines 3 and 4): YAML would "
                              "keep the last one silently; give it once")
    flow = tmp_path / "flow.yaml"
    flow.write_text("docsize: {sizes_kb: [1], sizes_kb: [4]}\n")
    with pytest.raises(ConfigError, match="key 'sizes_kb' is given twice"):
        read_yaml(flow)


@pytest.mark.parametrize("override, key", [
    # appV4__rep2 is appV4's repeat 2: the variant's outputs collided with it
    ({"appversions": {"variants": {"appV4__rep2": {"base": "appV4"}}, "versions": ["appV4", "appV4__rep2"],
                      "repeats": 2}}, "appversions.variants.appV4__rep2"),
    ({"docsize": {"documents": {"t__x": {"sample": "config/documents/ticket.json",
                                         "projected": ["openedAt"]}}}}, "docsize.documents.t__x"),
    ({"arraygrowth": {"elements": {"e__rep2": {"element": {"a": 1}}}}}, "arraygrowth.elements.e__rep2"),
])
def test_a_name_that_collides_with_costlabs_paths_is_refused(override, key):
    with pytest.raises(ConfigError) as err:
        load_config(overrides=override)
    assert _one_line(err).startswith(f"invalid config key {key}: ") and "holds '__'" in str(err.value)


# ---- documents -------------------------------------------------------------------------------------------

def _nested(levels: int) -> dict:
    """A document `levels` deep counting itself (a flat document is 1)."""
    document = {"x": 1}
    for _ in range(levels - 1):
        document = {"a": document}
    return document


def _sample_config(sample, projected=("openedAt",)) -> dict:
    declared = {"sample": str(sample), "projected": list(projected), "grow": False}
    return {"docsize": {"documents": {"t": declared}}}


def test_a_sample_at_100_levels_passes_and_past_it_is_refused(tmp_path):
    ok, deep = tmp_path / "ok.json", tmp_path / "deep.json"
    ok.write_text(json.dumps(_nested(100) | {"openedAt": 1}))
    deep.write_text(json.dumps(_nested(101) | {"openedAt": 1}))
    load_config(overrides=_sample_config(ok))
    with pytest.raises(ConfigError) as err:
        load_config(overrides=_sample_config(deep))
    assert _one_line(err) == (f"invalid config key docsize.documents.t.sample: {deep} nests 101 levels of "
                              "documents and arrays: MongoDB allows at most 100")


def test_a_sample_5000_levels_deep_is_one_line_not_a_recursion_error(tmp_path):
    sample = tmp_path / "deep.json"
    sample.write_text('{"openedAt": 1, "a": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}")
    with pytest.raises(ConfigError) as err:
        load_config(overrides=_sample_config(sample))
    assert "nests more than 100 levels of documents and arrays" in _one_line(err)


def test_a_sample_over_16_mib_is_refused_and_one_at_it_passes(tmp_path):
    limit = 16 * 1024 * 1024
    # bson: int32 total + (type 0x02, "s\0", int32 length, the string, its \0) + (0x10, "openedAt\0", int32)
    # + the final \0 = 4 + (1 + 2 + 4 + n + 1) + (1 + 9 + 4) + 1 = n + 27
    n = limit - 27
    at, past = {"openedAt": 1, "s": "x" * n}, {"openedAt": 1, "s": "x" * (n + 1)}
    assert len(bson.encode(at)) == limit   # the working above, checked by bson itself
    (tmp_path / "at.json").write_text(json.dumps(at))
    (tmp_path / "past.json").write_text(json.dumps(past))
    load_config(overrides=_sample_config(tmp_path / "at.json"))
    with pytest.raises(ConfigError) as err:
        load_config(overrides=_sample_config(tmp_path / "past.json"))
    assert "is 16,777,217 BSON bytes: mongod stores at most 16,777,216 (16 MiB)" in _one_line(err)


@pytest.mark.parametrize("field", ["a/b", "a,b", "a(b", "a b", "-a"])
def test_a_projected_field_the_engine_lab_cannot_index_is_refused(tmp_path, field):
    sample = tmp_path / "s.json"
    sample.write_text(json.dumps({"openedAt": 1, field: 2}))
    with pytest.raises(ConfigError) as err:
        load_config(overrides=_sample_config(sample, ("openedAt", field)))
    assert _one_line(err).startswith(f"invalid config key docsize.documents.t.projected: {field!r} cannot "
                                     "name an index of the engine lab (allowed: letters, digits, _ and -")


def test_projected_fields_of_letters_digits_underscore_and_dash_pass(tmp_path):
    sample = tmp_path / "s.json"
    sample.write_text(json.dumps({"openedAt": 1, "total_2": 2, "due-date": 3}))
    load_config(overrides=_sample_config(sample, ("openedAt", "total_2", "due-date")))


@pytest.mark.parametrize("folder", ["<b>", "{x}"])
def test_a_path_snakemake_cannot_carry_is_refused(tmp_path, folder):
    # a sample under <b> failed in Snakemake with "Undefined pathvar"
    sample = tmp_path / folder / "s.json"
    sample.parent.mkdir()
    sample.write_text(json.dumps({"openedAt": 1}))
    with pytest.raises(ConfigError) as err:
        load_config(overrides=_sample_config(sample))
    assert "which Snakemake reads as a pattern in a rule's input" in _one_line(err)
    element = {"arraygrowth": {"elements": {"e": {"element": str(sample)}}}}
    with pytest.raises(ConfigError, match=r"arraygrowth\.elements\.e\.element: .*Snakemake reads as a"):
        load_config(overrides=element)


def test_an_element_is_held_to_the_same_limits(tmp_path):
    # pushed into a document, an element of 99 levels is at 100; of 100 at 101
    ok, deep = tmp_path / "ok.json", tmp_path / "deep.json"
    ok.write_text(json.dumps(_nested(99)))
    deep.write_text(json.dumps(_nested(100)))
    load_config(overrides={"arraygrowth": {"elements": {"e": {"element": str(ok)}}}})
    with pytest.raises(ConfigError) as err:
        load_config(overrides={"arraygrowth": {"elements": {"e": {"element": str(deep)}}}})
    assert "nests 101 levels of documents and arrays: MongoDB allows at most 100" in _one_line(err)
