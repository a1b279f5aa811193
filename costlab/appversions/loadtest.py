"""The load-test job of one app version: its server, its plan, its workers, its raw rows and summary.

The load test in four roles: plan (loadtest_plan.py: the published method at a configurable time
scale), workers (loadtest_workers.py, shared with the authors' driver, closedloop.py), summary
(loadtest_summary.py) and this job, which runs them on the version's loaded data directory.
"""
from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import polars as pl

from costlab.appversions.events import keys_for_users, users_for
from costlab.appversions.load import read_marker, worker_uri
from costlab.appversions.loadtest_plan import LoadTestPlan, loadtest_requests, new_events_2020, schedule
from costlab.appversions.loadtest_summary import describe_operations
from costlab.appversions.loadtest_workers import run_loadtest
from costlab.appversions.params import AuthorsLoadtestParams, LoadtestParams
from costlab.appversions.regime import measure_regime
from costlab.appversions.versions import get_version
from costlab.io import write_parquet
from costlab.jobs import RunFacts
from costlab.measure.sampler import ServerSampler, docker_stats_source
from costlab.measure.storage import checkpointed_coll_stats
from costlab.server import measuring_job

STORAGE_FIELDS = ("count", "size", "storageSize", "totalIndexSize")


def _storage(db, collection: str) -> dict:
    """collStats sizes after a checkpoint (the bytes on disk), and whether the checkpoint was taken."""

    stats, compressor, status = checkpointed_coll_stats(db, collection)
    return {**{f: stats.get(f) for f in STORAGE_FIELDS}, "block_compressor": compressor, "checkpoint": status,
            "at": datetime.now(timezone.utc).isoformat()}


@contextmanager
def loadtest_server(params: LoadtestParams | AuthorsLoadtestParams, run: RunFacts, version_name: str,
                    data_dir: str | Path, provenance_path: str | Path, extra: dict, job: str,
                    metrics_path: str | Path | None = None) -> Iterator:
    """The server of one load-test job on the version's loaded data directory (measuring_job),
    with what the test starts from recorded in `extra`: documents_before, the regime (working set
    against cache) and dataset_as_loaded (False after an earlier load test added 2020 events).

    metrics_path: while the job holds the server, its serverStatus (and, on the docker backend, the
    container's stats) are sampled every `loadtest.metrics_seconds` (costlab.measure.sampler) and
    written there (`t_s` from extra["started_at"], the test's start); extra["storage"] holds the
    collection's collStats sizes at the start and the end.
    """

    version = get_version(version_name)
    marker = read_marker(data_dir)
    with measuring_job(run, params.loadtest["profile"], provenance_path, data_dir=data_dir, job=job,
                       extra=extra, study="appversions", dataset=version_name, data=params.data) as server:
        collection = server.client[server.database][version.collection_name]
        documents_before = collection.estimated_document_count()
        if documents_before == 0:
            raise RuntimeError(
                f"collection {server.database}.{version.collection_name} is empty on this server: "
                f"load it first (snakemake -R appversions_load, or delete {data_dir})"
            )
        extra["documents_before"] = documents_before
        # The article's findings rest on a working set larger than the cache: record which regime this is.
        extra["regime"] = measure_regime(server.client, server.database, version.collection_name)
        # A previous load test on this data directory already added 2020 events: say so.
        extra["dataset_as_loaded"] = documents_before == marker.get("documents")
        if metrics_path is None:
            yield server
            return
        db = server.client[server.database]
        extra["storage"] = {"start": _storage(db, version.collection_name)}
        container = server.applied.get("container") if server.backend == "docker" else None
        sampler = ServerSampler(
            worker_uri(server, run.server),
            float(params.loadtest["metrics_seconds"]),
            docker_stats_source(container) if container else None,
        )
        with sampler:
            yield server
        extra["storage"]["end"] = _storage(db, version.collection_name)
        extra["metrics"] = {
            "interval_s": sampler.interval_s,
            "container_stats": bool(container),
            "errors": sampler.errors[:10],
        }
        write_server_metrics(sampler.frame(), extra.get("started_at"), metrics_path)


def write_server_metrics(samples: pl.DataFrame, started_at: str | None, path: str | Path) -> pl.DataFrame:
    """The samples with t_s, seconds from the load test's start (negative before it), written to path."""

    start = (
        datetime.fromisoformat(started_at)
        if started_at
        else (samples["at"].min() if samples.height else None)
    )
    frame = samples.with_columns(
        ((pl.col("at") - pl.lit(start, dtype=pl.Datetime("ms", "UTC"))).dt.total_milliseconds() / 1000).alias(
            "t_s"
        )
        if start is not None
        else pl.lit(None, dtype=pl.Float64).alias("t_s")
    )
    write_parquet(frame, path)
    return frame


def loadtest_job(
    params: LoadtestParams,
    run: RunFacts,
    version_name: str,
    data_dir: str | Path,
    raw_path: str | Path,
    provenance_path: str | Path,
    metrics_path: str | Path | None = None,
) -> dict:
    """The load test of one version on its loaded data directory; raw rows to raw_path, the server's
    metrics over the test to metrics_path (loadtest_server).

    The returned facts' "operations" is what the job's log says: how many operations ran, failed or never
    started. Whether each step met its target is the tables' judgement (appversions_tables, at
    appversions.loadtest.tolerance and bin_seconds, which are its params, not this job's: another tolerance
    must not rerun a load test), and its log says it per version."""

    data, lt = params.data, params.loadtest
    version = get_version(version_name)
    plan = LoadTestPlan.from_config(lt)
    needed = schedule(plan)["upsert"].height * plan.batch_size
    plan_schedule, upsert_events, reports = loadtest_requests(
        plan,
        new_events_2020(data["events_per_year"], data["seed"], max(needed, 1)),
        keys_for_users(users_for(data["events_per_year"])).to_numpy(),
        seed=data["seed"],
    )
    extra: dict = {
        "study": "appversions",
        "step": "loadtest",
        "version": version_name,
        "plan": {
            "phase_seconds": plan.phase_seconds,
            "warmup_seconds": plan.warmup_seconds,
            "upsert_rates": list(plan.upsert_rates),
            "report_rates": list(plan.report_rates),
            "batch_size": plan.batch_size,
            "rate_scale": plan.rate_scale,
        },
        "latencies": {
            "call_ms": "each call's own duration (primary, as the article timed it)",
            "from_intended_ms": "from the operation's intended start (open loop)",
        },
    }
    with loadtest_server(
        params,
        run,
        version_name,
        data_dir,
        provenance_path,
        extra,
        f"appversions_loadtest_{version_name}",
        metrics_path,
    ) as server:
        raw, facts = run_loadtest(worker_uri(server, run.server), server.database, version.collection_name,
                                  version_name, plan, upsert_events, reports, plan_schedule,
                                  upsert_workers=lt["upsert_workers"], report_workers=lt["report_workers"])
        extra.update(facts)
        write_parquet(raw, raw_path)
    extra["operations"] = describe_operations(raw)
    return extra
