"""appversions on the engine lab: storage per event against the number of events and the checkpoint spacing.

Not a speed benchmark (`make bench` does not run it): it prints one JSON line per (events per year,
version, checkpoint spacing) with storage and index bytes per event, for docs/engine-lab.md.

    python benchmarks/engine_convergence.py 5000,20000 appV1,appV5R3,appV6R3,appV6R4 60000,6000 [512,2]

The fourth argument is the WiredTiger cache sizes (MB) to try; `article` (the default) is the job's
default, the article's 1.5 GB x events / 500 M with WiredTiger's 1 MB minimum (engine_cache_mb).
"""
from __future__ import annotations

import json  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import common  # noqa: F401  (puts the repository on sys.path)

from costlab.appversions.engine import engine_cache_mb, measure_version, write_engine_events  # noqa: E402


def main(per_year: str = "5000,20000", versions: str = "appV1,appV5R3,appV6R3,appV6R4",
         spacings: str = "60000,6000", caches_mb: str = "article") -> None:
    events_dir = Path(tempfile.mkdtemp(prefix="costlab-convergence-events-"))
    for events_per_year in (int(x) for x in per_year.split(",")):
        events_path = events_dir / f"events_{events_per_year}.parquet"
        events = write_engine_events(events_per_year, 42, "authors", events_path)
        for name in versions.split(","):
            for every, cache_mb in ((int(x), engine_cache_mb(events, None if c == "article" else int(c)))
                                    for x in spacings.split(",") for c in caches_mb.split(",")):
                scratch = Path(tempfile.mkdtemp(prefix="costlab-convergence-"))
                try:
                    started = time.process_time()
                    row = measure_version(name, events_path, scratch / "wt", cache_mb=cache_mb,
                                          checkpoint_every=every)
                finally:
                    shutil.rmtree(scratch, ignore_errors=True)
                print(
                    json.dumps(
                        {
                            "events": events,
                            "version": name,
                            "checkpoint_every": every,
                            "cache_mb": cache_mb,
                            "checkpoints": row["checkpoints"],
                            "storage_bytes_per_event": round(row["storage_bytes"] / events, 2),
                            "index_bytes_per_event": round(row["index_bytes"] / events, 2),
                            "storage_over_data": round(row["storage_bytes"] / row["data_bytes"], 3),
                            "cpu_s": round(time.process_time() - started, 1),
                        }
                    ),
                    flush=True,
                )
    shutil.rmtree(events_dir, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
