"""Server metrics during a load test: the sampler (serverStatus, docker stats), the series drawn, "not
reported"."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import polars as pl
import pytest

from costlab.appversions.figures import NOT_REPORTED, metric_series, metrics_row
from costlab.appversions.loadtest import write_server_metrics
from costlab.measure.sampler import SERVER_METRICS, ServerSampler, container_stats


def test_docker_stats_are_read_as_cpu_seconds_memory_and_block_io():
    stats = {
        "cpu_stats": {"cpu_usage": {"total_usage": 2_500_000_000}},
        "memory_stats": {"usage": 1_048_576},
        "blkio_stats": {
            "io_service_bytes_recursive": [
                {"op": "read", "value": 4096},
                {"op": "Write", "value": 512},
                {"op": "read", "value": 4096},
            ]
        },
    }
    assert container_stats(stats) == {
        "cpu_seconds": 2.5,
        "memory_bytes": 1_048_576.0,
        "block_read_bytes": 8192.0,
        "block_written_bytes": 512.0,
    }
    # cgroup v2 engines may give no block I/O list: not reported, not zero
    assert container_stats({"cpu_stats": {}, "memory_stats": {}})["block_read_bytes"] is None


def test_the_sampler_keeps_every_sample_and_nulls_for_what_is_not_reported(server_uri, real_mongod, tmp_path):
    calls = []
    with ServerSampler(server_uri, 0.2, container_stats_source=lambda: calls.append(1) or {}) as sampler:
        time.sleep(0.5)
    samples = sampler.frame()
    server = samples.filter(pl.col("source") == "serverStatus")
    assert server["metric"].n_unique() == len(SERVER_METRICS) and server.height >= 3 * len(SERVER_METRICS)
    assert server.filter(pl.col("metric") == "opcounters.command")["value"].drop_nulls().len() >= 3
    cache = server.filter(pl.col("metric") == "wiredTiger.cache.bytes read into cache")["value"]
    if not real_mongod:   # the stand-in has no wiredTiger section: every sample says so with a null
        assert cache.null_count() == cache.len()
    docker = samples.filter(pl.col("source") == "docker stats")
    assert len(calls) >= 3 and docker["value"].null_count() == docker.height   # {} reports nothing
    # On the test's time axis: t_s from its start
    started = samples["at"].min() + timedelta(seconds=0.1)
    written = write_server_metrics(samples, started.isoformat(), tmp_path / "m.parquet")
    assert written["t_s"].min() == pytest.approx(-0.1, abs=0.002)
    assert pl.read_parquet(tmp_path / "m.parquet").columns == ["at", "source", "metric", "value", "t_s"]


def test_counters_are_drawn_as_rates_and_missing_panels_say_not_reported():
    import altair as alt

    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    rows = [
        {"at": at, "source": "serverStatus", "metric": metric, "value": value, "t_s": t, "version": "appV6R3"}
        for t, ops in ((0.0, 10.0), (2.0, 30.0), (4.0, 90.0))
        for metric, value in (("opcounters.update", ops), ("wiredTiger.cache.bytes read into cache", None))
    ]
    metrics = pl.DataFrame(rows, schema_overrides={"value": pl.Float64})
    series = metric_series(metrics, ("appV6R3",))
    updates = series.filter(pl.col("series") == "update")["value"].to_list()
    assert updates == [None, 10.0, 30.0]  # (30 - 10) / 2 s, (90 - 30) / 2 s
    spec = json.dumps(
        alt.vconcat(metrics_row(metrics, ("appV6R3",), alt.X("time:Q"), 1.0, alt.Scale())).to_dict()
    )
    assert f"WiredTiger cache (MB/s): {NOT_REPORTED} by this server" in spec
    assert "operations (opcounters, per s)" in spec
