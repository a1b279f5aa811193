"""The version registry's builders: ids, Bulk Upsert operations, Get Reports pipelines, options."""
from __future__ import annotations

import re
from datetime import date, datetime, timezone

import polars as pl
import pytest
from known import ARTICLE_VERSIONS, PUBLISHED_NAMES, UNKNOWN_VERSION
from pymongo import UpdateOne

from costlab.appversions.events import STATUS_DTYPE
from costlab.appversions.versions import (
    VERSIONS,
    as_report_end,
    bucket_code,
    build_id,
    full_bucket_bounds,
    get_version,
    report_windows,
)

PUBLISHED_ORDER = list(ARTICLE_VERSIONS)
KEY = "0" * 60 + "ABCD"
KEY_BYTES = b"\x00" * 30 + b"\xab\xcd"
D = datetime(2022, 6, 5, tzinfo=timezone.utc)


def _one_event(status: str = "pending") -> pl.DataFrame:
    return pl.DataFrame({"key": [KEY], "date": [D], "status": [status]},
                        schema={"key": pl.Utf8, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE})


def _op(name: str, status: str = "pending") -> UpdateOne:
    ops = get_version(name).bulk_upsert_ops(_one_event(status))
    assert len(ops) == 1 and ops[0]._upsert is True
    return ops[0]


def test_registry_order_and_lookup():
    assert list(VERSIONS)[:len(PUBLISHED_NAMES)] == list(PUBLISHED_NAMES)
    assert list(PUBLISHED_NAMES)[:len(PUBLISHED_ORDER)] == PUBLISHED_ORDER
    assert get_version("appV6R4").name == "appV6R4"
    unknown = re.escape(UNKNOWN_VERSION)
    with pytest.raises(ValueError, match=rf"unknown app version '{unknown}'.*allowed: appV1, appV2"):
        get_version(UNKNOWN_VERSION)


def test_ids_are_key_plus_bucket_code_as_binary():
    assert bucket_code(D, "day") == "20220605"
    assert bucket_code(D, "month") == "202206"
    assert bucket_code(D, "quarter") == "202202"
    assert bucket_code(date(2022, 12, 31), "quarter") == "202204"
    assert build_id(KEY, D, "day") == KEY_BYTES + b"\x20\x22\x06\x05"
    assert build_id(KEY, D, "month") == KEY_BYTES + b"\x20\x22\x06"
    assert build_id(KEY.lower(), D, "quarter") == KEY_BYTES + b"\x20\x22\x02"
    with pytest.raises(ValueError, match="64 hexadecimal digits"):
        build_id("XYZ", D, "day")


def test_bulk_upsert_ops_per_version():
    assert _op("appV1")._filter == {"_id": {"date": D, "key": KEY}}
    assert _op("appV1")._doc == {"$inc": {"pending": 1}}
    assert _op("appV2")._filter == {"key": KEY, "date": D}
    assert _op("appV2", "noFunds")._doc == {"$inc": {"noFunds": 1}}
    assert _op("appV3")._filter == {"key": KEY_BYTES, "date": D}
    assert _op("appV3")._doc == {"$inc": {"p": 1}}
    assert _op("appV4")._filter == {"_id": KEY_BYTES + b"\x20\x22\x06\x05"}
    assert _op("appV4", "rejected")._doc == {"$inc": {"r": 1}}
    assert _op("appV5R0")._filter == {"_id": KEY_BYTES + b"\x20\x22\x06"}
    assert _op("appV5R0")._doc == {"$push": {"items": {"date": D, "p": 1}}}
    assert _op("appV5R1")._filter == {"_id": KEY_BYTES + b"\x20\x22\x02"}
    assert _op("appV6R0")._filter == {"_id": KEY_BYTES + b"\x20\x22\x06"}
    assert _op("appV6R0", "approved")._doc == {"$inc": {"items.05.a": 1}}
    assert _op("appV6R1")._doc == {"$inc": {"items.0605.p": 1}}
    assert _op("appV6R2")._doc == {"$inc": {"totals.p": 1, "items.0605.p": 1}}
    assert _op("appV6R3")._doc == {"$inc": {"items.20220605.p": 1}}
    assert _op("appV6R4")._filter == {"_id": KEY_BYTES + b"\x20\x22\x02"}


def test_array_daily_update_pipelines():
    r2 = _op("appV5R2")._doc
    assert [list(stage) for stage in r2] == [["$set"], ["$set"], ["$unset"]]
    assert list(r2[0]["$set"]) == ["result"] and list(r2[1]["$set"]) == ["items"]
    assert r2[2] == {"$unset": ["result"]}
    # A day not yet in items is appended as {date, <status>: 1}.
    assert r2[1]["$set"]["items"]["$cond"][2] == {"$concatArrays": ["$result.items", [{"date": D, "p": 1}]]}
    assert _op("appV5R3")._doc == r2
    r4 = _op("appV5R4")._doc
    assert len(r4) == 4 and r4[1:] == r2
    # Only the event's status is added to totals; the other statuses are not written (no zeros).
    existing, added = r4[0]["$set"]["totals"]["$mergeObjects"]
    assert existing == {"$ifNull": ["$totals", {}]}
    assert added == {"p": {"$add": [{"$ifNull": ["$totals.p", 0]}, 1]}}


def test_ops_keep_row_order_and_count():
    events = pl.DataFrame(
        {
            "key": [KEY, "0" * 63 + "1", KEY],
            "date": [D, D, datetime(2010, 1, 1, tzinfo=timezone.utc)],
            "status": ["approved", "noFunds", "rejected"],
        },
        schema={"key": pl.Utf8, "date": pl.Datetime("ms", "UTC"), "status": STATUS_DTYPE},
    )
    ops = get_version("appV4").bulk_upsert_ops(events)
    assert [op._filter["_id"][-4:] for op in ops] == [
        b"\x20\x22\x06\x05",
        b"\x20\x22\x06\x05",
        b"\x20\x10\x01\x01",
    ]
    assert [op._doc for op in ops] == [{"$inc": {"a": 1}}, {"$inc": {"n": 1}}, {"$inc": {"r": 1}}]
    batches = list(get_version("appV6R1").iter_op_batches(events, batch_size=2, chunk_rows=2))
    assert [len(b) for b in batches] == [2, 1]


def test_report_windows_end_at_the_request_and_start_n_years_before():
    windows = report_windows(date(2022, 6, 15))
    assert [(n, s.date(), e.date()) for n, s, e in windows] == [
        (1, date(2021, 6, 15), date(2022, 6, 15)), (3, date(2019, 6, 15), date(2022, 6, 15)),
        (5, date(2017, 6, 15), date(2022, 6, 15)), (7, date(2015, 6, 15), date(2022, 6, 15)),
        (10, date(2012, 6, 15), date(2022, 6, 15))]
    # JavaScript's setUTCFullYear, as the authors' getReportsDates: 29 February a year back is 1 March
    # (2019 has no 29 February); 2016 has one, so four years back stays on it.
    assert report_windows(date(2020, 2, 29))[0][1] == datetime(2019, 3, 1, tzinfo=timezone.utc)
    assert report_windows(date(2020, 2, 29))[4][1] == datetime(2010, 3, 1, tzinfo=timezone.utc)
    assert report_windows(date(2024, 2, 29))[3][1] == datetime(2017, 3, 1, tzinfo=timezone.utc)


def test_report_ends_with_a_time_of_day_are_kept_to_the_millisecond():
    end = datetime(2020, 7, 3, 13, 5, 7, 123999, tzinfo=timezone.utc)
    assert as_report_end(end) == datetime(2020, 7, 3, 13, 5, 7, 123000, tzinfo=timezone.utc)
    assert as_report_end(datetime(2020, 7, 3, 13, 5)) == datetime(2020, 7, 3, 13, 5, tzinfo=timezone.utc)
    windows = report_windows(datetime(2020, 2, 29, 18, 30, tzinfo=timezone.utc))
    assert windows[0][1] == datetime(2019, 3, 1, 18, 30, tzinfo=timezone.utc)  # the time of day is kept
    with pytest.raises(ValueError, match="date or datetime"):
        as_report_end("2020-01-01")


def test_day_rules_of_the_versions():
    # appV4 compares YYYYMMDD ids, appV6R0-R4 item names: [start day, end day) at a time of day;
    # the others compare dates: (start day, end day].
    assert [n for n, v in VERSIONS.items() if v.day_rule == "day_ids"] == [
        "appV4", "appV6R0", "appV6R1", "appV6R2", "appV6R3", "appV6R4"]
    # appV5R4's stored totals: a quarter whose first day is cut by a mid-day start is not wholly inside
    start = datetime(2015, 1, 1, 12, tzinfo=timezone.utc)
    first, last = full_bucket_bounds(KEY, start, datetime(2016, 1, 1, tzinfo=timezone.utc), "quarter")
    assert first[-3:] == bytes.fromhex("201502") and last[-3:] == bytes.fromhex("201504")


def test_match_group_pipelines():
    end = date(2022, 6, 15)
    v1 = get_version("appV1").get_reports_pipelines(KEY, end)
    assert len(v1) == 5
    assert v1[0][0] == {
        "$match": {
            "_id.key": KEY,
            "_id.date": {
                "$gte": datetime(2021, 6, 15, tzinfo=timezone.utc),
                "$lt": datetime(2022, 6, 15, tzinfo=timezone.utc),
            },
        }
    }
    assert v1[0][1]["$group"]["approved"] == {"$sum": "$approved"}
    v3 = get_version("appV3").get_reports_pipelines(KEY, end)
    assert v3[2][0]["$match"]["key"] == KEY_BYTES and v3[2][1]["$group"]["pending"] == {"$sum": "$p"}
    v4 = get_version("appV4").get_reports_pipelines(KEY, end)
    assert v4[0][0] == {
        "$match": {"_id": {"$gte": KEY_BYTES + b"\x20\x21\x06\x15", "$lt": KEY_BYTES + b"\x20\x22\x06\x15"}}
    }


def test_bucket_pipelines():
    end = date(2022, 6, 15)
    r0 = get_version("appV5R0").get_reports_pipelines(KEY, end)[0]
    assert r0[0] == {
        "$match": {"_id": {"$gte": KEY_BYTES + b"\x20\x21\x06", "$lte": KEY_BYTES + b"\x20\x22\x06"}}
    }
    assert r0[1] == {"$unwind": {"path": "$items"}}
    assert list(r0[2]["$match"]) == ["items.date"]
    assert r0[3]["$group"]["rejected"] == {"$sum": "$items.r"} and r0[4] == {"$project": {"_id": 0}}
    r3 = get_version("appV5R3").get_reports_pipelines(KEY, end)[1]
    assert [list(stage)[0] for stage in r3] == ["$match", "$addFields", "$group", "$project"]
    assert "$reduce" in r3[1]["$addFields"]["totals"]
    # The Computed Pattern versions use stored totals for quarters wholly inside the window.
    r4 = get_version("appV5R4").get_reports_pipelines(KEY, end)[0]
    inside, stored, _ = r4[1]["$addFields"]["totals"]["$cond"]
    assert stored == "$totals"
    assert inside == {
        "$and": [
            {"$gte": ["$_id", KEY_BYTES + b"\x20\x21\x03"]},
            {"$lte": ["$_id", KEY_BYTES + b"\x20\x22\x01"]},
        ]
    }
    v6r0 = get_version("appV6R0").get_reports_pipelines(KEY, end)[0]
    bounds = v6r0[1]["$addFields"]["totals"]["$let"]["vars"]
    assert bounds["lo"]["$cond"] == [{"$eq": ["$_id", KEY_BYTES + b"\x20\x21\x06"]}, "15", ""]
    assert bounds["hi"]["$cond"][:2] == [{"$eq": ["$_id", KEY_BYTES + b"\x20\x22\x06"]}, "15"]
    v6r1 = get_version("appV6R1").get_reports_pipelines(KEY, end)[0]
    assert v6r1[1]["$addFields"]["totals"]["$let"]["vars"]["lo"]["$cond"][1] == "0615"


def test_single_pipeline_versions():
    for name in ("appV6R3", "appV6R4"):
        pipelines = get_version(name).get_reports_pipelines(KEY, date(2022, 1, 1))
        assert len(pipelines) == 1
        match, add_fields, group, project = pipelines[0]
        assert match == {
            "$match": {"_id": {"$gte": KEY_BYTES + b"\x20\x12\x01", "$lte": KEY_BYTES + b"\x20\x22\x01"}}
        }
        initial = add_fields["$addFields"]["totals"]["$reduce"]["initialValue"]
        assert list(initial) == ["oneYear", "threeYears", "fiveYears", "sevenYears", "tenYears"]
        branches = add_fields["$addFields"]["totals"]["$reduce"]["in"]["$let"]["vars"]["level"]["$switch"][
            "branches"
        ]
        assert branches[0]["case"]["$and"][0] == {"$gte": ["$$this.k", "20210101"]}
        assert branches[4]["case"]["$and"][0] == {"$gte": ["$$this.k", "20120101"]}
        assert group["$group"]["tenYears_noFunds"] == {"$sum": "$totals.tenYears.n"}
        assert project["$project"]["oneYear"]["approved"] == "$oneYear_approved"


def test_full_bucket_bounds():
    utc = timezone.utc
    first, last = full_bucket_bounds(
        KEY, datetime(2021, 7, 1, tzinfo=utc), datetime(2022, 7, 1, tzinfo=utc), "quarter"
    )
    assert (first[-3:], last[-3:]) == (b"\x20\x21\x03", b"\x20\x22\x02")
    first, last = full_bucket_bounds(
        KEY, datetime(2021, 12, 31, tzinfo=utc), datetime(2022, 1, 2, tzinfo=utc), "quarter"
    )
    assert first > last  # no quarter fits in three days


def test_indexes_and_collection_options():
    def keys(name):
        return [list(model.document["key"].items()) for model in get_version(name).indexes]
    assert keys("appV1") == [[("_id.key", 1), ("_id.date", 1)]]
    assert keys("appV2") == keys("appV3") == [[("key", 1), ("date", 1)]]
    assert all(model.document["unique"] for model in get_version("appV2").indexes)
    assert all(keys(name) == [] for name in PUBLISHED_ORDER[3:])
    assert get_version("appV6R4").create_collection_options == {
        "storageEngine": {"wiredTiger": {"configString": "block_compressor=zstd"}}}
    assert all(get_version(name).create_collection_options == {}
               for name in PUBLISHED_ORDER if name != "appV6R4")
    assert all(get_version(name).collection_name == name for name in PUBLISHED_ORDER)


def test_prepare_collection(test_db):
    for name in ("appV1", "appV6R4"):
        version = get_version(name)
        test_db[name].insert_one({"_id": 1})
        collection = version.prepare_collection(test_db)
        assert collection.estimated_document_count() == 0
        index_keys = sorted(list(ix["key"]) for ix in collection.list_indexes())
        assert index_keys == ([["_id"], ["_id.key", "_id.date"]] if name == "appV1" else [["_id"]])
    options = test_db.command("listCollections", filter={"name": "appV6R4"})["cursor"]["firstBatch"][0][
        "options"
    ]
    assert options["storageEngine"]["wiredTiger"]["configString"] == "block_compressor=zstd"
