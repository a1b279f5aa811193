"""What every study's engine run shares: a scratch WiredTiger home and the settings a job opens with."""
from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from costlab.engine.connection import EngineSettings


@contextmanager
def engine_home(workdir: str | Path | None, label: str) -> Iterator[Path]:
    """A scratch WiredTiger home under `workdir` (the system's temp dir if None), removed afterwards
    (the journal of a big $push run is GBs)."""
    base = Path(workdir) if workdir else None
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix=f"costlab-engine-{label}-", dir=base))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


def engine_settings(engine_config: dict, cache_mb: int = 1024) -> tuple[EngineSettings, dict[str, Any]]:
    """Settings with the compressors `engine.*` wants where this WiredTiger has them (a substitute
    otherwise, recorded), and that resolution (wanted, used, note) for the rows and provenance."""
    from costlab.engine.provenance import resolved_compressors

    resolved = resolved_compressors(engine_config)
    settings = EngineSettings(cache_mb=cache_mb, journal_compressor=resolved["journal_compressor"],
                              block_compressor=resolved["block_compressor"])
    return settings, resolved
