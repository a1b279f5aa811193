"""A user's own array elements (arraygrowth.elements, docs/variants.md): the engine lab's journal bytes
against the article's own push, their rows of kind "user variant", the server workload, and each bad
declaration refused in one line naming the key. Expected values are worked out here (record sizes,
bson.encode)."""
from __future__ import annotations

import json

import bson
import polars as pl
import pytest
from bson import Int64

from costlab.engine.connection import EngineSettings

# journal uncompressed: log bytes are the records' sizes padded to WiredTiger's 128-byte log alignment
RAW = EngineSettings(cache_mb=64, journal_compressor="none", block_compressor="lz4")
COMPRESSED = EngineSettings(cache_mb=64, journal_compressor="lz4", block_compressor="lz4")
ARTICLE = {"element": {"$numberLong": "1784106933"}}    # the article's int64 timestamp, as Extended JSON


def _declared(elements: dict, **section) -> list:
    from costlab.arraygrowth.elements import declarations

    return declarations({"elements": elements, **section})


def test_the_articles_own_element_writes_the_articles_journal_bytes(tmp_path):
    """Declared as {"$numberLong": "1784106933"} with update push, the element is the article's timestamp
    (advanced by one per write, as the article's are): the journal bytes per write are the article's push's,
    on both profiles, with the journal uncompressed and compressed."""
    from costlab.arraygrowth.engine import run_element, run_workload

    (element,) = _declared({"mine": ARTICLE})
    assert [element.at(i) for i in (0, 1, 99)] == [Int64(1784106933), Int64(1784106934), Int64(1784107032)]
    n = 100
    for settings in (RAW, COMPRESSED):
        for profile in ("standalone", "replset-1"):
            theirs = run_workload(profile, "push", n, settings, tmp_path)
            mine = run_element(profile, element, n, settings, tmp_path)
            assert (mine["log_bytes"], mine["log_payload_bytes"]) == (theirs["log_bytes"],
                                                                       theirs["log_payload_bytes"])
            assert mine["modify_calls"] == theirs["modify_calls"]
    # The replica set, uncompressed, worked out from the record sizes: the update's oplog entry with a
    # retryable write's session fields is 363 bytes ($v:2 diff {stimestamps: {a: true, u<i>: int64}}, i < 10)
    # or 364 (a two-digit index); + ~29 bytes of record framing = 392-393, padded to 512 (4 x 128); the oplog
    # truncate point's document (71 B) + framing = 100, padded to 128: 640 bytes per write, every write.
    mine = run_element("replset-1", element, n, RAW, tmp_path)
    assert mine["log_bytes"] == 640 * n
    # the job document is 133 bytes with its array empty; the i-th element adds 1 (type) + len(str(i))
    # + 1 (NUL) + 8 (int64): after 100 pushes 133 + 10 x 11 + 90 x 12 = 1,323 bytes
    assert mine["max_doc_bytes"] == 133 + sum(1 + len(str(i)) + 1 + 8 for i in range(n)) == 1323


def test_a_bigger_element_writes_more_by_its_bson_size(tmp_path):
    """The replica set logs the element once per write (in the oplog entry's diff): the payload grows by the
    element's extra BSON bytes a write, exactly. The standalone logs the whole document, whose k-th version
    holds k elements: by the extra bytes times N(N+1)/2, but for the 1-3 bytes WiredTiger packs each record's
    length into (a longer record can take a byte more)."""
    from costlab.arraygrowth.engine import run_element

    small, big = _declared({"small": {"element": {"v": {"$numberLong": "1"}}},
                            "big": {"element": {"v": {"$numberLong": "1"}, "note": "x" * 200}}})
    # {v: int64} is 4 + (1 + 2 + 8) + 1 = 16 bytes; with note: + 1 + 5 + (4 + 200 + 1) = 227: 211 more
    extra = len(bson.encode({"e": big.value})) - len(bson.encode({"e": small.value}))
    assert extra == 211
    n = 100
    replica = [run_element("replset-1", d, n, RAW, tmp_path) for d in (small, big)]
    assert replica[1]["log_payload_bytes"] - replica[0]["log_payload_bytes"] == extra * n
    assert replica[1]["log_bytes"] > replica[0]["log_bytes"]
    standalone = [run_element("standalone", d, n, RAW, tmp_path) for d in (small, big)]
    grown = standalone[1]["log_payload_bytes"] - standalone[0]["log_payload_bytes"]
    assert grown == pytest.approx(extra * n * (n + 1) / 2, abs=2 * n)
    assert standalone[1]["max_doc_bytes"] - standalone[0]["max_doc_bytes"] == extra * n


def test_update_styles_store_what_they_say(tmp_path):
    """push_slice keeps `slice` elements, set_array stores push's document, insert writes one document
    per element; each run's counters cover its n writes only."""
    from costlab.arraygrowth.engine import run_element

    value = {"element": {"ts": {"$numberLong": "1784106933"}, "exit": 0}}
    push, capped, whole, inserted = _declared({
        "p": value, "s": {**value, "update": "push_slice", "slice": 10},
        "a": {**value, "update": "set_array"}, "i": {**value, "update": "insert"}})
    rows = {d.name: run_element("standalone", d, 40, RAW, tmp_path) for d in (push, capped, whole, inserted)}
    per_element = len(bson.encode(push.value))   # 4 + (1 + 3 + 8) + (1 + 5 + 4) + 1 = 27
    assert per_element == 27
    assert rows["a"]["max_doc_bytes"] == rows["p"]["max_doc_bytes"]
    assert rows["s"]["max_doc_bytes"] < rows["p"]["max_doc_bytes"]
    # 40 elements of 1 + len(key) + 1 + 27: keys 0-9 one digit, 10-39 two
    assert rows["p"]["max_doc_bytes"] - 133 == 10 * 30 + 30 * 31
    # insert: {_id: ObjectId, ts: int64, exit: int32} = 4 + 17 + 12 + 10 + 1 = 44 bytes
    assert rows["i"]["max_doc_bytes"] == 44
    # the counters cover the 40 writes: a standalone rewrites the record (one WiredTiger insert call each); an
    # insert writes the record and its _id index entry
    assert [rows[k]["insert_calls"] for k in "psai"] == [40, 40, 40, 80]
    assert rows["a"]["log_bytes"] == rows["p"]["log_bytes"]   # a standalone logs the document, not the update


def test_rows_are_user_variants_beside_the_articles_push():
    """The ratio of journal bytes per write at the largest common N and of the growth exponents; never judged,
    never counted; a missing compared workload is not run, the stand-in's rows not comparable."""
    from costlab.arraygrowth.element_findings import element_rows
    from costlab.verdicts import COUNTED_KINDS, Kind

    # push: 100 B a write, linear (k = 1); mine: 300 B a write at N=400 with bytes ~ N^2 (k = 2)
    frame = pl.DataFrame({
        "profile": ["standalone"] * 4 + ["replset-1"] * 2,
        "workload": ["push", "push", "mine", "mine", "mine", "mine"],
        "n": [200, 400, 200, 400, 200, 400],
        "log_bytes": [20_000.0, 40_000.0, 30_000.0, 120_000.0, 1.0, 2.0],
    })
    rows = element_rows(frame, {"mine": "push"}, "engine lab", "engine")
    by_metric = {r.metric: r for r in rows}
    per_write = by_metric["log bytes per write mine/push (standalone, N=400)"]
    assert per_write.reproduced == pytest.approx(300 / 100)
    assert by_metric["exponent k mine/push (standalone)"].reproduced == pytest.approx(2.0)
    assert {r.kind for r in rows} == {Kind.USER_VARIANT} and Kind.USER_VARIANT.value not in COUNTED_KINDS
    assert per_write.verdict == "not comparable" and per_write.reason.startswith("your variant")
    assert "mine: 300 B/write; push: 100 B/write (N=400)" == per_write.note
    assert [r.verdict for r in rows if "replset-1" in r.metric] == ["not run", "not run"]   # no push there
    stand_in = element_rows(frame.with_columns(pl.lit("stand-in").alias("server_kind"),
                                               pl.lit(None, pl.Float64).alias("log_bytes")),
                            {"mine": "push"}, "serverStatus")
    assert {(r.verdict, r.reason) for r in stand_in} == {("not comparable", "stand-in")}


def test_an_element_on_the_server_is_a_workload_of_its_own(test_db):
    """Listed in arraygrowth.workloads, an element is sent by the fallback machinery's updates (push_slice:
    $push with $each and $slice) to the article's job document, or inserted."""
    from costlab.arraygrowth.workloads import ARRAY_FIELD, JOB_FIELDS, get_workload

    elements = {"run": {"element": {"ts": {"$numberLong": "1784106933"}, "host": "web-1"}},
                "capped": {"element": {"ts": {"$numberLong": "1"}}, "update": "push_slice", "slice": 5},
                "rows": {"element": {"ts": {"$numberLong": "1"}}, "update": "insert"}}
    prepare, run = get_workload("run", elements)
    result = run(test_db.run, 12, prepare(test_db.run))
    (doc,) = test_db.run.find()
    assert (result.documents, result.elements) == (1, 12) and doc["job_id"] == JOB_FIELDS["job_id"]
    assert doc[ARRAY_FIELD][11] == {"ts": 1784106933 + 11, "host": "web-1"}
    prepare, run = get_workload("capped", elements)
    run(test_db.capped, 12, prepare(test_db.capped))
    assert [e["ts"] for e in test_db.capped.find_one()[ARRAY_FIELD]] == [8, 9, 10, 11, 12]
    prepare, run = get_workload("rows", elements)
    assert run(test_db.rows, 7, prepare(test_db.rows)).documents == 7
    assert sorted(d["ts"] for d in test_db.rows.find()) == list(range(1, 8))


def test_the_server_tables_add_the_elements_rows(tmp_path):
    """tables/published_vs_reproduced.csv: the article's findings, then each element measured on the server
    beside what its job's provenance says it is compared to (mongod's rows; the stand-in's not comparable)."""
    from costlab.arraygrowth.run import GROWTH_SCHEMA
    from costlab.arraygrowth.tables import element_table

    def runs(workload: str, per_write: float, kind: str) -> pl.DataFrame:
        job = f"standalone_{workload}"
        (tmp_path / f"{job}.json").write_text(json.dumps({"job": job, "server_kind": kind, "extra": {
            "workload": workload, **({"element": {"compare_to": "push"}} if workload == "mine" else {})}}))
        rows = [{"job": job, "profile": "standalone", "workload": workload, "n": n, "operations": n,
                 "log_bytes": None if kind == "stand-in" else int(per_write * n * n / 100),
                 "server_kind": kind} for n in (100, 200)]
        frame = pl.DataFrame(rows, schema={c: GROWTH_SCHEMA[c] for c in rows[0]})
        missing = [pl.lit(None, t).alias(c) for c, t in GROWTH_SCHEMA.items() if c not in rows[0]]
        return frame.with_columns(missing).select(list(GROWTH_SCHEMA))

    for kind, expected in (("mongod", {("not comparable", 3.0), ("not comparable", 1.0)}),
                           ("stand-in", {("not comparable", None)})):
        push, mine = runs("push", 100, kind), runs("mine", 300, kind)
        mine.write_parquet(tmp_path / "mine.parquet")
        table = element_table(push, [tmp_path / "mine.parquet"], [tmp_path / "standalone_mine.json"])
        assert set(table["kind"]) == {"user variant"}
        # 300 B against 100 B a write at N=200 (both grow as N^2: the exponents' ratio is 1)
        assert {(v, None if r is None else round(r, 6)) for v, r in
                table.select("verdict", "reproduced").iter_rows()} == expected, table


# ---- bad declarations: one line naming the key, before any job ----------------------------------


def _problem(tmp_path, elements, **section) -> str | None:
    from costlab.config import ConfigError, load_config

    try:   # validated as the workflow's pre-check validates it: schema, then costlab.config.check_semantics
        load_config(overrides={"arraygrowth": json.dumps({"elements": elements, **section})})
    except ConfigError as err:
        return str(err)
    return None


def _bad_file(tmp_path, text: str) -> str:
    path = tmp_path / "element.json"
    path.write_text(text)
    return str(path)


BAD = [
    ({"mine": {**ARTICLE, "colour": "red"}},
     "invalid config key arraygrowth.elements.mine.colour: unknown field (allowed: element, update, slice, "
     "compare_to)"),
    ({"mine": {"element": "{path}"}}, "invalid config key arraygrowth.elements.mine.element: {path} is not "
                                      "valid JSON: Expecting property name enclosed in double quotes"),
    ({"mine": {"element": "nowhere/element.json"}},
     "invalid config key arraygrowth.elements.mine.element: nowhere/element.json is not a file (a relative "
     "path is read from the working directory"),
    ({"mine": {"element": "{list}"}},
     "invalid config key arraygrowth.elements.mine.element: {list} is not a JSON object (got a list)"),
    ({"mine": {**ARTICLE, "update": "append"}},
     "invalid config key arraygrowth.elements.mine.update: 'append' is not allowed (allowed: push, "
     "push_slice, set_array, insert)"),
    ({"mine": {**ARTICLE, "slice": 10}},
     "invalid config key arraygrowth.elements.mine.slice: only with update: push_slice (this element's "
     "update is push)"),
    ({"mine": {**ARTICLE, "update": "push_slice"}},
     "invalid config key arraygrowth.elements.mine.slice: required with update: push_slice"),
    ({"push": ARTICLE},
     "invalid config key arraygrowth.elements.push: 'push' is a published workload's name: give your element "
     "another name"),
    ({"set_array": ARTICLE},
     "invalid config key arraygrowth.elements.set_array: 'set_array' is a fallback variant's name"),
    ({"mine": {**ARTICLE, "compare_to": "pull"}},
     "invalid config key arraygrowth.elements.mine.compare_to: 'pull' is not a workload (allowed: insert, "
     "push)"),
    ({"mine": {"element": {"_id": 1}, "update": "insert"}},
     "invalid config key arraygrowth.elements.mine.element: update: insert writes one document per element"),
]


@pytest.mark.parametrize("elements,message", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_a_bad_declaration_is_refused_in_one_line(tmp_path, elements, message):
    files = {"{path}": _bad_file(tmp_path, "{not json"), "{list}": str(tmp_path / "list.json")}
    (tmp_path / "list.json").write_text("[1, 2]")
    text = json.dumps(elements)
    for key, value in files.items():
        text, message = text.replace(key, value), message.replace(key, value)
    said = _problem(tmp_path, json.loads(text))
    assert said is not None and said.startswith(message), said
    assert "\n" not in said


def test_a_workload_that_names_no_element_is_refused(tmp_path):
    said = _problem(tmp_path, {"mine": ARTICLE}, workloads=["push", "mien"])
    assert said == ("invalid config key arraygrowth.workloads: 'mien' is not a workload (allowed: insert, "
                    "push, mine; an element of your own is declared in arraygrowth.elements)")
    assert _problem(tmp_path, {"mine": ARTICLE}, workloads=["push", "mine"]) is None
    path = _bad_file(tmp_path, json.dumps({"ts": {"$numberLong": "5"}}))
    assert _problem(tmp_path, {"mine": {"element": path, "update": "push_slice", "slice": 3}}) is None


# ---- the session's smoke tree (config/smoke.yaml: job_run, engine lab only) -------------------------


def test_smoke_tree_shows_the_element_as_your_variant(smoke_all):
    out = smoke_all.results("arraygrowth")
    elements = pl.read_csv(out / "engine" / "elements.csv")
    assert set(elements["element"]) == {"job_run"} and sorted(set(elements["n"])) == [200, 400, 800]
    verdicts = pl.read_csv(out / "engine" / "published_vs_engine.csv")
    mine = verdicts.filter(pl.col("finding").str.starts_with("job_run beside push"))
    assert mine.height == 4 and set(mine["kind"]) == {"user variant"}
    assert set(mine["verdict"]) == {"not comparable"} and mine["ratio"].null_count() == 4
    assert mine["reproduced"].null_count() == 0
    findings = pl.read_csv(smoke_all.results() / "findings.csv")
    rows = findings.filter(pl.col("finding").str.starts_with("job_run beside push"))
    assert rows.height == 4 and set(rows["kind"]) == {"user variant"}
    assert set(rows["evidence"].str.slice(0, 21)) == {"WiredTiger engine lab"}
    # not on a server (not in arraygrowth.workloads), never counted among the published findings
    assert not list((out / "raw").glob("*job_run*"))
    page = (smoke_all.results() / "report.html").read_text()
    assert "job_run beside push" in page and "arraygrowth.elements" in page


def test_appending_an_element_to_the_last_array_is_bson_encode():
    """The engine lab grows a document's array by the element's bytes rather than encoding the whole document
    per update: the same bytes as bson.encode of the grown document, for any element."""
    from costlab.engine.bsonbytes import append_to_last_array

    document = {"_id": bson.ObjectId(bytes(12)), "job_id": "j", "timestamps": []}
    encoded = bson.encode(document)
    values = [{"ts": Int64(1), "host": "web-1"}, Int64(5), "text", [1, {"a": None}], 2.5, True]
    for i, value in enumerate(values):
        encoded = append_to_last_array(encoded, i, value)
        document["timestamps"].append(value)
        assert encoded == bson.encode(document)


def test_the_schema_lists_the_fallback_variants_declared_once():
    from costlab.arraygrowth.names import FALLBACK_VARIANTS
    from costlab.config import schema

    fallback = schema()["properties"]["arraygrowth"]["properties"]["fallback"]["properties"]["variants"]
    assert fallback["items"]["enum"] == list(FALLBACK_VARIANTS)
    assert fallback["default"] == list(FALLBACK_VARIANTS)
