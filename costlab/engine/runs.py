"""What every study's engine run shares: a scratch WiredTiger home and the settings a job opens with."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from costlab.engine.connection import OPEN_ENGINES, EngineSettings
from costlab.engine.provenance import resolved_compressors
from costlab.io import DiskFull, is_disk_full
from costlab.procs import sigterm_raises, start_time

HOME_PREFIX = "costlab-engine-"
# costlab-engine-<label>-<owner pid>.<owner start time>-<random>: whose home it is, in its name
_OWNER = re.compile(r"-(\d+)\.(\d+)-[^-]+$")


def sweep_orphan_homes(base: Path) -> list[Path]:
    """Remove the scratch homes under `base` whose owner process is gone (killed with -9, the OOM
    killer, a lost node): a pid that no longer runs, or runs with another start time (reused)."""

    removed: list[Path] = []
    if start_time(os.getpid()) is None:   # no /proc: owners cannot be told apart, sweep nothing
        return removed
    for home in base.glob(f"{HOME_PREFIX}*"):
        owner = _OWNER.search(home.name)
        if owner is None or not home.is_dir():
            continue
        pid, started = int(owner.group(1)), int(owner.group(2))
        if start_time(pid) != started:
            shutil.rmtree(home, ignore_errors=True)
            removed.append(home)
    return removed


def close_engines_under(home: Path) -> None:
    """Close every WiredTiger connection of this process whose home is `home` or inside it."""

    for engine in list(OPEN_ENGINES):
        if engine.home == home or home in engine.home.parents:
            try:
                engine.close()
            except Exception:   # noqa: BLE001 - the home is removed next; a close error must not hide the job's
                pass


@contextmanager
def engine_home(workdir: str | Path | None, label: str) -> Iterator[Path]:
    """A scratch WiredTiger home under `workdir` (the system's temp dir if None), removed afterwards
    (the journal of a big $push run is GBs), on SIGTERM too; homes of dead owners are swept first."""

    base = Path(workdir) if workdir else Path(tempfile.gettempdir())
    base.mkdir(parents=True, exist_ok=True)
    sweep_orphan_homes(base)
    owner = f"{os.getpid()}.{start_time(os.getpid()) or 0}"
    with sigterm_raises():
        home = Path(tempfile.mkdtemp(prefix=f"{HOME_PREFIX}{label}-{owner}-", dir=base))
        try:
            yield home
        except Exception as err:
            if is_disk_full(err, base):
                # WiredTiger panics on a full disk (WT_PANIC, "No space left on device", dozens of lines):
                # say it in one line, naming where it was writing
                said = str(err).splitlines()[0][:120] if str(err) else type(err).__name__
                raise DiskFull(f"costlab: disk full writing {home} (WiredTiger: {said}); free space there "
                               "or set engine.workdir to a larger file system, and rerun") from err
            raise
        finally:
            close_engines_under(home)   # a connection still open keeps writing into the home being removed
            shutil.rmtree(home, ignore_errors=True)


def engine_settings(engine_config: dict, cache_mb: int = 1024) -> tuple[EngineSettings, dict[str, Any]]:
    """Settings with the compressors `engine.*` wants where this WiredTiger has them (a substitute
    otherwise, recorded), and that resolution (wanted, used, note) for the rows and provenance."""

    resolved = resolved_compressors(engine_config)
    settings = EngineSettings(cache_mb=cache_mb, journal_compressor=resolved["journal_compressor"],
                              block_compressor=resolved["block_compressor"])
    return settings, resolved
