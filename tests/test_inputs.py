"""Inputs are checked when read: unreadable or incomplete files stop the step naming the file and
the command that rebuilds it; a full disk is reported as a full disk, naming the path."""
from __future__ import annotations

import errno

import polars as pl
import pytest

from costlab.appversions.tables import read_model_stats
from costlab.inputs import InputError, read_csv, read_parquet, rebuild_command
from costlab.io import DiskFull, atomic_path, write_parquet

VERSIONS = ["appV1", "appV2", "appV3", "appV4", "appV5R0", "appV5R1", "appV5R2", "appV5R3", "appV5R4",
            "appV6R0", "appV6R1", "appV6R2", "appV6R3", "appV6R4"]


def _model(versions) -> pl.DataFrame:
    return pl.DataFrame({"version": versions, "events": [600] * len(versions), "documents": [10] * len(versions),
                         "avg_doc_bytes": [100.0] * len(versions), "data_bytes": [1000] * len(versions)})


def test_a_truncated_model_table_names_the_missing_versions_and_the_rebuild(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = "results/appversions/model/stats.csv"
    (tmp_path / path).parent.mkdir(parents=True)
    _model(VERSIONS[:4]).write_csv(tmp_path / path)   # 4 of 14 versions: used to pass with rows missing
    with pytest.raises(InputError) as err:
        read_model_stats(path, VERSIONS)
    message = str(err.value)
    assert path in message and "appV5R0" in message and "appV6R4" in message
    assert f"snakemake --force {path}" in message
    assert read_model_stats(path, VERSIONS[:4]).height == 4


def test_a_model_table_without_a_contract_column_is_named(tmp_path):
    path = tmp_path / "stats.csv"
    _model(VERSIONS).drop("data_bytes").write_csv(path)
    with pytest.raises(InputError, match="lacks columns \\['data_bytes'\\]"):
        read_model_stats(path, VERSIONS)


def test_a_truncated_parquet_names_the_file_and_the_rebuild(tmp_path):
    path = tmp_path / "loadtest_appV4.parquet"
    pl.DataFrame({"a": list(range(1000))}).write_parquet(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError) as err:
        read_parquet(path)
    assert str(path) in str(err.value) and f"snakemake --force {path}" in str(err.value)
    with pytest.raises(InputError, match="is missing"):
        read_parquet(tmp_path / "gone.parquet")
    with pytest.raises(InputError, match="lacks columns"):
        pl.DataFrame({"a": [1]}).write_parquet(tmp_path / "ok.parquet")
        read_parquet(tmp_path / "ok.parquet", columns=["a", "b"])


def test_an_empty_or_binary_csv_is_named(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputError, match="empty.csv"):
        read_csv(empty)


def test_published_inputs_are_restored_from_git():
    assert rebuild_command("resources/published/appversions_collection_stats.csv").startswith("git checkout -- ")


def test_disk_full_is_reported_as_disk_full_naming_the_path(tmp_path):
    target = tmp_path / "raw" / "x.parquet"

    def enospc():
        with atomic_path(target):
            raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(DiskFull) as err:
        enospc()
    assert str(target) in str(err.value) and "disk full" in str(err.value)
    assert not target.exists() and list(target.parent.iterdir()) == []   # no partial file left


def test_a_writer_that_hides_enospc_is_still_reported_when_the_disk_has_no_space(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(10**9, 10**9, 0))

    class Frame:   # polars reports a full disk as a thrift transport error
        def write_parquet(self, path):
            raise pl.exceptions.ComputeError("Invalid thrift: transport error")

    with pytest.raises(DiskFull, match="x.parquet"):
        write_parquet(Frame(), tmp_path / "x.parquet")


def test_other_write_errors_stay_what_they_are(tmp_path):
    with pytest.raises(ValueError):
        with atomic_path(tmp_path / "y.csv"):
            raise ValueError("a bug")
