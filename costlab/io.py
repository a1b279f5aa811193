"""Writing results so that a partial file never looks complete: temp file in the same folder, then rename."""
from __future__ import annotations

import errno
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import polars as pl

from costlab.digests import record as record_digest
from costlab.partials import owner as _owner
from costlab.partials import sweep_partial_files, sweep_results  # noqa: F401 - costlab.io's API too


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


class DiskFull(OSError):
    """Writing a result ran out of space; the message names the file."""


LOW_SPACE_BYTES = 1 << 20
_FULL_WORDS = ("no space left on device", "os error 28", "disk quota exceeded", "os error 122")


def is_disk_full(err: BaseException, directory: Path) -> bool:
    """ENOSPC/EDQUOT, a writer's message carrying it, or any write error on a file system without space.

    Writers wrap the errno in their own words (polars: "Invalid thrift: transport error"), so
    the free space of the target's file system decides when the error itself does not say.
    """

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
