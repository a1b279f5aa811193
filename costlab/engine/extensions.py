"""mongod's block and journal compressors (snappy, zstd) as WiredTiger extensions.

mongod builds WiredTiger with snappy and zstd compiled in, and opens it with
`builtin_extension_config=(zstd=(compression_level=6))` (mongod's wiredtiger_kv_engine.cpp;
`zstdCompressorLevel{6}` in wiredtiger_kv_engine.h). The wiredtiger module costlab uses has
neither built in, but WiredTiger ships both as loadable extensions
(`ext/compressors/snappy/snappy_compress.c`, `ext/compressors/zstd/zstd_compress.c` in its
source). This module compiles them against the header of the exact WiredTiger version the
loaded module reports (the sources come from that version's sdist on PyPI, fetched with pip)
and the system's libsnappy / libzstd, and loads them with `wiredtiger_open(...,
"extensions=[...]")`.

An extension calls WiredTiger through the `WT_CONNECTION` method table, whose layout changes
between versions (11.3 adds a method before `add_compressor`): one built for another version
crashes the process. So each built library carries the version of the header it was compiled
against (`costlab_wt_header_version`), read with ctypes before WiredTiger ever loads it; a
library whose version differs from the module's is refused with a message, never loaded.

`python -m costlab.engine.extensions build` is the set-up step (`make all`, `make test` and
.ci/run run it). The compression libraries come from the system where the compiler finds their
headers; otherwise Debian's packages (libsnappy-dev/libsnappy1v5, libzstd-dev/libzstd1) are
fetched with `apt-get download`, as any user (apt's lists and cache in a directory of the venv),
unpacked with `dpkg-deb -x`, and the shared library is copied beside the extension, which finds
it through its run path `$ORIGIN` (docs/engine-lab.md says why these and not a source build).
With no C compiler, or neither the system's nor Debian's libraries, it builds nothing and prints
one line saying what is missing; the engine lab then uses the nearest built-in compressor, labelled.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from costlab.engine.wtmodule import wiredtiger_version

ZSTD_LEVEL = 6   # mongod's default zstd level (wiredTigerGlobalOptions.zstdCompressorLevel)
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class CompressorExtension:
    name: str
    source: str           # path inside the WiredTiger sdist
    link: str             # the system library it links against
    header: str           # the library's C header the source includes
    debian_package: str   # the -dev package: the header and the link-time library
    runtime_package: str  # the package with the shared library the extension loads
    soname: str           # the shared library's name at run time
    config: str = ""      # the extension's load-time config


EXTENSIONS = {
    "snappy": CompressorExtension("snappy", "ext/compressors/snappy/snappy_compress.c", "snappy",
                                  "snappy-c.h", "libsnappy-dev", "libsnappy1v5", "libsnappy.so.1"),
    "zstd": CompressorExtension("zstd", "ext/compressors/zstd/zstd_compress.c", "zstd", "zstd.h",
                                "libzstd-dev", "libzstd1", "libzstd.so.1", f"compression_level={ZSTD_LEVEL}"),
}

# Compiled into every library beside WiredTiger's source: the header's WiredTiger version and the
# compression library's version as its header states them (read back with ctypes before loading).
_STAMP_C = """\
#include <wiredtiger.h>
#include <{header}>
int costlab_wt_header_version[3] = {{WIREDTIGER_VERSION_MAJOR, WIREDTIGER_VERSION_MINOR,
                                     WIREDTIGER_VERSION_PATCH}};
const char costlab_library_version[] = {library_version};
"""
_LIBRARY_VERSION_EXPR = {
    "zstd": '"zstd " ZSTD_VERSION_STRING'
}   # snappy's version header is C++: read as text


class ExtensionMismatch(RuntimeError):
    """A compressor extension compiled for another WiredTiger version: never loaded."""


def install_line(missing: list[str]) -> str:
    packages = " ".join(EXTENSIONS[name].debian_package for name in missing)
    return (
        f"mongod's {' and '.join(missing)} compressor{'s' if len(missing) > 1 else ''} for the engine lab: "
        f"install {packages} (Debian/Ubuntu: apt-get install {packages}) and a C compiler, then run "
        "`make wt-extensions`; until then the nearest built-in compressor is used, labelled"
    )


def extensions_dir() -> Path:
    """Where the built libraries live: $COSTLAB_WT_EXTENSIONS, else inside the running venv."""
    configured = os.environ.get("COSTLAB_WT_EXTENSIONS")
    return (
        Path(configured) if configured else Path(sys.prefix) / "share" / "costlab" / "wiredtiger-extensions"
    )


def _version_tuple(version: str) -> tuple[int, int, int]:
    major, minor, patch = (int(p) for p in version.split("."))
    return major, minor, patch


# ---- building ----------------------------------------------------------------------------------


def fetch_sources(version: str, cache: Path) -> Path:
    """WiredTiger `version`'s sdist (pip download from PyPI), the files the extensions need unpacked.
    Returns the unpacked source root; a second call reuses it."""
    root = cache / f"wiredtiger-{version}"
    needed = ["src/include/wiredtiger.in", "src/include/wiredtiger_ext.h", "LICENSE"] + [
        e.source for e in EXTENSIONS.values()]
    if all((root / n).exists() for n in needed):
        return root
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as download:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"wiredtiger=={version}",
                "-d",
                download,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        (sdist,) = Path(download).glob("wiredtiger-*.tar.gz")
        with tarfile.open(sdist) as archive:
            prefix = f"wiredtiger-{version}/"
            members = [m for m in archive.getmembers()
                       if m.isfile() and m.name.removeprefix(prefix) in needed]
            staging = Path(tempfile.mkdtemp(dir=cache))
            # only the listed regular files (no links, no absolute or parent paths); tarfile's `filter`
            # arrived in 3.11.4
            archive.extractall(
                staging, members=members, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {})
            )
        if root.exists():
            shutil.rmtree(root)
        (staging / f"wiredtiger-{version}").rename(root)
        shutil.rmtree(staging, ignore_errors=True)
    return root


def write_header(source_root: Path, include_dir: Path, version: str) -> None:
    """wiredtiger.h from the sdist's wiredtiger.in, as WiredTiger's CMake configure_file makes it on
    Linux (version numbers, the standard includes, `typedef off_t wt_off_t`), wiredtiger_ext.h, and
    an empty wiredtiger_config.h (the extension is loaded, not built in)."""
    major, minor, patch = _version_tuple(version)
    includes = "\n".join(
        f"#include <{h}>"
        for h in ("sys/types.h", "inttypes.h", "stdarg.h", "stdbool.h", "stdint.h", "stdio.h")
    )
    text = (source_root / "src/include/wiredtiger.in").read_text()
    for token, value in (
        ("@VERSION_MAJOR@", str(major)),
        ("@VERSION_MINOR@", str(minor)),
        ("@VERSION_PATCH@", str(patch)),
        ("@VERSION_STRING@", f'"WiredTiger {version}"'),
        ("@wiredtiger_includes_decl@", includes),
        ("@off_t_decl@", "typedef off_t wt_off_t;"),
        ("@uintmax_t_decl@", ""),
        ("@uintptr_t_decl@", ""),
    ):
        text = text.replace(token, value)
    if "@" in "".join(line for line in text.splitlines() if line.startswith("#")):
        raise RuntimeError("wiredtiger.in has a placeholder this build does not fill")
    include_dir.mkdir(parents=True, exist_ok=True)
    (include_dir / "wiredtiger.h").write_text(text)
    shutil.copy(source_root / "src/include/wiredtiger_ext.h", include_dir / "wiredtiger_ext.h")
    (include_dir / "wiredtiger_config.h").write_text("/* costlab: extension loaded at run time */\n")


def _compiler() -> str | None:
    configured = os.environ.get("CC")
    if configured:
        return shutil.which(configured)
    return shutil.which("cc") or shutil.which("gcc")


NO_COMPILER_LINE = (
    "no C compiler (cc, gcc or $CC) here: mongod's snappy and zstd compressors cannot be built for the "
    "engine lab; the nearest built-in compressors (lz4, zlib) are used, labelled in every row "
    "(install gcc, then `make wt-extensions`)"
)

# Where the compression libraries come from: `auto` (the system's where the compiler finds their headers,
# else Debian's packages fetched into the venv), `system` (never download), `debian` (always the fetched
# packages, as on a machine without the -dev packages; the tests use it).
LIBS_ENV = "COSTLAB_WT_COMPRESSOR_LIBS"
LIBS_MODES = ("auto", "system", "debian")


def libs_mode() -> str:
    mode = os.environ.get(LIBS_ENV, "auto") or "auto"
    if mode not in LIBS_MODES:
        raise ValueError(f"{LIBS_ENV}={mode!r}: allowed values are {', '.join(LIBS_MODES)}")
    return mode


@dataclass(frozen=True)
class LibrarySource:
    """Where one compression library's header and shared library are found for the build."""

    description: str  # recorded in the manifest and every engine job's provenance
    include_dirs: tuple[Path, ...] = ()  # searched before the system's
    lib_dir: Path | None = None  # None: the system's library, found by the linker and loader
    packages: dict[str, str] | None = None  # Debian package -> version, when fetched


SYSTEM_SOURCE = LibrarySource("the system's library and header")


def header_available(
    extension: CompressorExtension, compiler: str | None = None, include_dirs: tuple[Path, ...] = ()
) -> bool:
    """Whether the C compiler finds the compression library's header (its -dev package)."""
    compiler = compiler or _compiler()
    if compiler is None:
        return False
    probe = subprocess.run(
        [compiler, *[f"-I{d}" for d in include_dirs], "-E", "-x", "c", "-"],
        input=f"#include <{extension.header}>\n",
        capture_output=True,
        text=True,
    )
    return probe.returncode == 0


def _header_version_text(
    extension: CompressorExtension, compiler: str, include_dirs: tuple[Path, ...] = ()
) -> str:
    """snappy's version from snappy-stubs-public.h (beside snappy-c.h; C++ only, so read as text)."""
    preprocessed = subprocess.run(
        [compiler, *[f"-I{d}" for d in include_dirs], "-E", "-x", "c", "-"],
        input=f"#include <{extension.header}>\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = re.search(r'^# \d+ "([^"]*' + re.escape(extension.header) + ')"', preprocessed, re.M)
    stubs = Path(found.group(1)).with_name("snappy-stubs-public.h") if found else None
    if stubs is None or not stubs.exists():
        return "unknown version"
    text = stubs.read_text()
    parts = [re.search(rf"#define SNAPPY_{p} (\d+)", text) for p in ("MAJOR", "MINOR", "PATCHLEVEL")]
    return ".".join(m.group(1) for m in parts) if all(parts) else "unknown version"


def compile_extension(
    extension: CompressorExtension,
    source_root: Path,
    include_dir: Path,
    out: Path,
    compiler: str,
    library: LibrarySource = SYSTEM_SOURCE,
) -> None:
    """Compile one extension into `out`. With a fetched library, its header directory comes first, it links
    against that library and finds it at run time beside itself (run path $ORIGIN; the caller copies it
    there)."""
    stamp = include_dir / f"costlab_stamp_{extension.name}.c"
    library_version = _LIBRARY_VERSION_EXPR.get(extension.name) or json.dumps(
        f"{extension.name} {_header_version_text(extension, compiler, library.include_dirs)}"
    )
    stamp.write_text(_STAMP_C.format(header=extension.header, library_version=library_version))
    fetched = [f"-L{library.lib_dir}", "-Wl,-rpath,$ORIGIN"] if library.lib_dir is not None else []
    subprocess.run(
        [
            compiler,
            "-shared",
            "-fPIC",
            "-O2",
            f"-I{include_dir}",
            *[f"-I{d}" for d in library.include_dirs],
            "-o",
            str(out),
            str(source_root / extension.source),
            str(stamp),
            *fetched,
            f"-l{extension.link}",
        ],
        check=True,
        capture_output=True,
        text=True,
    )


# ---- Debian's packages, fetched without root -------------------------------------------------------


class FetchError(RuntimeError):
    """Debian's packages could not be fetched or unpacked here (the message says why)."""


APT_TIMEOUT_S = 300


def _run_apt(args: list[str], cwd: Path) -> None:
    try:
        subprocess.run(args, cwd=cwd, check=True, capture_output=True, text=True, timeout=APT_TIMEOUT_S)
    except subprocess.CalledProcessError as err:
        detail = [line for line in (err.stderr or "").splitlines() if line.startswith("E:")] or (
            err.stderr or ""
        ).strip().splitlines()[-1:]
        raise FetchError(f"`{' '.join(args[:1] + args[-2:])}` failed: {'; '.join(detail) or err}") from None
    except subprocess.TimeoutExpired:
        raise FetchError(f"`{' '.join(args[:1] + args[-2:])}` took over {APT_TIMEOUT_S} s") from None


def fetch_debian_packages(packages: list[str], cache: Path) -> tuple[Path, dict[str, str]]:
    """Debian `packages` unpacked under `cache`/root, as any user: `apt-get download` with apt's cache (and,
    when the system's package lists do not know them, its lists, refreshed by `apt-get update`) in
    `cache`/apt,
    then `dpkg-deb -x`. Returns the root and each package's version; a second call reuses the root."""
    root = cache / "root"
    record = root / "packages.json"
    if record.exists():
        versions = json.loads(record.read_text())
        if set(packages) <= set(versions):
            return root, {p: versions[p] for p in packages}
    missing_tools = [tool for tool in ("apt-get", "dpkg-deb") if shutil.which(tool) is None]
    if missing_tools:
        raise FetchError(
            f"no {' or '.join(missing_tools)} here (not Debian/Ubuntu), so Debian's packages cannot be "
            "fetched"
        )
    apt = cache / "apt"
    (apt / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    own_cache = ["-o", f"Dir::Cache={apt / 'cache'}"]
    own_lists = ["-o", f"Dir::State::Lists={apt / 'lists'}"]
    staging = Path(tempfile.mkdtemp(prefix=".fetching-", dir=cache))
    try:
        debs = staging / "debs"
        debs.mkdir()
        try:  # the system's lists, when an administrator has run apt-get update
            _run_apt(["apt-get", "-q", *own_cache, "download", *packages], debs)
        except FetchError:
            (apt / "lists" / "partial").mkdir(parents=True, exist_ok=True)
            _run_apt(
                ["apt-get", "-q", *own_cache, *own_lists, "-o", "Acquire::Languages=none", "update"], debs
            )
            _run_apt(["apt-get", "-q", *own_cache, *own_lists, "download", *packages], debs)
        versions: dict[str, str] = {}
        unpacked = staging / "root"
        for deb in sorted(debs.glob("*.deb")):
            fields = subprocess.run(
                ["dpkg-deb", "-f", str(deb), "Package", "Version"], check=True, capture_output=True, text=True
            ).stdout
            found = dict(line.split(": ", 1) for line in fields.splitlines() if ": " in line)
            versions[found["Package"]] = found["Version"]
            subprocess.run(
                ["dpkg-deb", "-x", str(deb), str(unpacked)], check=True, capture_output=True, text=True
            )
        if set(packages) - set(versions):
            raise FetchError(f"apt-get download gave no {', '.join(sorted(set(packages) - set(versions)))}")
        (unpacked / "packages.json").write_text(json.dumps(versions, indent=2) + "\n")
        if root.exists():
            shutil.rmtree(root)
        unpacked.rename(root)
    except (OSError, subprocess.CalledProcessError) as err:
        raise FetchError(f"Debian's packages could not be unpacked: {err}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return root, versions


def debian_source(extension: CompressorExtension, root: Path, versions: dict[str, str]) -> LibrarySource:
    """The fetched packages' header directory and the directory of the link-time library."""
    (library,) = sorted(root.glob(f"usr/lib/**/lib{extension.link}.so"))[:1] or [None]
    if library is None or not (library.parent / extension.soname).exists():
        raise FetchError(
            f"{extension.debian_package}/{extension.runtime_package} hold no lib{extension.link}.so / "
            f"{extension.soname}"
        )
    packages = {p: versions[p] for p in (extension.debian_package, extension.runtime_package)}
    description = (
        "Debian " + " and ".join(f"{p} {v}" for p, v in packages.items()) + " (apt-get download, no root)"
    )
    return LibrarySource(description, (root / "usr" / "include",), library.parent, packages)


def library_sources(
    names: tuple[str, ...], compiler: str, cache: Path, mode: str | None = None
) -> tuple[dict[str, LibrarySource], dict[str, str]]:
    """Per compressor: where its library comes from, or (second dict) why it cannot be had here."""
    mode = mode or libs_mode()
    found: dict[str, LibrarySource] = {}
    if mode != "debian":
        found = {n: SYSTEM_SOURCE for n in names if header_available(EXTENSIONS[n], compiler)}
    wanted = [n for n in names if n not in found]
    reasons: dict[str, str] = {}
    if wanted and mode == "system":
        reasons = {n: install_line([n]) for n in wanted}
    elif wanted:
        packages = [p for n in wanted for p in (EXTENSIONS[n].debian_package, EXTENSIONS[n].runtime_package)]
        try:
            root, versions = fetch_debian_packages(packages, cache)
            for name in wanted:
                source = debian_source(EXTENSIONS[name], root, versions)
                if not header_available(EXTENSIONS[name], compiler, source.include_dirs):
                    raise FetchError(f"{EXTENSIONS[name].header} not in {EXTENSIONS[name].debian_package}")
                found[name] = source
        except FetchError as err:
            reasons = {n: f"{err}; {install_line([n])}" for n in wanted if n not in found}
    return found, reasons


def build(
    dest: Path | None = None,
    version: str | None = None,
    names: tuple[str, ...] = tuple(EXTENSIONS),
    source_cache: Path | None = None,
    packages_cache: Path | None = None,
) -> dict[str, Any]:
    """Build the compressor extensions for WiredTiger `version` (default: the loaded module's)
    into `dest`, replacing what was there only once the new build is complete. Returns the
    manifest: what was built (path, library version and source, header version, sha256) and what is
    missing, with why."""
    module_version = wiredtiger_version()
    version = version or module_version
    dest = dest or extensions_dir()
    compiler = _compiler()
    if compiler is None:
        sources, reasons = {}, {n: NO_COMPILER_LINE for n in names}
    else:
        sources, reasons = library_sources(names, compiler, packages_cache or dest.parent / "debian")
    manifest: dict[str, Any] = {
        "wt_header_version": version,
        "wt_module_version": module_version,
        "built": {},
        "missing": [n for n in names if n not in sources],
        "missing_reasons": reasons,
    }
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".building-", dir=dest.parent))
    try:
        if sources:
            root = fetch_sources(version, source_cache or dest.parent / "wiredtiger-src")
            write_header(root, staging / "include", version)
            for name, library in sources.items():
                extension = EXTENSIONS[name]
                out = staging / f"libwiredtiger_{name}.so"
                if library.lib_dir is not None:  # the fetched library beside the extension (run path $ORIGIN)
                    shutil.copy(library.lib_dir / extension.soname, staging / extension.soname)
                compile_extension(extension, root, staging / "include", out, compiler, library)
                facts = read_stamp(out)
                manifest["built"][name] = {
                    "file": out.name,
                    "library_version": facts["library_version"],
                    "library_source": library.description,
                    "wt_header_version": facts["wt_header_version"],
                    "sha256": hashlib.sha256(out.read_bytes()).hexdigest(),
                    "config": extension.config or None,
                }
            shutil.rmtree(staging / "include")
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    extension_status.cache_clear()   # costlab.engine.wt probes again: its cache is keyed on what loads
    return manifest


# ---- checking and loading ------------------------------------------------------------------------


def read_stamp(library: Path) -> dict[str, str]:
    """The header WiredTiger version and library version compiled into `library`, read with
    dlopen (which runs no WiredTiger code: the extension's init is only called by wiredtiger_open)."""
    handle = ctypes.CDLL(str(library), mode=os.RTLD_LOCAL)
    try:
        major, minor, patch = (ctypes.c_int * 3).in_dll(handle, "costlab_wt_header_version")
        library_version = ctypes.c_char.in_dll(handle, "costlab_library_version")
    except ValueError:
        raise ExtensionMismatch(
            f"{library}: no costlab version stamp (not built by costlab.engine.extensions): "
            "not loaded; rebuild with `make wt-extensions`"
        ) from None
    text = ctypes.string_at(ctypes.addressof(library_version))
    return {"wt_header_version": f"{major}.{minor}.{patch}", "library_version": text.decode()}


def check_library(library: Path, module_version: str) -> dict[str, str]:
    """The stamp of `library` if it was built for `module_version`; ExtensionMismatch otherwise."""
    facts = read_stamp(library)
    if facts["wt_header_version"] != module_version:
        raise ExtensionMismatch(
            f"{library.name} was compiled against the WiredTiger {facts['wt_header_version']} header, but "
            "the "
            f"loaded wiredtiger module is {module_version}: not loaded (its WT_CONNECTION layout differs); "
            "rebuild with `make wt-extensions`"
        )
    return facts


@lru_cache(maxsize=1)
def extension_status(directory: str | None = None) -> dict[str, dict[str, Any]]:
    """Per compressor extension: {'state': 'loaded'|'missing'|'refused', ...} for this module.
    'loaded' entries have the path, load config and stamp; the others a `reason` naming the fix."""
    module_version = wiredtiger_version()
    root = Path(directory) if directory else extensions_dir()
    manifest_path = root / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"built": {}}
    status: dict[str, dict[str, Any]] = {}
    for name, extension in EXTENSIONS.items():
        built = manifest.get("built", {}).get(name)
        library = root / f"libwiredtiger_{name}.so"
        if built is None or not library.exists():
            reason = (manifest.get("missing_reasons") or {}).get(name) or install_line([name])
            status[name] = {"state": "missing", "reason": reason}
            continue
        try:
            facts = check_library(library, module_version)
        except ExtensionMismatch as err:
            status[name] = {"state": "refused", "reason": str(err)}
            continue
        status[name] = {
            "state": "loaded",
            "path": str(library),
            "config": extension.config or None,
            **facts,
            "library_source": built.get("library_source"),
            "sha256": built.get("sha256"),
        }
    return status


def compressors_loaded(directory: str | None = None) -> dict[str, str]:
    """What the engine lab will load, per compressor extension: the library's file, version and SHA-256,
    or that it is absent (the nearest built-in compressor is used). Part of every engine job's
    identity (costlab.engine.job_keys, in every engine rule's params), so `make wt-extensions` reruns
    exactly the engine jobs;
    it used to leave 13 findings saying "snappy not available here; lz4 measured" after snappy was built.

    Reads the build's manifest only (no WiredTiger import: the Snakefile calls it on every run)."""
    root = Path(directory) if directory else extensions_dir()
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        manifest = {}
    loaded: dict[str, str] = {}
    for name in EXTENSIONS:
        built = (manifest.get("built") or {}).get(name) if isinstance(manifest, dict) else None
        library = root / f"libwiredtiger_{name}.so"
        if isinstance(built, dict) and library.exists():
            loaded[name] = (f"{library.name} ({built.get('library_version')}, "
                            f"WiredTiger {built.get('wt_header_version')} "
                            f"header, sha256 {built.get('sha256')})")
        else:
            loaded[name] = "absent: the nearest built-in compressor substitutes"
    return loaded


def open_config_extensions(directory: str | None = None) -> str:
    """The `extensions=[...]` part of a wiredtiger_open config: every verified library ('' if none)."""
    loaded = []
    for entry in extension_status(directory).values():
        if entry["state"] == "loaded":
            config = f"=(config=[{entry['config']}])" if entry["config"] else ""
            loaded.append(f"{entry['path']}{config}")
    return f"extensions=[{','.join(loaded)}]" if loaded else ""


def main(argv: list[str] | None = None) -> int:
    """`build`: build what is missing or was built for another WiredTiger (a current build is kept
    and says nothing); `build --force` rebuilds. Never fails the set-up: without the libraries it
    prints the one line saying what to install."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] != ["build"] or set(args[1:]) - {"--force"}:
        print("usage: python -m costlab.engine.extensions build [--force]", file=sys.stderr)
        return 2
    status = extension_status()
    if "--force" not in args and all(entry["state"] == "loaded" for entry in status.values()):
        return 0
    for entry in status.values():
        if entry["state"] == "refused":
            print(entry["reason"].split(": not loaded")[0] + ": rebuilding", file=sys.stderr)
    try:
        manifest = build()
    except (subprocess.CalledProcessError, OSError, ValueError) as err:
        detail = (getattr(err, "stderr", None) or "").strip().splitlines()
        print(
            f"WiredTiger compressor extensions not built ({err}{': ' + detail[-1] if detail else ''}); "
            "the engine lab uses the nearest built-in compressor, labelled",
            file=sys.stderr,
        )
        return 0
    for name, facts in manifest["built"].items():
        print(
            f"WiredTiger {facts['wt_header_version']} {name} extension built ({facts['library_version']}; "
            f"{facts['library_source']})"
        )
    for reason in dict.fromkeys(manifest["missing_reasons"].values()):  # no compiler: one line for both
        print(reason, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
