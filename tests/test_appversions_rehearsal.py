"""A layout rehearsed before any job (costlab/appversions/rehearsal.py, run by the config check; the rehearsal
itself in layout_rehearsal.py): its
statements through the engine lab's update compiler, its size formula against bson.encode of the
documents they build; and a layout of the user's with $set, $setOnInsert and a pipeline with $literal
through the engine lab."""
from __future__ import annotations

import re

import bson
import pytest

from costlab.appversions import registry, variants
from costlab.config import ConfigError, load_config

PUBLISHED = list(registry.PUBLISHED_NAMES)

# Two layouts of the user's own (appV4's day document, `_id` = key + YYYYMMDD):
# - stamped_day: `$inc` of the status, `$set` of the last status, `$setOnInsert` of the first;
#   its document is appV4's plus two elements of a one-letter string each: 1 + len("first")/("last") +
#   1 + (4 + 1 + 1) = 13 and 12 bytes;
# - literal_day: an update pipeline adding the status and `kind: {$literal: "$day"}` (the string "$day",
#   not a field path): appV4's document plus 1 + 4 + 1 + (4 + 4 + 1) = 15 bytes.
LAYOUTS = """
from pymongo import UpdateOne

from costlab.appversions.bsonsize import element, string_value
from costlab.appversions.layouts import IdDay


class Stamped(IdDay):
    name = "stamped_day"

    def upsert_ops(self, version, cols):
        return [UpdateOne({"_id": i}, {"$inc": {f: 1}, "$set": {"last": f}, "$setOnInsert": {"first": f}},
                          upsert=True) for i, f in zip(cols["id"], cols["field"])]

    def day_document_bytes(self, version):
        return (super().day_document_bytes(version) + element("first", string_value(1))
                + element("last", string_value(1)) EXTRA)

    def bucket_document(self, version, _id, fields, dates, items):
        return {**super().bucket_document(version, _id, fields, dates, items), "first": fields[0],
                "last": fields[-1]}


class Literal(IdDay):
    name = "literal_day"

    def upsert_ops(self, version, cols):
        return [UpdateOne({"_id": i}, [{"$set": {f: {"$add": [{"$ifNull": ["$" + f, 0]}, 1]},
                                                 "kind": {"LITERAL": "$day"}}}], upsert=True)
                for i, f in zip(cols["id"], cols["field"])]

    def day_document_bytes(self, version):
        return super().day_document_bytes(version) + element("kind", string_value(4))

    def bucket_document(self, version, _id, fields, dates, items):
        return {**super().bucket_document(version, _id, fields, dates, items), "kind": "$day"}
"""


def _write(tmp_path, extra: str = "", literal: str = "$literal"):
    path = tmp_path / "variants" / "mine.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(LAYOUTS.replace("EXTRA", extra).replace("LITERAL", literal))
    return path


def _section(path) -> dict:
    common = {"layout_file": str(path), "bucket": "day", "report": "match_group", "compare_to": "appV4"}
    return {"versions": ["appV4", "stampedV1", "literalV1"],
            "variants": {"stampedV1": {**common, "layout": "stamped_day"},
                         "literalV1": {**common, "layout": "literal_day"}}}


def _check(section: dict) -> None:
    """What reading the rules does before any job: the config check, the variants registered, each
    rehearsed (rules/appversions.smk)."""
    from costlab.appversions.rehearsal import rehearse_config

    config = load_config(overrides={"appversions": section})
    variants.register_variants(config)
    rehearse_config(config)


@pytest.fixture
def cleanup():
    yield
    variants.register_variants({"appversions": {"versions": PUBLISHED, "variants": {}}})
    variants.forget_layout_files()



def _refusal(path) -> str:
    """The one-line ConfigError that checking a section of the layouts in `path` raises."""
    with pytest.raises(ConfigError) as err:
        _check(_section(path))
    message = str(err.value)
    assert "\n" not in message
    return message

def test_the_published_layouts_pass_their_rehearsal():
    from costlab.appversions.layout_rehearsal import rehearsal_events, rehearse
    from costlab.appversions.versions import get_version

    events = rehearsal_events()
    # 24 events, two keys, every status, days across a month and a quarter boundary
    assert events.height == 24 and events["key"].n_unique() == 2 and events["status"].n_unique() == 4
    for name in PUBLISHED:
        rehearse(get_version(name))


def test_a_layout_with_set_setoninsert_and_a_literal_pipeline_runs_through_the_engine_lab(
        tmp_path, cleanup):
    from costlab.appversions.engine import measure_version
    from costlab.appversions.events import generate_events, iter_event_chunks, write_events
    from costlab.appversions.model import collection_stats

    section = _section(_write(tmp_path))
    _check(section)   # the config check and the rehearsal of both layouts: no error
    path = tmp_path / "events.parquet"
    write_events(iter_event_chunks(60, 3), path)
    events = generate_events(60, 3)
    stats = {r["version"]: r for r in collection_stats(events, ["appV4", "stampedV1", "literalV1"])
             .iter_rows(named=True)}
    docs = stats["appV4"]["documents"]
    assert docs > 100
    rows = {name: measure_version(name, path, tmp_path / name, cache_mb=8, workers=1)
            for name in ("appV4", "stampedV1", "literalV1")}
    for name, per_document in (("stampedV1", 13 + 12), ("literalV1", 15)):
        # the engine lab applied every statement: appV4's documents, each `per_document` bytes more
        assert rows[name]["events"] == rows["appV4"]["events"] == events.height
        assert rows[name]["documents"] == docs
        assert rows[name]["data_bytes"] == rows["appV4"]["data_bytes"] + per_document * docs
        assert rows[name]["data_bytes"] == stats[name]["data_bytes"]   # the model says the same


def test_the_statements_documents_are_mongods(tmp_path, cleanup, test_db, real_mongod):
    """The engine lab's documents for the two layouts are those mongod builds from the same statements."""
    if not real_mongod:
        pytest.skip("the reference is mongod 6.0.5")
    from bson.raw_bson import RawBSONDocument

    from costlab.appversions.layout_rehearsal import _applied, rehearsal_events
    from costlab.appversions.versions import get_version

    section = _section(_write(tmp_path))
    variants.register_variants({"appversions": section})
    events = rehearsal_events()
    for name in ("stampedV1", "literalV1"):
        version = get_version(name)
        statements = version.bulk_upsert_ops(events)
        test_db[name].bulk_write(statements, ordered=True)
        raw = test_db[name].with_options(codec_options=test_db.codec_options.with_options(
            document_class=RawBSONDocument))
        server = sorted(bytes(doc.raw) for doc in raw.find())
        engine = sorted(bson.encode(doc) for doc in _applied(statements))
        assert engine == server and len(server) == 12
        first = bson.decode(server[0])
        assert set(first) >= ({"_id", "first", "last"} if name == "stampedV1" else {"_id", "kind"})
        if name == "literalV1":
            assert first["kind"] == "$day"


def test_a_wrong_size_formula_is_refused_before_any_job(tmp_path, cleanup):
    # the formula counts a third one-letter string the statements never write
    path = _write(tmp_path, extra='+ element("n", string_value(1))')
    message = _refusal(path)
    assert message.startswith("invalid config key appversions.variants.stampedV1.layout_file: "
                              "layout 'stamped_day' (layout_file): its size formula gives "), message
    # the smallest document (one status): 4 + _id (1 + 3 + 1 + binary 4+1+36) + a (1+1+1+4) + first
    # (1+5+1 + 4+1+1) + last (1+4+1 + 4+1+1) + 1 = 83 B; the formula adds n (1+1+1 + 4+1+1 = 9): 92 B;
    # every document 9 B more, so the means differ by 9 B too
    assert "(bson.encode; e.g. 92 B against 83 B)" in message, message
    mean_model, mean_built = (float(x) for x in re.findall(r"(\d+\.\d\d) B", message))
    assert mean_model - mean_built == pytest.approx(9.0)


def test_an_operator_the_engine_lab_lacks_is_refused_before_any_job_naming_it(tmp_path, cleanup):
    path = _write(tmp_path, literal="$toUpper")
    message = _refusal(path)
    assert message.startswith("invalid config key appversions.variants.literalV1.layout_file: layout "
                              "'literal_day' (layout_file): its statement cannot run in the engine lab: "
                              "expression operator $toUpper is not implemented in the engine lab"), message


@pytest.mark.workflow
def test_snakemake_stops_before_any_job_on_a_wrong_formula(tmp_path):
    import subprocess
    import sys

    import yaml

    from costlab.config import ROOT

    path = _write(tmp_path, extra='+ element("n", string_value(1))')
    configfile = tmp_path / "mine.yaml"
    configfile.write_text(yaml.safe_dump({"appversions": _section(path)}))
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "all", "--configfile", str(configfile)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert ("costlab: invalid config key appversions.variants.stampedV1.layout_file: layout 'stamped_day' "
            "(layout_file): its size formula gives") in out, out[-3000:]
    assert "Job stats" not in out and "appversions_model" not in out   # no job was planned
