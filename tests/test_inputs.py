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
    return pl.DataFrame(
        {
            "version": versions,
            "events": [600] * len(versions),
            "documents": [10] * len(versions),
            "avg_doc_bytes": [100.0] * len(versions),
            "data_bytes": [1000] * len(versions),
        }
    )


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
    assert rebuild_command("resources/published/appversions_collection_stats.csv").startswith(
        "git checkout -- "
    )


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


# --- round two: cut rows, wrong types, garbled JSON, edits after the step (docs/reliability.md) ---

def _written_model(tmp_path, monkeypatch) -> str:
    from costlab.io import write_csv

    monkeypatch.chdir(tmp_path)
    path = "results/appversions/model/stats.csv"
    frame = _model(VERSIONS).with_columns(pl.Series("avg_doc_bytes", [364.63] * len(VERSIONS)),
                                          pl.Series("data_bytes", [123456789] * len(VERSIONS)))
    write_csv(frame, path)
    return path


def test_a_model_table_cut_mid_row_is_an_error_not_a_smaller_number(tmp_path, monkeypatch):
    import os

    path = _written_model(tmp_path, monkeypatch)
    assert read_model_stats(path, VERSIONS)["avg_doc_bytes"][-1] == 364.63
    os.truncate(path, os.path.getsize(path) - 12)        # the turn's case: appV6R4 read 36.0
    with pytest.raises(InputError) as err:
        read_model_stats(path, VERSIONS)
    assert path in str(err.value) and f"snakemake --force {path}" in str(err.value)


def test_a_cut_row_without_a_digest_record_is_still_caught(tmp_path, monkeypatch):
    import os
    import shutil

    path = _written_model(tmp_path, monkeypatch)
    shutil.rmtree(tmp_path / "results/appversions/model/.digests")   # a file an older costlab wrote
    os.truncate(path, os.path.getsize(path) - 12)
    with pytest.raises(InputError, match="middle of a row"):
        read_model_stats(path, VERSIONS)
    text = (tmp_path / path).read_text()
    (tmp_path / path).write_text(text[: text.rindex(",")] + ",\n")     # a whole line with an empty cell
    with pytest.raises(InputError, match="column avg_doc_bytes is empty in 1 row"):
        read_model_stats(path, VERSIONS)


def test_a_negative_or_non_numeric_value_is_named(tmp_path):
    path = tmp_path / "stats.csv"
    _model(VERSIONS).with_columns(pl.Series("documents", [-1] * len(VERSIONS))).write_csv(path)
    with pytest.raises(InputError, match="column documents holds -1 \\(allowed: at least 0\\)"):
        read_model_stats(path, VERSIONS)
    _model(VERSIONS).with_columns(pl.Series("documents", ["ten"] * len(VERSIONS))).write_csv(path)
    with pytest.raises(InputError, match="column documents holds String values, not numbers"):
        read_model_stats(path, VERSIONS)


def test_an_edit_after_the_step_is_named_with_the_rebuild(tmp_path, monkeypatch):
    path = _written_model(tmp_path, monkeypatch)
    text = (tmp_path / path).read_text()
    (tmp_path / path).write_text(text.replace("364.63", "999.99", 1))   # a whole, well-typed edit
    with pytest.raises(InputError, match="edited after the run") as err:
        read_model_stats(path, VERSIONS)
    assert f"snakemake --force {path}" in str(err.value)


def test_a_garbled_provenance_json_is_named(tmp_path):
    from costlab.server.provenance import read_provenance

    path = tmp_path / "results/docsize/provenance/measure_s1.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"server_kind": "stand-in", "serv')
    with pytest.raises(InputError, match="is not valid JSON") as err:
        read_provenance(path)
    assert str(path) in str(err.value)
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="holds a JSON list, not a dict"):
        read_provenance(path)


def test_an_engine_log_bytes_table_cut_in_its_last_row_is_named(tmp_path, monkeypatch):
    import os

    from costlab.arraygrowth.figures import build_engine_figure
    from costlab.io import write_csv

    monkeypatch.chdir(tmp_path)
    path = "results/arraygrowth/engine/log_bytes.csv"
    write_csv(pl.DataFrame({"profile": ["standalone"] * 3, "workload": ["push"] * 3, "n": [100, 200, 400],
                            "log_bytes": [1000, 4000, 16000]}), path)
    import shutil
    shutil.rmtree(tmp_path / "results/arraygrowth/engine/.digests")   # the cut row alone, not the digest
    os.truncate(path, os.path.getsize(path) - 4)      # "…,400,16" then nothing: the turn's TypeError
    with pytest.raises(InputError, match="log_bytes.csv ends in the middle of a row"):
        build_engine_figure(path, "fit.csv", "published.csv", ["a.png", "a.svg", "a.json"])
