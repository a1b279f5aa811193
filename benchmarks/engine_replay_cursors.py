"""appversions' engine replay with raw cursor access (costlab.engine.cursors) against the bindings' packer.

Not a speed target (`make bench` does not run it): it prints, per version, the CPU seconds of one
engine run (measure_version) the way it runs now, and with costlab.engine.cursors' calls routed back
through the bindings' set_key / set_value / get_key / get_value (what the engine did before), and
checks both leave the same data bytes and documents.

    python benchmarks/engine_replay_cursors.py [events_per_year] [versions] [cache_mb]
    python benchmarks/engine_replay_cursors.py 10000 appV1,appV5R3,appV6R3 1
"""
from __future__ import annotations

import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402
from unittest import mock  # noqa: E402

import common  # noqa: F401  (puts the repository on sys.path)

from costlab.appversions.engine import measure_version, write_engine_events  # noqa: E402
from costlab.engine import index, records  # noqa: E402


@contextmanager
def bindings_packer():
    """costlab.engine.cursors' helpers replaced, where index.py and records.py call them, by the bindings'
    own calls."""
    calls = {"set_key_bytes": lambda c, k: c.set_key(k), "set_key_int": lambda c, k: c.set_key(k),
             "set_value_bytes": lambda c, v: c.set_value(v), "key_bytes": lambda c: c.get_key(),
             "value_bytes": lambda c: c.get_value()}
    patches = [mock.patch.object(module, name, call) for module in (index, records)
               for name, call in calls.items() if hasattr(module, name)]
    for patch in patches:
        patch.start()
    try:
        yield
    finally:
        for patch in patches:
            patch.stop()


def _run(name: str, events_path: Path, cache_mb: int) -> tuple[float, dict]:
    scratch = Path(tempfile.mkdtemp(prefix="costlab-replay-"))
    try:
        started = time.process_time()
        row = measure_version(name, events_path, scratch / "wt", cache_mb=cache_mb)
        return time.process_time() - started, row
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(per_year: str = "10000", versions: str = "appV1,appV5R3,appV6R3", cache_mb: str = "1") -> None:
    events_dir = Path(tempfile.mkdtemp(prefix="costlab-replay-events-"))
    try:
        events_path = events_dir / "events.parquet"
        events = write_engine_events(int(per_year), 42, "authors", events_path)
        for name in versions.split(","):
            with bindings_packer():
                before, old = _run(name, events_path, int(cache_mb))
            after, new = _run(name, events_path, int(cache_mb))
            same = (old["data_bytes"], old["documents"]) == (new["data_bytes"], new["documents"])
            print(json.dumps({"events": events, "version": name, "cache_mb": int(cache_mb),
                              "cpu_s_bindings_packer": round(before, 2), "cpu_s_raw_cursors": round(after, 2),
                              "ratio": round(after / before, 3), "same_data": same}), flush=True)
    finally:
        shutil.rmtree(events_dir, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
