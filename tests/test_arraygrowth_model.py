"""The server-free model of MongoDB's delta-path conditions, checked against the bson library's sizes."""
import bson
import numpy as np
import pytest
from bson import Int64, ObjectId

from costlab.arraygrowth.model import (
    base_document_bytes,
    element_bytes,
    fallback_conditions,
    modify_eligible,
    update_sizes,
)
from costlab.arraygrowth.workloads import (
    ARRAY_FIELD,
    JOB_FIELDS,
    FallbackParams,
    big_element,
    fallback_settings,
    job_name,
    timestamp,
)


def _encoded(array):
    return len(bson.encode({"_id": ObjectId(), **JOB_FIELDS, "job_id": job_name(0), ARRAY_FIELD: array}))


def test_document_sizes_match_bson_encoding_across_key_widths():
    # 0..1100 crosses the 1-, 2-, 3- and 4-digit index keys
    params = FallbackParams(updates=1100)
    old, new = update_sizes("push_one", params)
    for i in (0, 9, 10, 99, 100, 999, 1000, 1099):
        assert new[i] == _encoded([timestamp(j) for j in range(i + 1)])
        assert old[i] == _encoded([timestamp(j) for j in range(i)])


def test_push_many_big_elements_and_slice_sizes_match_bson():
    params = FallbackParams(updates=30, elements_per_update=7, big_element_bytes=300, slice_elements=12)
    _, new = update_sizes("push_many", params)
    assert new[29] == _encoded([timestamp(j) for j in range(30 * 7)])
    _, new = update_sizes("big_elements", params)
    assert new[4] == _encoded([big_element(j, 300) for j in range(5)])
    old, new = update_sizes("push_slice", params)
    assert new[29] == _encoded([timestamp(j) for j in range(18, 30)])
    assert old[29] == new[29]            # full array: one element out, one in


def test_small_docs_stay_under_1kb_at_the_largest_allowed_setting():
    params = FallbackParams(updates=600, small_doc_elements=60)
    _, new = update_sizes("small_docs", params)
    assert new.max() == _encoded([timestamp(j) for j in range(60)])
    assert new.max() <= 1024


def test_modify_conditions_from_the_record_store():
    old = np.array([1000, 1020, 1100, 2000, 5000])
    new = np.array([1100, 1024, 1300, 2000, 5400])
    # 1100 > 1024 and grew 100 <= 110; 1024 is not > 1024; grew 200 > 130; unchanged; grew 400 <= 540
    assert modify_eligible(old, new, table_logged=False).tolist() == [True, False, False, True, True]
    assert not modify_eligible(old, new, table_logged=True).any()


def test_fallback_conditions_table():
    table = fallback_conditions(FallbackParams(updates=1000, small_doc_elements=40, big_element_bytes=1024))
    rows = {(r["variant"], r["topology"]): r for r in table.iter_rows(named=True)}
    assert all(rows[(v, "standalone")]["modify_eligible_updates"] == 0 for v, _ in rows)
    assert rows[("small_docs", "replica set")]["modify_eligible_updates"] == 0
    # push_one: ~12 bytes per push; eligible once the document is over 1 KB (push ~75 onwards)
    eligible = rows[("push_one", "replica set")]["modify_eligible_updates"]
    assert 900 < eligible < 1000
    # set_array stores the same bytes as push_one: the record store cannot tell them apart
    assert rows[("set_array", "replica set")]["modify_eligible_updates"] == eligible
    # 1 KB pushes: ineligible while a push is more than a tenth of the new document (first ~9)
    big = rows[("big_elements", "replica set")]
    assert big["updates_growing_over_10pct"] == pytest.approx(9, abs=1)
    assert rows[("push_one", "replica set")]["final_doc_bytes"] == _encoded([Int64(1)] * 1000)


def test_fallback_settings_validate():
    params, variants = fallback_settings({"enabled": True, "updates": 50, "variants": ["push_one"]})
    assert params.updates == 50 and variants == ["push_one"]
    with pytest.raises(ValueError, match="allowed: push_one"):
        fallback_settings({"variants": ["push_two"]})
    with pytest.raises(ValueError, match="updates must be a positive integer, got 0"):
        FallbackParams(updates=0)
    assert base_document_bytes(job_name(0)) == _encoded([])
    assert element_bytes(np.array([0, 10, 100]), 8).tolist() == [11, 12, 13]
