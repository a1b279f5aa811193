"""The load test's workers: one process per worker, started together, each sending its operations.

Shared by both drivers: the scheduled, open-loop one (`run_loadtest`, `worker_main` here) and the
authors' closed-loop one (closedloop.py), which run their workers through `run_worker_processes`
and use `sleep_until`, `error_text` and `mark_lost`.

Two latencies per operation: `call_ms`, the call's own duration (what the article timed:
"queueing shows up as lower rates, not longer calls") is the primary one; `from_intended_ms`,
from the intended start to the end, is the second, labelled one (it includes the wait for a free
worker, so a backlog shows in it). An operation that has not started when the test ends is
recorded as `skipped`. For each operation the worker also records why it was late:
`queue_wait_ms` (the worker was still busy with its previous operation, i.e. waiting on the
server) and `client_lag_ms` (the worker was free but started late: its own scheduling / CPU).
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import queue
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import polars as pl
from pymongo import MongoClient
from pymongo.errors import ConnectionFailure

from costlab.appversions.loadtest_plan import KINDS, RAW_COLUMNS, LoadTestPlan, assign_workers
from costlab.appversions.statements import send_update_statements, update_statements
from costlab.appversions.versions import get_version
from costlab.procs import die_with_parent
from costlab.progress import progress
from costlab.server.connection import ConnectionLost, PoolWatch, display_uri, lost_message


def lateness(intended_s: np.ndarray, start_s: np.ndarray, previous_end_s: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray]:
    """Split an operation's late start into (queue_wait_s, client_lag_s).

    queue_wait: the worker was still busy with its previous operation at the intended time
    (it waited on the server). client_lag: the rest of the delay, after the worker was free
    (the client's own scheduling / CPU). previous_end_s is -inf for a worker's first operation.
    """
    free_at = np.maximum(intended_s, previous_end_s)
    queue_wait = free_at - intended_s
    client_lag = np.maximum(start_s - free_at, 0.0)
    return queue_wait, client_lag


@dataclass
class WorkerSpec:
    kind: str
    worker: int
    version: str
    uri: str
    database: str
    collection: str
    op_index: np.ndarray
    intended_s: np.ndarray
    payload_path: str          # parquet: upsert events (in batch order) or report requests
    batch_size: int
    test_seconds: float
    out_path: str


def sleep_until(deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining > 0:
        time.sleep(remaining)


def error_text(exc: Exception) -> str:
    details = getattr(exc, "details", None)
    if isinstance(details, dict) and details.get("writeErrors"):
        first = details["writeErrors"][0]
        return (
            f"{type(exc).__name__}: {len(details['writeErrors'])} write errors, first: {first.get('errmsg')}"[
                :300
            ]
        )
    return f"{type(exc).__name__}: {exc}"[:300]


def worker_main(spec: WorkerSpec, ready_queue, go_event, t0_value, parent_pid: int | None = None) -> None:
    """One worker process: connect, prepare, wait for the common start, run its operations."""

    if parent_pid is not None:
        die_with_parent(parent_pid)  # a job killed with -9 must not leave workers sending

    version = get_version(spec.version)
    watch = PoolWatch()  # a cleared pool: the driver lost the server (and may have reconnected)
    client = MongoClient(spec.uri, maxPoolSize=2, event_listeners=[watch])
    try:
        collection = client[spec.database][spec.collection]
        client.admin.command("ping")
        # This worker's own requests, in its operations' order (split by the parent).
        payload = pl.read_parquet(spec.payload_path)
        if spec.kind == "report":
            keys = payload["key"].to_list()
            end_dates = payload["end_date"].to_list()
        n = len(spec.op_index)
        start = np.full(n, np.nan)
        end = np.full(n, np.nan)
        status = np.array(["skipped"] * n, dtype=object)
        errors: list[str | None] = [None] * n
        ready_queue.put(spec.worker)
        go_event.wait()
        t0 = t0_value.value
        cutoff = t0 + spec.test_seconds
        cpu_before = time.process_time()
        for i in range(n):
            # Build the request before its start time so building is not part of the latency.
            if spec.kind == "upsert":
                statements = update_statements(version, payload.slice(i * spec.batch_size, spec.batch_size))
            sleep_until(t0 + spec.intended_s[i])
            started = time.monotonic()
            if started >= cutoff:
                break  # the test is over: this and later operations stay `skipped`
            try:
                if spec.kind == "upsert":
                    # Raises BulkUpsertError on writeErrors / writeConcernError in the reply.
                    send_update_statements(collection, statements, spec.version)
                else:
                    version.get_reports(collection, keys[i], end_dates[i])
                status[i] = "ok"
            except ConnectionFailure as exc:
                # Not a server being slow: the measurement is void. Say why and stop at once.
                mark_lost(spec, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
                raise SystemExit(3) from None
            except Exception as exc:  # recorded per operation; the summary counts them
                status[i] = "error"
                errors[i] = error_text(exc)
            if watch.cleared:
                mark_lost(spec, "the driver reconnected to the server during the test")
                raise SystemExit(3)
            start[i] = started - t0
            end[i] = time.monotonic() - t0
        cpu_seconds = time.process_time() - cpu_before
        if watch.cleared:
            mark_lost(spec, "the driver reconnected to the server during the test")
            raise SystemExit(3)
    finally:
        client.close()
    frame = pl.DataFrame(
        {
            "op_index": spec.op_index,
            "intended_s": spec.intended_s,
            "start_s": start,
            "end_s": end,
            "status": status.astype(str),
            "error": errors,
        },
        schema_overrides={"error": pl.Utf8},
    ).with_columns(pl.lit(spec.worker).alias("worker"), pl.lit(spec.kind).alias("kind"))
    frame = frame.with_columns(pl.col("start_s").fill_nan(None), pl.col("end_s").fill_nan(None))
    frame.write_parquet(spec.out_path)
    Path(spec.out_path).with_suffix(".json").write_text(json.dumps({"cpu_seconds": cpu_seconds}))


def mark_lost(spec: WorkerSpec, reason: str) -> None:
    """Leave the reason a worker lost the server where the parent looks for it."""
    Path(spec.out_path).with_suffix(".lost").write_text(reason)


def lost_reason(specs: list[WorkerSpec]) -> str | None:
    for spec in specs:
        path = Path(spec.out_path).with_suffix(".lost")
        if path.exists():
            return f"{spec.kind} worker {spec.worker}: {path.read_text()}"
    return None


def _finish_raw(
    frame: pl.DataFrame, version: str, batch_size: int, plan_schedule: dict[str, pl.DataFrame]
) -> pl.DataFrame:
    """Add phase/step, latency, service time and the lateness split (per worker, in intended order)."""
    steps = pl.concat(
        [
            plan_schedule[kind].select("op_index", "phase", "step").with_columns(pl.lit(kind).alias("kind"))
            for kind in KINDS
        ]
    )
    frame = frame.join(steps, on=["kind", "op_index"], how="left").sort(["kind", "worker", "intended_s"])
    previous_end = (
        frame.select(pl.col("end_s").shift(1).over(["kind", "worker"]))
        .to_series()
        .fill_null(-np.inf)
        .to_numpy()
    )
    start = frame["start_s"].fill_null(np.nan).to_numpy()
    intended = frame["intended_s"].to_numpy()
    queue_wait, client_lag = lateness(intended, start, np.nan_to_num(previous_end, nan=-np.inf))
    frame = frame.with_columns(
        pl.lit(version).alias("version"),
        pl.when(pl.col("kind") == "upsert").then(batch_size).otherwise(1).cast(pl.Int64).alias("events"),
        ((pl.col("end_s") - pl.col("start_s")) * 1000).alias("call_ms"),
        ((pl.col("end_s") - pl.col("intended_s")) * 1000).alias("from_intended_ms"),
        pl.Series("queue_wait_ms", queue_wait * 1000).fill_nan(None),
        pl.Series("client_lag_ms", client_lag * 1000).fill_nan(None),
    )
    return frame.sort(["kind", "op_index"]).select(RAW_COLUMNS)


def run_loadtest(
    uri: str,
    database: str,
    collection: str,
    version: str,
    plan: LoadTestPlan,
    upsert_events: pl.DataFrame,
    reports: pl.DataFrame,
    plan_schedule: dict[str, pl.DataFrame],
    upsert_workers: int,
    report_workers: int,
    start_timeout_s: float = 180.0,
) -> tuple[pl.DataFrame, dict]:
    """Run the schedule from worker processes; return (raw rows, run facts).

    Each worker is a process of its own (spawned, with its own client) so that the Python
    client is not one GIL-bound bottleneck; workers start together at a shared monotonic t0.
    """
    with tempfile.TemporaryDirectory(prefix="costlab-loadtest-") as tmp:
        tmp_path = Path(tmp)
        # Each worker gets a file with only its own requests: upsert batch j (rows j*batch ..) and
        # report j go to worker j mod workers, the same rule as assign_workers.
        batch_of_row = np.arange(upsert_events.height, dtype=np.int64) // plan.batch_size
        payloads = {
            "upsert": (upsert_events, batch_of_row),
            "report": (reports, reports["op_index"].to_numpy()),
        }
        specs: list[WorkerSpec] = []
        for kind, workers in (("upsert", upsert_workers), ("report", report_workers)):
            ops = plan_schedule[kind]
            owner = assign_workers(ops.height, workers)
            rows, op_of_row = payloads[kind]
            for w in range(workers):
                mine = ops.filter(pl.Series(owner == w))
                payload_path = tmp_path / f"{kind}_{w}_requests.parquet"
                rows.filter(pl.Series(op_of_row % workers == w)).write_parquet(payload_path)
                specs.append(WorkerSpec(kind=kind, worker=w, version=version, uri=uri, database=database,
                                        collection=collection, op_index=mine["op_index"].to_numpy(),
                                        intended_s=mine["intended_s"].to_numpy(),
                                        payload_path=str(payload_path), batch_size=plan.batch_size,
                                        test_seconds=plan.total_seconds,
                                        out_path=str(tmp_path / f"{kind}_{w}.parquet")))
        parts, worker_facts, started_at = run_worker_processes(
            worker_main, specs, version, uri, plan.total_seconds, start_timeout_s
        )
    cpu = {name: facts["cpu_seconds"] for name, facts in worker_facts.items()}
    raw = _finish_raw(pl.concat(parts, how="vertical_relaxed"), version, plan.batch_size, plan_schedule)
    facts = {
        "started_at": started_at.isoformat(),
        "test_seconds": plan.total_seconds,
        "upsert_workers": upsert_workers,
        "report_workers": report_workers,
        "worker_cpu_seconds_total": round(sum(cpu.values()), 3),
        "worker_cpu_share_of_test": round(
            sum(cpu.values()) / (plan.total_seconds * (os.cpu_count() or 1)), 4
        ),
    }
    return raw, facts


def run_worker_processes(
    target, specs: list, version: str, uri: str, test_seconds: float, start_timeout_s: float = 180.0
) -> tuple[list[pl.DataFrame], dict[str, dict], datetime]:
    """Start one spawned process per spec running target(spec, ready_queue, go_event, t0_value, parent
    pid); when all are ready, set a common t0 and go; wait for them. A worker that lost the server
    stops all (ConnectionLost); one that failed stops all (RuntimeError naming it).

    Each spec has kind, worker and out_path; a worker writes its rows to out_path (parquet) and its
    facts beside it (.json). Returns (rows per worker, {"<kind>_<worker>": facts}, wall-clock start).
    """
    ctx = mp.get_context("spawn")
    ready_queue = ctx.Queue()
    go_event = ctx.Event()
    t0_value = ctx.Value("d", 0.0)
    processes = [
        ctx.Process(
            target=target,
            args=(spec, ready_queue, go_event, t0_value, os.getpid()),
            name=f"loadtest-{spec.kind}-{spec.worker}",
            daemon=True,
        )
        for spec in specs
    ]
    try:
        for process in processes:
            process.start()
        deadline = time.monotonic() + start_timeout_s
        ready = 0
        while ready < len(processes):
            try:
                ready_queue.get(timeout=0.5)
                ready += 1
                continue
            except queue.Empty:
                pass
            dead = [p.name for p in processes if p.exitcode not in (None, 0)]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(
                    f"load test workers for {version}: {ready} of {len(processes)} ready"
                    + (
                        f"; exited with an error: {', '.join(dead)} (traceback above)"
                        if dead
                        else f" after {start_timeout_s} s"
                    )
                )
        t0_value.value = time.monotonic() + 0.2
        started_at = datetime.now(timezone.utc) + timedelta(seconds=0.2)
        go_event.set()
        bar = progress(total=round(test_seconds), desc=f"load test {version}", unit="s")
        shown = 0
        while any(p.is_alive() for p in processes):
            reason = lost_reason(specs)
            if reason or any(p.exitcode not in (None, 0) for p in processes):
                break  # one worker lost the server or failed: stop all now (finally below)
            time.sleep(0.25)
            elapsed = min(round(time.monotonic() - t0_value.value), round(test_seconds))
            if elapsed > shown:
                bar.update(elapsed - shown)
                shown = elapsed
            if time.monotonic() > t0_value.value + test_seconds + 600:
                raise RuntimeError(f"load test workers for {version} still running 600 s after the test end")
        bar.close()
        if lost_reason(specs) or any(p.exitcode not in (None, 0) for p in processes):
            for process in processes:
                process.terminate()
        for process in processes:
            process.join()
        reason = lost_reason(specs)
        if reason:
            raise ConnectionLost(lost_message(display_uri(uri), f"the load test of {version}", reason))
        failed = [p.name for p in processes if p.exitcode != 0]
        if failed:
            raise RuntimeError(f"load test of {version}: worker processes failed: {', '.join(failed)}")
        parts = [pl.read_parquet(spec.out_path) for spec in specs]
        facts = {
            f"{spec.kind}_{spec.worker}": json.loads(Path(spec.out_path).with_suffix(".json").read_text())
            for spec in specs
        }
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
                process.join(5)
    return parts, facts, started_at
