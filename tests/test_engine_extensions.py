"""mongod's snappy and zstd as WiredTiger extensions: built for the loaded version, refused for another."""
from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

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


def test_without_a_compiler_one_line_says_so_and_the_substitutes_are_labelled(monkeypatch, tmp_path, capsys):
    from costlab.engine.wt import forget_compressors

    monkeypatch.setattr(extensions, "_compiler", lambda: None)
    monkeypatch.setenv("COSTLAB_WT_EXTENSIONS", str(tmp_path / "ext"))
    forget_compressors()
    try:
        assert extensions.main(["build"]) == 0
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("no C compiler") and "lz4, zlib" in lines[0], lines
        used, note = compressor_or_nearest("snappy")
        assert used == "lz4" and "no C compiler" in note
    finally:
        monkeypatch.delenv("COSTLAB_WT_EXTENSIONS")
        forget_compressors()


def test_an_unknown_library_mode_is_refused_with_the_allowed_ones(monkeypatch):
    monkeypatch.setenv(extensions.LIBS_ENV, "conda")
    allowed = r"COSTLAB_WT_COMPRESSOR_LIBS='conda': allowed values are auto, system, debian"
    with pytest.raises(ValueError, match=allowed):
        extensions.libs_mode()


DEBIAN_TOOLS = shutil.which("apt-get") and shutil.which("dpkg-deb") and shutil.which("ldd")
# The fetched packages and WiredTiger's sources are downloaded once, beside the venv's extensions.
CACHES = extensions.extensions_dir().parent


def _linked(library) -> dict[str, str]:
    """ldd's view of `library`: shared-library name -> the file the loader resolves it to."""
    out = subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout
    return dict(re.findall(r"^\s*(\S+) => (\S+)", out, re.M))


@pytest.mark.skipif(
    not DEBIAN_TOOLS, reason="needs apt-get and dpkg-deb (Debian/Ubuntu) to fetch the libraries"
)
def test_debian_libraries_fetched_without_root_build_extensions_that_load_and_compress(tmp_path, monkeypatch):
    """COSTLAB_WT_COMPRESSOR_LIBS=debian: the build uses Debian's packages fetched into a user directory even
    where the system has the -dev packages, as a machine without them does; each extension resolves its
    library to the copy beside it and compresses a table."""
    from costlab.engine.wt import forget_compressors

    monkeypatch.setenv(extensions.LIBS_ENV, "debian")
    dest = tmp_path / "ext"
    manifest = extensions.build(
        dest, source_cache=CACHES / "wiredtiger-src", packages_cache=CACHES / "debian"
    )
    assert set(manifest["built"]) == {"snappy", "zstd"} and manifest["missing"] == [], manifest
    assert manifest["built"]["snappy"]["library_source"].startswith("Debian libsnappy-dev ")
    assert "libsnappy1v5" in manifest["built"]["snappy"]["library_source"]
    assert manifest["built"]["zstd"]["library_source"].startswith("Debian libzstd-dev ")
    assert _linked(dest / "libwiredtiger_snappy.so")["libsnappy.so.1"] == str(dest / "libsnappy.so.1")
    assert _linked(dest / "libwiredtiger_zstd.so")["libzstd.so.1"] == str(dest / "libzstd.so.1")
    monkeypatch.setenv("COSTLAB_WT_EXTENSIONS", str(dest))
    forget_compressors()
    try:
        status = extension_status()
        assert {n: e["state"] for n, e in status.items()} == {"snappy": "loaded", "zstd": "loaded"}
        assert status["snappy"]["library_source"] == manifest["built"]["snappy"]["library_source"]
        for compressor in ("snappy", "zstd"):
            _compress_and_read_back(tmp_path / compressor, compressor)
    finally:
        monkeypatch.delenv("COSTLAB_WT_EXTENSIONS")
        forget_compressors()


def _compress_and_read_back(home, compressor: str) -> None:
    rows = {i: (b"order %08d " % i) * 40 + os.urandom(16) for i in range(400)}
    settings = EngineSettings(cache_mb=32, journal_compressor=compressor, block_compressor=compressor)
    with Engine(home, settings) as engine:
        for table, config in (("t", compressor), ("plain", "")):
            engine.session.create(f"table:{table}", f"key_format=q,value_format=u,block_compressor={config}")
            cursor = engine.session.open_cursor(f"table:{table}")
            for key, value in rows.items():
                cursor[key] = value
            cursor.close()
    assert (home / "t.wt").stat().st_size < (home / "plain.wt").stat().st_size / 3


# The system's snappy/zstd headers and link-time libraries hidden by overlay mounts in a private mount
# namespace (whiteouts over each file): what a machine without libsnappy-dev/libzstd-dev looks like.
# libzstd.so.1 stays (the machine has it at run time; apt and dpkg link it).
HIDDEN = {
    "/usr/include": [
        "snappy-c.h",
        "snappy.h",
        "snappy-sinksource.h",
        "snappy-stubs-public.h",
        "zstd.h",
        "zstd_errors.h",
        "zdict.h",
    ],
    "/usr/lib/x86_64-linux-gnu": [
        "libsnappy.so",
        "libsnappy.so.1",
        "libsnappy.a",
        "libsnappy-shared.a",
        "libzstd.so",
        "libzstd.a",
    ],
}


def hide_system_libraries_command(scratch, command: str) -> list[str]:
    """`command` (shell) run as root in a mount namespace where the files of HIDDEN are not there."""
    mounts = []
    for index, (directory, names) in enumerate(HIDDEN.items()):
        upper, work = scratch / f"upper{index}", scratch / f"work{index}"
        upper.mkdir(parents=True)
        work.mkdir()
        for name in names:
            os.mknod(upper / name, 0o600 | stat.S_IFCHR, os.makedev(0, 0))  # an overlay whiteout
        mounts.append(
            f"mount -t overlay overlay -o lowerdir={directory},upperdir={upper},workdir={work} {directory}"
        )
    return ["unshare", "-m", "sh", "-ec", " && ".join(["mount --make-rprivate /", *mounts, command])]


@pytest.mark.skipif(
    not (
        DEBIAN_TOOLS
        and os.geteuid() == 0
        and shutil.which("unshare")
        and Path("/usr/lib/x86_64-linux-gnu").is_dir()
    ),
    reason="hides the system's headers with overlay mounts in a private mount namespace: needs root, "
    "unshare, Debian's apt-get/dpkg-deb on x86-64 (the non-root test above builds from the "
    "fetched packages with COSTLAB_WT_COMPRESSOR_LIBS=debian)",
)
def test_with_the_system_headers_hidden_make_wt_extensions_fetches_debian_packages(tmp_path):
    dest = tmp_path / "ext"
    for cache in ("wiredtiger-src", "debian"):
        (CACHES / cache).mkdir(parents=True, exist_ok=True)
        (tmp_path / cache).symlink_to(CACHES / cache)
    probe = (
        "if echo '#include <snappy-c.h>' | cc -E -x c - >/dev/null 2>&1; then echo SEEN; else echo HIDDEN; fi"
    )
    env = {k: v for k, v in os.environ.items() if k != extensions.LIBS_ENV} | {
        "COSTLAB_WT_EXTENSIONS": str(dest)
    }
    run = subprocess.run(
        hide_system_libraries_command(
            tmp_path / "overlay", f"{probe}; {sys.executable} -m costlab.engine.extensions build"
        ),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "HIDDEN", (
        run.stdout
    )  # the system's header was not there for the build
    manifest = json.loads((dest / "manifest.json").read_text())
    assert set(manifest["built"]) == {"snappy", "zstd"}, (manifest, run.stderr)
    assert all(b["library_source"].startswith("Debian ") for b in manifest["built"].values()), manifest
    assert "snappy extension built (snappy 1.1" in run.stdout and "apt-get download, no root" in run.stdout
