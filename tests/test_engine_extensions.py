"""mongod's snappy and zstd as WiredTiger extensions: built for the loaded version, refused for another."""
from __future__ import annotations

import os
import shutil

import pytest

from costlab.engine import extensions
from costlab.engine.connection import Engine, EngineSettings
from costlab.engine.extensions import (
    EXTENSIONS,
    ExtensionMismatch,
    check_library,
    compile_extension,
    extension_status,
    header_available,
    open_config_extensions,
    write_header,
)
from costlab.engine.wt import compressor_or_nearest, wiredtiger_version

BUILT = {name for name, entry in extension_status().items() if entry["state"] == "loaded"}
needs = pytest.mark.skipif(BUILT != set(EXTENSIONS), reason="compressor extensions not built here: "
                           + extensions.install_line(sorted(set(EXTENSIONS) - BUILT)))
SOURCES = extensions.extensions_dir().parent / "wiredtiger-src" / f"wiredtiger-{wiredtiger_version()}"


@needs
@pytest.mark.parametrize("compressor", ["snappy", "zstd"])
def test_a_table_with_the_compressor_exists_and_reads_back(tmp_path, compressor):
    rows = {i: (b"order %08d " % i) * 40 + os.urandom(16) for i in range(400)}
    settings = EngineSettings(cache_mb=32, journal_compressor=compressor, block_compressor=compressor)
    with Engine(tmp_path / "wt", settings) as engine:
        engine.session.create("table:t", f"key_format=q,value_format=u,block_compressor={compressor}")
        cursor = engine.session.open_cursor("table:t")
        for key, value in rows.items():
            cursor[key] = value
        cursor.close()
        engine.session.create("table:plain", "key_format=q,value_format=u,block_compressor=")
        cursor = engine.session.open_cursor("table:plain")
        for key, value in rows.items():
            cursor[key] = value
        cursor.close()
    meta = (tmp_path / "wt" / "WiredTiger.wt").read_bytes()
    assert f"block_compressor={compressor}".encode() in meta
    # the compressed file is smaller than the same rows uncompressed: the compressor really ran
    assert (tmp_path / "wt" / "t.wt").stat().st_size < (tmp_path / "wt" / "plain.wt").stat().st_size / 3
    with Engine(tmp_path / "wt", settings, fresh=False) as engine:   # a new connection reads it back
        cursor = engine.session.open_cursor("table:t")
        assert {key: cursor[key] for key in rows} == rows


@needs
def test_status_records_the_header_version_and_the_library_versions():
    status = extension_status()
    assert (
        status["snappy"]["wt_header_version"] == wiredtiger_version() == status["zstd"]["wt_header_version"]
    )
    assert status["snappy"]["library_version"].startswith("snappy 1.")
    assert (
        status["zstd"]["library_version"].startswith("zstd 1.")
        and status["zstd"]["config"] == "compression_level=6"
    )
    assert compressor_or_nearest("snappy") == ("snappy", None) and compressor_or_nearest("zstd") == (
        "zstd",
        None,
    )


@pytest.mark.skipif(
    not (SOURCES.exists() and header_available(EXTENSIONS["snappy"])),
    reason="no WiredTiger sources or libsnappy-dev here (make wt-extensions fetches/needs them)",
)
def test_an_extension_built_for_another_version_is_refused_before_loading(tmp_path):
    other = "11.3.1"
    assert other != wiredtiger_version()
    write_header(SOURCES, tmp_path / "include", other)
    header = (tmp_path / "include" / "wiredtiger.h").read_text()
    assert "#define WIREDTIGER_VERSION_MINOR    3" in header and "@VERSION" not in header
    library = tmp_path / "libwiredtiger_snappy.so"
    compile_extension(
        EXTENSIONS["snappy"], SOURCES, tmp_path / "include", library, shutil.which("cc") or "gcc"
    )
    with pytest.raises(
        ExtensionMismatch, match=r"WiredTiger 11\.3\.1 header, but the loaded wiredtiger module is 11\.2"
    ):
        check_library(library, wiredtiger_version())
    (tmp_path / "manifest.json").write_text('{"built": {"snappy": {"sha256": null}}}')
    status = extension_status.__wrapped__(str(tmp_path))
    assert (
        status["snappy"]["state"] == "refused"
        and "rebuild with `make wt-extensions`" in status["snappy"]["reason"]
    )
    assert str(library) not in open_config_extensions(str(tmp_path))


def test_without_the_libraries_the_substitute_is_named_with_what_to_install(no_extensions):
    status = extension_status()
    assert status["snappy"]["state"] == status["zstd"]["state"] == "missing"
    assert open_config_extensions() == ""
    used, note = compressor_or_nearest("snappy")
    assert used == "lz4" and "snappy not available in WiredTiger" in note and "used lz4" in note
    assert "apt-get install libsnappy-dev" in note
    with pytest.raises(ValueError, match="libzstd-dev"):
        EngineSettings(journal_compressor="zstd").open_config()
