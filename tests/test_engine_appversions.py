"""appversions on the engine lab: the stored documents are the model's, compressors never silently replaced."""
from __future__ import annotations

import bson
import polars as pl
import pytest

from costlab.appversions.engine import measure_version, storage_table, verdicts, version_documents, wanted_compressor
from costlab.appversions.events import generate_events
from costlab.appversions.model import document_sizes
from costlab.appversions.versions import VERSIONS, get_version
from costlab.config import ROOT
from costlab.engine.wt import available_compressors


@pytest.fixture(scope="module")
def events() -> pl.DataFrame:
    return generate_events(400, 3)


@pytest.mark.parametrize("name", list(VERSIONS))
def test_documents_have_the_models_bson_sizes(events, name):
    version = get_version(name)
    sizes = sorted(len(bson.encode(doc)) for doc, _ in version_documents(version, events))
    assert sizes == sorted(document_sizes(version, events).to_list())


def test_documents_hold_every_event(events):
    # every event counted once: appV4's day documents' counters sum to the events
    total = sum(sum(v for k, v in doc.items() if k != "_id")
                for doc, _ in version_documents(get_version("appV4"), events))
    assert total == events.height


def test_compressor_wanted_and_used_are_both_recorded(events, tmp_path):
    assert wanted_compressor(get_version("appV6R4")) == "zstd" and wanted_compressor(get_version("appV6R3")) == "snappy"
    rows = [measure_version(name, events, tmp_path / name) for name in ("appV6R3", "appV6R4")]
    table = storage_table(rows, pl.read_csv(ROOT / "resources/published/appversions_collection_stats.csv"), "11.2.0")
    r3, r4 = table.row(0, named=True), table.row(1, named=True)
    assert r3["storage_bytes"] > 0 and r4["index_bytes"] > 0 and r3["data_bytes"] == r4["data_bytes"]
    if "zstd" not in available_compressors():
        assert r4["block_compressor"] != "zstd" and "zstd not built into WiredTiger" in r4["compressor_note"]
        found = verdicts(table).filter(pl.col("metric") == "storage size appV6R4 / appV6R3")
        assert found["verdict"][0].startswith("not comparable (snappy and zstd not built in")
    assert set(table["server_kind"]) == {"engine"}
