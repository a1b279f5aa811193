"""The engine lab's update compiler against an earlier one: one version's engine-lab run, CPU seconds.

    git show a58a0e4:costlab/engine/update.py > /tmp/old_update.py
    python benchmarks/engine_updates_vs_previous.py old appV6R2 /tmp/old_update.py
    python benchmarks/engine_updates_vs_previous.py new appV6R2

Not a bench_* file (make bench): it needs the earlier module's file. benchmarks/README.md has the numbers.
"""
from __future__ import annotations

import importlib.util
import shutil
import sys
import tempfile
import time
from pathlib import Path

import costlab.engine.update as update
from costlab.appversions.engine import measure_version, write_engine_events


def main(which: str, name: str, previous: str | None = None) -> None:
    if which == "old":
        spec = importlib.util.spec_from_file_location("previous_update", previous)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        update.apply_statement = module.apply_statement
    tmp = Path(tempfile.mkdtemp())
    try:
        path = tmp / "events.parquet"
        write_engine_events(2000, 3, "authors", path)
        start = time.process_time()
        row = measure_version(name, path, tmp / "wt", cache_mb=32, workers=1)
        print(which, name, "CPU s", round(time.process_time() - start, 2), "events", row["events"],
              "data_bytes", row["data_bytes"])
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main(*sys.argv[1:])
