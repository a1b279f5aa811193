"""Writing results so that a partial file never looks complete: temp file in the same folder, then rename."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import polars as pl

from costlab.digests import record as record_digest


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep_partial_files(path.parent, path.name)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{_owner()}.", suffix=".tmp")
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; results are ordinary files
    try:
        yield Path(tmp)
        os.replace(tmp, path)
        record_digest(path)
    except Exception as err:
        if is_disk_full(err, path.parent):
            raise DiskFull(
                f"costlab: disk full writing {path} ({_free(path.parent)} free on its file system); "
                "nothing was written there: free space and rerun"
            ) from err
        raise
    finally:
        Path(tmp).unlink(missing_ok=True)


# .<name>.<owner pid>.<owner start time>.<random>.tmp: whose temporary file it is, in its name. An older
# costlab's .<name>.<random>.tmp carries no owner; digests' .<name>.<pid>.tmp carries the pid only.
_PARTIAL = (re.compile(r"^\.(?P<name>.+?)\.(?:(?P<pid>\d+)\.(?P<started>\d+)\.)?[a-z0-9_]{8}\.tmp$"),
            re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)(?P<started>)\.tmp$"))


def _owner() -> str:
    from costlab.procs import start_time

    return f"{os.getpid()}.{start_time(os.getpid()) or 0}"


def _owner_gone(pid: str | None, started: str | None) -> bool:
    from costlab.procs import pid_alive, start_time

    if pid is None:
        return True     # an older costlab's, by a job that is not running (Snakemake locks the directory)
    if started and start_time(os.getpid()) is not None:
        return start_time(int(pid)) != int(started)     # another start time: the pid was reused
    return not pid_alive(int(pid))


def sweep_partial_files(directory: str | Path, name: str | None = None) -> list[Path]:
    """Remove the temporary files (`.<name>.….tmp`) in `directory` whose writer is gone: a job stopped by
    `kill -9`, the OOM killer or a lost node, or an older costlab's job that SIGTERM ended where it
    stood. Only those of the file `name` when given (what atomic_path does before writing it)."""
    removed = []
    try:
        candidates = [Path(entry.path) for entry in os.scandir(directory)
                      if entry.name.startswith(f".{name}." if name else ".") and entry.name.endswith(".tmp")]
    except OSError:
        return removed
    for candidate in candidates:
        match = _PARTIAL[0].match(candidate.name) or _PARTIAL[1].match(candidate.name)
        if match is None or (name is not None and match["name"] != name):
            continue
        if _owner_gone(match["pid"], match["started"]):
            candidate.unlink(missing_ok=True)
            removed.append(candidate)
    return removed


def sweep_results(results: str | Path = "results") -> list[Path]:
    """sweep_partial_files in every folder under `results` (the next run's start: rules/common.smk)."""
    removed: list[Path] = []
    for folder, _, files in os.walk(results):
        if any(f.startswith(".") and f.endswith(".tmp") for f in files):
            removed += sweep_partial_files(folder)
    return removed


class DiskFull(OSError):
    """Writing a result ran out of space; the message names the file."""


LOW_SPACE_BYTES = 1 << 20
_FULL_WORDS = ("no space left on device", "os error 28", "disk quota exceeded", "os error 122")


def is_disk_full(err: BaseException, directory: Path) -> bool:
    """ENOSPC/EDQUOT, a writer's message carrying it, or any write error on a file system without space.

    Writers wrap the errno in their own words (polars: "Invalid thrift: transport error"), so
    the free space of the target's file system decides when the error itself does not say.
    """
    import errno

    if isinstance(err, DiskFull):
        return False
    if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if any(word in str(err).lower() for word in _FULL_WORDS):
        return True
    try:
        return shutil.disk_usage(directory).free < LOW_SPACE_BYTES
    except OSError:
        return False


def _free(directory: Path) -> str:
    try:
        return f"{shutil.disk_usage(directory).free:,} bytes"
    except OSError:
        return "unknown space"


def write_parquet(frame: pl.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        frame.write_parquet(tmp)


def write_csv(frame: pl.DataFrame, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        frame.write_csv(tmp)
