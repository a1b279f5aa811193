"""The published load test of one app version, at a configurable time scale.

Method (series Introduction, "Load Testing Methodology"): Bulk Upsert and Get Reports run
concurrently, each from its own pool of workers (published: 20 each). After a warm-up of Get
Reports at the first report rate, four Bulk Upsert phases run at 250, 500, 750 and 1000 events/s
(batches of 250 events); inside each phase Get Reports rises from 25 to 250 requests/s by 25
every tenth of the phase. Published: 50-minute phases (200 minutes); here `phase_seconds`.

Open loop: every operation has an intended start time fixed before the test starts; a worker
sends it at that time, or as soon as it is free when it is late. Two latencies per operation:
`call_ms`, the call's own duration (what the article timed: "queueing shows up as lower rates,
not longer calls") is the primary one; `from_intended_ms`, from the intended start to the end,
is the second, labelled one (it includes the wait for a free worker, so a backlog shows in it).
Whether a target was met is judged per time bin inside each step, from the operations that
completed within that bin. An operation that has not started when the test ends is recorded as
`skipped`: it counts against the achieved rate and is counted in every summary and figure.

For each operation the worker also records why it was late: `queue_wait_ms` (the worker was
still busy with its previous operation, i.e. waiting on the server) and `client_lag_ms` (the
worker was free but started late: its own scheduling / CPU). The per-bin summary uses these
to say whether the client or the server fell behind when a target was not met.
"""
from __future__ import annotations

import json
import math
import multiprocessing as mp
import os
import queue
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import numpy as np
import polars as pl

from costlab.progress import progress

KINDS = ("report", "upsert")
# Published parameters (series Introduction).
PUBLISHED_UPSERT_RATES = (250.0, 500.0, 750.0, 1000.0)                  # events/s per phase
PUBLISHED_REPORT_RATES = tuple(float(r) for r in range(25, 251, 25))    # requests/s per tenth of a phase
PUBLISHED_BATCH_SIZE = 250
PUBLISHED_PHASE_SECONDS = 50 * 60
PUBLISHED_WORKERS = 20

RAW_COLUMNS = ["version", "kind", "op_index", "worker", "phase", "step", "events", "intended_s",
               "start_s", "end_s", "call_ms", "from_intended_ms", "queue_wait_ms", "client_lag_ms",
               "status", "error"]
LATENCIES = (
    "call_ms",
    "from_intended_ms",
)  # primary: the call's own duration; second: from the intended start


@dataclass(frozen=True)
class LoadTestPlan:
    """The schedule's parameters; rates are the published ones times `rate_scale`."""
    phase_seconds: float
    warmup_seconds: float = 0.0
    upsert_rates: tuple[float, ...] = PUBLISHED_UPSERT_RATES   # events/s, one per phase
    report_rates: tuple[float, ...] = PUBLISHED_REPORT_RATES   # requests/s, steps inside each phase
    batch_size: int = PUBLISHED_BATCH_SIZE
    rate_scale: float = 1.0

    def __post_init__(self) -> None:
        if not self.phase_seconds > 0:
            raise ValueError(f"phase_seconds must be > 0, got {self.phase_seconds!r}")
        if self.warmup_seconds < 0:
            raise ValueError(f"warmup_seconds must be >= 0, got {self.warmup_seconds!r}")
        if not self.upsert_rates or not self.report_rates:
            raise ValueError("upsert_rates and report_rates need at least one rate each")
        if any(r < 0 for r in (*self.upsert_rates, *self.report_rates)):
            raise ValueError(f"rates must be >= 0, got {self.upsert_rates!r} / {self.report_rates!r}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size!r}")
        if not self.rate_scale > 0:
            raise ValueError(f"rate_scale must be > 0, got {self.rate_scale!r}")

    @property
    def step_seconds(self) -> float:
        return self.phase_seconds / len(self.report_rates)

    @property
    def total_seconds(self) -> float:
        return self.warmup_seconds + self.phase_seconds * len(self.upsert_rates)

    @classmethod
    def from_config(cls, loadtest_config: dict) -> "LoadTestPlan":
        return cls(phase_seconds=float(loadtest_config["phase_seconds"]),
                   warmup_seconds=float(loadtest_config["warmup_seconds"]),
                   upsert_rates=tuple(float(r) for r in loadtest_config["upsert_rates"]),
                   report_rates=tuple(float(r) for r in loadtest_config["report_rates"]),
                   batch_size=int(loadtest_config["batch_size"]),
                   rate_scale=float(loadtest_config["rate_scale"]))


def segments(plan: LoadTestPlan) -> pl.DataFrame:
    """One row per (kind, phase, step) of constant target rate.

    phase 0 is the warm-up (Get Reports only, at the first report rate); phases 1.. are the
    Bulk Upsert phases, each split into len(report_rates) steps. `ops_per_s` is operations
    (upsert batches or report requests) per second; `events_per_s` counts events for upserts.
    """
    rows = []
    if plan.warmup_seconds > 0:
        rate = plan.report_rates[0] * plan.rate_scale
        rows.append(("report", 0, 0, 0.0, plan.warmup_seconds, rate, rate))
    for phase, upsert_rate in enumerate(plan.upsert_rates, start=1):
        phase_start = plan.warmup_seconds + (phase - 1) * plan.phase_seconds
        for step, report_rate in enumerate(plan.report_rates, start=1):
            start = phase_start + (step - 1) * plan.step_seconds
            end = start + plan.step_seconds
            events_rate = upsert_rate * plan.rate_scale
            rows.append(("upsert", phase, step, start, end, events_rate / plan.batch_size, events_rate))
            rows.append(("report", phase, step, start, end, report_rate * plan.rate_scale,
                         report_rate * plan.rate_scale))
    return pl.DataFrame(rows, orient="row", schema={
        "kind": pl.Utf8, "phase": pl.Int32, "step": pl.Int32, "start_s": pl.Float64, "end_s": pl.Float64,
        "ops_per_s": pl.Float64, "events_per_s": pl.Float64})


def intended_starts(kind_segments: pl.DataFrame) -> pl.DataFrame:
    """Intended start times of one kind's operations, from its rate segments (sorted by start).

    Operation k starts when the cumulative target count (the integral of the rate) reaches
    k + 0.5, so a constant rate r gives starts at 0.5/r, 1.5/r, ... and fractional rates carry
    over segment boundaries instead of being rounded in each segment.
    """
    kind_segments = kind_segments.sort("start_s")
    starts, phases, steps = [], [], []
    cumulative = 0.0
    for seg in kind_segments.iter_rows(named=True):   # a few dozen segments, not per operation
        rate, begin, end = seg["ops_per_s"], seg["start_s"], seg["end_s"]
        if rate <= 0:
            continue
        cumulative_end = cumulative + rate * (end - begin)
        ks = np.arange(math.ceil(cumulative - 0.5), math.ceil(cumulative_end - 0.5), dtype=np.int64)
        starts.append(begin + (ks + 0.5 - cumulative) / rate)
        phases.append(np.full(len(ks), seg["phase"], dtype=np.int32))
        steps.append(np.full(len(ks), seg["step"], dtype=np.int32))
        cumulative = cumulative_end
    if not starts:
        return pl.DataFrame(schema={"op_index": pl.Int64, "intended_s": pl.Float64, "phase": pl.Int32,
                                    "step": pl.Int32})
    intended = np.concatenate(starts)
    return pl.DataFrame({"op_index": np.arange(len(intended), dtype=np.int64), "intended_s": intended,
                         "phase": np.concatenate(phases), "step": np.concatenate(steps)})


def schedule(plan: LoadTestPlan) -> dict[str, pl.DataFrame]:
    """Intended starts per kind: {"report": ..., "upsert": ...}."""
    segs = segments(plan)
    return {kind: intended_starts(segs.filter(pl.col("kind") == kind)) for kind in KINDS}


def assign_workers(n_ops: int, workers: int) -> np.ndarray:
    """Operation i goes to worker i mod workers: consecutive operations on different workers."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    return np.arange(n_ops, dtype=np.int64) % workers


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


# --- the driver -------------------------------------------------------------------------------

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


def _sleep_until(deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining > 0:
        time.sleep(remaining)


def _error_text(exc: Exception) -> str:
    details = getattr(exc, "details", None)
    if isinstance(details, dict) and details.get("writeErrors"):
        first = details["writeErrors"][0]
        return (
            f"{type(exc).__name__}: {len(details['writeErrors'])} write errors, first: {first.get('errmsg')}"[
                :300
            ]
        )
    return f"{type(exc).__name__}: {exc}"[:300]


def _worker_main(spec: WorkerSpec, ready_queue, go_event, t0_value, parent_pid: int | None = None) -> None:
    """One worker process: connect, prepare, wait for the common start, run its operations."""
    from costlab.procs import die_with_parent

    if parent_pid is not None:
        die_with_parent(parent_pid)   # a job killed with -9 must not leave workers sending

    from pymongo import MongoClient
    from pymongo.errors import ConnectionFailure

    from costlab.appversions.statements import send_update_statements, update_statements
    from costlab.appversions.versions import get_version
    from costlab.server.connection import PoolWatch

    version = get_version(spec.version)
    watch = PoolWatch()   # a cleared pool: the driver lost the server (and may have reconnected)
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
            _sleep_until(t0 + spec.intended_s[i])
            started = time.monotonic()
            if started >= cutoff:
                break   # the test is over: this and later operations stay `skipped`
            try:
                if spec.kind == "upsert":
                    # Raises BulkUpsertError on writeErrors / writeConcernError in the reply.
                    send_update_statements(collection, statements, spec.version)
                else:
                    version.get_reports(collection, keys[i], end_dates[i])
                status[i] = "ok"
            except ConnectionFailure as exc:
                # Not a server being slow: the measurement is void. Say why and stop at once.
                _lost(spec, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
                raise SystemExit(3) from None
            except Exception as exc:  # recorded per operation; the summary counts them
                status[i] = "error"
                errors[i] = _error_text(exc)
            if watch.cleared:
                _lost(spec, "the driver reconnected to the server during the test")
                raise SystemExit(3)
            start[i] = started - t0
            end[i] = time.monotonic() - t0
        cpu_seconds = time.process_time() - cpu_before
        if watch.cleared:
            _lost(spec, "the driver reconnected to the server during the test")
            raise SystemExit(3)
    finally:
        client.close()
    frame = pl.DataFrame({"op_index": spec.op_index, "intended_s": spec.intended_s, "start_s": start,
                          "end_s": end, "status": status.astype(str), "error": errors},
                         schema_overrides={"error": pl.Utf8}).with_columns(
        pl.lit(spec.worker).alias("worker"), pl.lit(spec.kind).alias("kind"))
    frame = frame.with_columns(pl.col("start_s").fill_nan(None), pl.col("end_s").fill_nan(None))
    frame.write_parquet(spec.out_path)
    Path(spec.out_path).with_suffix(".json").write_text(json.dumps({"cpu_seconds": cpu_seconds}))


def _lost(spec: WorkerSpec, reason: str) -> None:
    """Leave the reason a worker lost the server where the parent looks for it."""
    Path(spec.out_path).with_suffix(".lost").write_text(reason)


def _lost_reason(specs: list[WorkerSpec]) -> str | None:
    for spec in specs:
        path = Path(spec.out_path).with_suffix(".lost")
        if path.exists():
            return f"{spec.kind} worker {spec.worker}: {path.read_text()}"
    return None


def _finish_raw(frame: pl.DataFrame, version: str, batch_size: int,
                plan_schedule: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """Add phase/step, latency, service time and the lateness split (per worker, in intended order)."""
    steps = pl.concat(
        [
            plan_schedule[kind].select("op_index", "phase", "step").with_columns(pl.lit(kind).alias("kind"))
            for kind in KINDS
        ]
    )
    frame = frame.join(steps, on=["kind", "op_index"], how="left").sort(["kind", "worker", "intended_s"])
    previous_end = (frame.select(pl.col("end_s").shift(1).over(["kind", "worker"]))
                    .to_series().fill_null(-np.inf).to_numpy())
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


def loadtest_requests(plan: LoadTestPlan, new_events: pl.DataFrame, report_keys: list[str] | np.ndarray,
                      seed: int) -> tuple[dict[str, pl.DataFrame], pl.DataFrame, pl.DataFrame]:
    """The schedule plus what each operation sends.

    Upsert batch j sends rows [j*batch, (j+1)*batch) of new_events (cycled if the schedule needs
    more); report i asks for a uniform key from report_keys and a uniform end date in 2020.
    A uniform end date is a whole UTC day (reports end at midnight, like the events' dates).
    """
    plan_schedule = schedule(plan)
    n_upserts = plan_schedule["upsert"].height
    needed = n_upserts * plan.batch_size
    if needed and new_events.height == 0:
        raise ValueError("no new events to upsert")
    if needed > new_events.height:
        repeats = math.ceil(needed / new_events.height)
        new_events = pl.concat([new_events] * repeats)
    upsert_events = new_events.head(needed)
    rng = np.random.default_rng(seed)
    n_reports = plan_schedule["report"].height
    keys = np.asarray(report_keys)
    key_choice = keys[rng.integers(0, len(keys), size=n_reports)] if n_reports else keys[:0]
    days_2020 = (date(2021, 1, 1) - date(2020, 1, 1)).days
    day_offsets = rng.integers(0, days_2020, size=n_reports)
    end_dates = [datetime(2020, 1, 1, tzinfo=timezone.utc) + timedelta(days=int(d)) for d in day_offsets]
    reports = pl.DataFrame({"op_index": np.arange(n_reports, dtype=np.int64), "key": key_choice.astype(str),
                            "end_date": end_dates},
                           schema={"op_index": pl.Int64, "key": pl.Utf8,
                                   "end_date": pl.Datetime("ms", "UTC")})
    return plan_schedule, upsert_events, reports


def run_loadtest(uri: str, database: str, collection: str, version: str, plan: LoadTestPlan,
                 upsert_events: pl.DataFrame, reports: pl.DataFrame, plan_schedule: dict[str, pl.DataFrame],
                 upsert_workers: int, report_workers: int, start_timeout_s: float = 180.0
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
                specs.append(
                    WorkerSpec(
                        kind=kind,
                        worker=w,
                        version=version,
                        uri=uri,
                        database=database,
                        collection=collection,
                        op_index=mine["op_index"].to_numpy(),
                        intended_s=mine["intended_s"].to_numpy(),
                        payload_path=str(payload_path),
                        batch_size=plan.batch_size,
                        test_seconds=plan.total_seconds,
                        out_path=str(tmp_path / f"{kind}_{w}.parquet"),
                    )
                )
        parts, worker_facts, started_at = run_worker_processes(_worker_main, specs, version, uri,
                                                               plan.total_seconds, start_timeout_s)
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
    processes = [ctx.Process(target=target, args=(spec, ready_queue, go_event, t0_value, os.getpid()),
                             name=f"loadtest-{spec.kind}-{spec.worker}", daemon=True) for spec in specs]
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
                raise RuntimeError(f"load test workers for {version}: {ready} of {len(processes)} ready"
                                   + (f"; exited with an error: {', '.join(dead)} (traceback above)" if dead
                                      else f" after {start_timeout_s} s"))
        t0_value.value = time.monotonic() + 0.2
        started_at = datetime.now(timezone.utc) + timedelta(seconds=0.2)
        go_event.set()
        bar = progress(total=round(test_seconds), desc=f"load test {version}", unit="s")
        shown = 0
        while any(p.is_alive() for p in processes):
            reason = _lost_reason(specs)
            if reason or any(p.exitcode not in (None, 0) for p in processes):
                break   # one worker lost the server or failed: stop all now (finally below)
            time.sleep(0.25)
            elapsed = min(round(time.monotonic() - t0_value.value), round(test_seconds))
            if elapsed > shown:
                bar.update(elapsed - shown)
                shown = elapsed
            if time.monotonic() > t0_value.value + test_seconds + 600:
                raise RuntimeError(f"load test workers for {version} still running 600 s after the test end")
        bar.close()
        if _lost_reason(specs) or any(p.exitcode not in (None, 0) for p in processes):
            for process in processes:
                process.terminate()
        for process in processes:
            process.join()
        reason = _lost_reason(specs)
        if reason:
            from costlab.server.connection import ConnectionLost, display_uri, lost_message
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


# --- summaries --------------------------------------------------------------------------------

def step_bins(plan: LoadTestPlan, bin_seconds: float | None = None) -> pl.DataFrame:
    """Time bins inside every (kind, phase, step) of constant target rate.

    A step is cut into bins of bin_seconds from its own start (None: one bin per step; a bin
    never crosses a step boundary, the last one of a step may be shorter). Columns: kind, phase,
    step, bin (within the step), bin_start_s, bin_end_s, events_per_s (the step's target).
    """
    if bin_seconds is not None and not bin_seconds > 0:
        raise ValueError(f"bin_seconds must be > 0 or null, got {bin_seconds!r}")
    segs = segments(plan)
    length = (segs["end_s"] - segs["start_s"]).to_numpy()
    size = length if bin_seconds is None else np.minimum(length, float(bin_seconds))
    counts = np.maximum(1, np.ceil(length / size - 1e-9)).astype(np.int64)
    index = np.repeat(np.arange(segs.height), counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    starts = segs["start_s"].to_numpy()[index] + within * size[index]
    ends = np.minimum(starts + size[index], segs["end_s"].to_numpy()[index])
    return segs[index].select("kind", "phase", "step", "events_per_s").with_columns(
        pl.Series("bin", within, dtype=pl.Int64), pl.Series("bin_start_s", starts),
        pl.Series("bin_end_s", ends)).sort("kind", "bin_start_s")


def _in_bins(ops: pl.DataFrame, bins: pl.DataFrame, time_col: str) -> pl.DataFrame:
    """Each operation with the (phase, step, bin) whose [start, end) holds its time_col; others dropped."""
    keys = bins.select("kind", pl.col("phase").alias("bin_phase"), pl.col("step").alias("bin_step"), "bin",
                       "bin_start_s", "bin_end_s")
    # Both sides sorted by time (hence within each kind too), which polars cannot check with `by`.
    joined = (ops.filter(pl.col(time_col).is_not_null()).sort(time_col)
              .join_asof(keys.sort("bin_start_s"), left_on=time_col, right_on="bin_start_s", by="kind",
                         strategy="backward", check_sortedness=False))
    return joined.filter(pl.col(time_col) < pl.col("bin_end_s"))


def _latency_aggs(prefix_filter: pl.Expr, quantiles: tuple[float, ...]) -> list[pl.Expr]:
    aggs = []
    for value in LATENCIES:
        ok = pl.col(value).filter(prefix_filter)
        aggs += [
            ok.quantile(q, interpolation="linear").alias(f"{value}_p{round(q * 100)}") for q in quantiles
        ]
        aggs += [ok.mean().alias(f"{value}_mean"), ok.max().alias(f"{value}_max")]
    return aggs


def _per_bin(
    raw: pl.DataFrame, plan: LoadTestPlan, bin_seconds: float | None, tolerance: float
) -> pl.DataFrame:
    """Every bin of every step: what the schedule asked, what completed in it, latencies, met, who fell
    behind."""
    bins = step_bins(plan, bin_seconds)
    version = raw["version"][0] if raw.height else None
    keys = ["kind", "bin_phase", "bin_step", "bin"]
    ok = pl.col("status") == "ok"
    # What the bin asked for: operations intended in it (the schedule's whole operations).
    asked = _in_bins(raw, bins, "intended_s").group_by(keys).agg(
        pl.col("events").sum().alias("target_events"),
        pl.len().alias("ops_planned"),
        ok.sum().alias("ops_ok"),
        (pl.col("status") == "error").sum().alias("ops_error"),
        (pl.col("status") == "skipped").sum().alias("ops_skipped"),
        pl.col("queue_wait_ms").sum().alias("queue_wait_ms_total"),
        pl.col("client_lag_ms").sum().alias("client_lag_ms_total"),
        pl.col("client_lag_ms").quantile(0.95).alias("client_lag_ms_p95"),
        *_latency_aggs(ok, (0.5, 0.9, 0.95, 0.99)),
    )
    # What the bin achieved: successful operations that completed within it.
    done = (_in_bins(raw.filter(ok), bins, "end_s").group_by(keys)
            .agg(pl.col("events").sum().alias("achieved_events"), pl.len().alias("ops_completed")))
    frame = (bins.rename({"phase": "bin_phase", "step": "bin_step"})
             .join(asked, on=keys, how="left").join(done, on=keys, how="left")
             .rename({"bin_phase": "phase", "bin_step": "step"})
             .with_columns(pl.col("target_events", "achieved_events", "ops_planned", "ops_ok", "ops_error",
                                  "ops_skipped", "ops_completed", "queue_wait_ms_total",
                                  "client_lag_ms_total").fill_null(0),
                           (pl.col("bin_end_s") - pl.col("bin_start_s")).alias("bin_seconds"),
                           pl.lit(version, dtype=pl.Utf8).alias("version")))
    met = pl.col("achieved_events") >= (1 - tolerance) * pl.col("target_events")
    return frame.with_columns(
        (pl.col("target_events") / pl.col("bin_seconds")).alias("target_rate"),
        (pl.col("achieved_events") / pl.col("bin_seconds")).alias("achieved_rate"),
        met.alias("met"),
        _behind(met, skipped_counts=True).alias("behind"))


def _behind(met: pl.Expr, skipped_counts: bool) -> pl.Expr:
    """none when met; server for errors, skips after waiting on responses, or more waiting than lag; else
    client."""
    server_side = (pl.col("ops_error") > 0) | (pl.col("queue_wait_ms_total") >= pl.col("client_lag_ms_total"))
    if skipped_counts:
        server_side = server_side | (pl.col("ops_skipped") > 0) & (pl.col("queue_wait_ms_total") > 0)
    return (
        pl.when(met).then(pl.lit("none")).when(server_side).then(pl.lit("server")).otherwise(pl.lit("client"))
    )


LATENCY_COLUMNS = [f"{v}_{s}" for v in LATENCIES for s in ("p50", "p90", "p95", "p99", "mean", "max")]
BIN_COLUMNS = ["version", "kind", "phase", "step", "bin", "bin_start_s", "bin_seconds", "target_rate",
               "achieved_rate", "met", "behind", "ops_planned", "ops_completed", "ops_error", "ops_skipped",
               *LATENCY_COLUMNS, "queue_wait_ms_total", "client_lag_ms_total", "client_lag_ms_p95"]
STEP_COLUMNS = ["version", "kind", "phase", "step", "start_s", "step_seconds", "target_rate", "achieved_rate",
                "met", "bins", "bins_met", "behind", "ops_planned", "ops_ok", "ops_error", "ops_skipped",
                "call_ms_p50", "call_ms_p95", "call_ms_max", "from_intended_ms_p50", "from_intended_ms_p95",
                "from_intended_ms_max", "queue_wait_ms_total", "client_lag_ms_total"]


def summarize_bins(raw: pl.DataFrame, plan: LoadTestPlan, bin_seconds: float | None = None,
                   tolerance: float = 0.05) -> pl.DataFrame:
    """Per (version, kind, phase, step, bin inside the step): target vs achieved, latencies, met, who fell
    behind.

    target_rate: events/s (upserts) or requests/s (reports) of the operations intended in the bin.
    achieved_rate: events or requests of successful operations that completed within the bin.
    met: achieved >= (1 - tolerance) * target, in this bin. Latencies are over the successful
    operations intended in the bin: call_ms_* (each call's own duration, the primary latency) and
    from_intended_ms_* (from the intended start: includes waiting for a free worker). ops_skipped:
    operations of the bin that never started. When not met, `behind` says which side lost the
    time: "server" when the delay was mostly workers waiting on responses (or errors from the
    server), "client" when it was mostly workers starting late while free.
    """
    return _per_bin(raw, plan, bin_seconds, tolerance).select(BIN_COLUMNS).sort(
        ["version", "kind", "phase", "step", "bin"])


def summarize_phases(raw: pl.DataFrame, plan: LoadTestPlan, tolerance: float = 0.05,
                     bin_seconds: float | None = None) -> pl.DataFrame:
    """Per (version, kind, phase, step): target vs achieved, whether every bin met it, latencies, who fell
    behind.

    The step is the published unit of constant target rate (a tenth of a phase). met: every time
    bin of the step (summarize_bins, bin_seconds) met its target from the operations completed
    within it; bins / bins_met say how many. achieved_rate: events of the successful operations
    that completed within the step per second (None when the step asked for nothing and nothing
    completed in it). Latencies over the successful operations intended in the step.
    """
    per_bin = _per_bin(raw, plan, bin_seconds, tolerance)
    ok = pl.col("status") == "ok"
    steps_of = raw.filter(pl.col("phase").is_not_null()).group_by(["kind", "phase", "step"]).agg(
        pl.len().alias("ops_planned"), ok.sum().alias("ops_ok"),
        (pl.col("status") == "error").sum().alias("ops_error"),
        (pl.col("status") == "skipped").sum().alias("ops_skipped"),
        pl.col("queue_wait_ms").sum().alias("queue_wait_ms_total"),
        pl.col("client_lag_ms").sum().alias("client_lag_ms_total"),
        *_latency_aggs(ok, (0.5, 0.95)))
    from_bins = per_bin.group_by(["kind", "phase", "step"]).agg(
        pl.len().alias("bins"), pl.col("met").sum().alias("bins_met"), pl.col("met").all().alias("met"),
        pl.col("achieved_events").sum().alias("achieved_events"),
        pl.col("ops_completed").sum().alias("ops_completed"))
    version = raw["version"][0] if raw.height else None
    segs = segments(plan).with_columns((pl.col("end_s") - pl.col("start_s")).alias("step_seconds"))
    frame = (
        segs.join(from_bins, on=["kind", "phase", "step"], how="left")
        .join(steps_of, on=["kind", "phase", "step"], how="left")
        .with_columns(
            pl.lit(version, dtype=pl.Utf8).alias("version"),
            pl.col(
                "ops_planned",
                "ops_ok",
                "ops_error",
                "ops_skipped",
                "achieved_events",
                "ops_completed",
                "queue_wait_ms_total",
                "client_lag_ms_total",
            ).fill_null(0),
        )
        .with_columns(
            pl.when((pl.col("ops_planned") > 0) | (pl.col("ops_completed") > 0))
            .then(pl.col("achieved_events") / pl.col("step_seconds"))
            .otherwise(None)
            .alias("achieved_rate"),
            pl.col("events_per_s").alias("target_rate"),
        )
    )
    # A step that planned no operation measured nothing: neither met nor missed (null).
    frame = frame.with_columns(
        pl.when(pl.col("ops_planned") > 0).then(pl.col("met")).otherwise(None).alias("met")
    )
    frame = frame.with_columns(pl.when(pl.col("met").is_null()).then(pl.lit("none"))
                               .otherwise(_behind(pl.col("met"), skipped_counts=False)).alias("behind"))
    return frame.select(STEP_COLUMNS).sort(["version", "kind", "phase", "step"])


# --- the job ----------------------------------------------------------------------------------

def new_events_2020(events_per_year: int, seed: int, needed: int) -> pl.DataFrame:
    """The load test's new events: the generator continued into 2020 (same key space, date order).

    Only the first days of 2020 that hold `needed` events are generated (the published scale
    needs 7.5 million of 2020's 50 million); more than a year's worth is cycled by the caller.
    """
    from costlab.appversions.events import generate_events

    days_2020 = (date(2021, 1, 1) - date(2020, 1, 1)).days
    days = min(days_2020, math.ceil(needed / events_per_year * days_2020) + 1)
    return generate_events(events_per_year, seed + 2020, start=date(2020, 1, 1),
                           end=date(2020, 1, 1) + timedelta(days=days))


STORAGE_FIELDS = ("count", "size", "storageSize", "totalIndexSize")


def _storage(db, collection: str) -> dict:
    """collStats sizes after a checkpoint (the bytes on disk), and whether the checkpoint was taken."""
    from costlab.measure.storage import checkpointed_coll_stats

    stats, compressor, status = checkpointed_coll_stats(db, collection)
    return {**{f: stats.get(f) for f in STORAGE_FIELDS}, "block_compressor": compressor, "checkpoint": status,
            "at": datetime.now(timezone.utc).isoformat()}


@contextmanager
def loadtest_server(config: dict, version_name: str, data_dir: str | Path, provenance_path: str | Path,
                    extra: dict, job: str, metrics_path: str | Path | None = None) -> Iterator:
    """The server of one load-test job on the version's loaded data directory (measuring_job),
    with what the test starts from recorded in `extra`: documents_before, the regime (working set
    against cache) and dataset_as_loaded (False after an earlier load test added 2020 events).

    metrics_path: while the job holds the server, its serverStatus (and, on the docker backend, the
    container's stats) are sampled every `loadtest.metrics_seconds` (costlab.measure.sampler) and
    written there (`t_s` from extra["started_at"], the test's start); extra["storage"] holds the
    collection's collStats sizes at the start and the end.
    """
    from costlab.appversions.load import read_marker, worker_uri
    from costlab.appversions.regime import measure_regime
    from costlab.appversions.versions import get_version
    from costlab.measure.sampler import ServerSampler, docker_stats_source
    from costlab.server import measuring_job

    version = get_version(version_name)
    marker = read_marker(data_dir)
    with measuring_job(
        config,
        config["appversions"]["loadtest"]["profile"],
        provenance_path,
        data_dir=data_dir,
        job=job,
        extra=extra,
        study="appversions",
        dataset=version_name,
        rebuild=f"snakemake --forcerun {data_dir}",
    ) as server:
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
            worker_uri(server, config),
            float(config["appversions"]["loadtest"]["metrics_seconds"]),
            docker_stats_source(container) if container else None,
        )
        with sampler:
            yield server
        extra["storage"]["end"] = _storage(db, version.collection_name)
        extra["metrics"] = {"interval_s": sampler.interval_s, "container_stats": bool(container),
                            "errors": sampler.errors[:10]}
        write_server_metrics(sampler.frame(), extra.get("started_at"), metrics_path)


def write_server_metrics(samples: pl.DataFrame, started_at: str | None, path: str | Path) -> pl.DataFrame:
    """The samples with t_s, seconds from the load test's start (negative before it), written to path."""
    from costlab.io import write_parquet

    start = (
        datetime.fromisoformat(started_at)
        if started_at
        else (samples["at"].min() if samples.height else None)
    )
    frame = samples.with_columns(
        ((pl.col("at") - pl.lit(start, dtype=pl.Datetime("ms", "UTC"))).dt.total_milliseconds() / 1000)
        .alias("t_s") if start is not None else pl.lit(None, dtype=pl.Float64).alias("t_s"))
    write_parquet(frame, path)
    return frame


def loadtest_job(config: dict, version_name: str, data_dir: str | Path, raw_path: str | Path,
                 provenance_path: str | Path, metrics_path: str | Path | None = None) -> dict:
    """The load test of one version on its loaded data directory; raw rows to raw_path, the server's
    metrics over the test to metrics_path (loadtest_server)."""
    from costlab.appversions.events import keys_for_users, users_for
    from costlab.appversions.load import worker_uri
    from costlab.appversions.versions import get_version
    from costlab.io import write_parquet

    settings = config["appversions"]
    lt = settings["loadtest"]
    version = get_version(version_name)
    plan = LoadTestPlan.from_config(lt)
    needed = schedule(plan)["upsert"].height * plan.batch_size
    plan_schedule, upsert_events, reports = loadtest_requests(
        plan, new_events_2020(settings["events_per_year"], settings["seed"], max(needed, 1)),
        keys_for_users(users_for(settings["events_per_year"])).to_numpy(), seed=settings["seed"])
    extra: dict = {"study": "appversions", "step": "loadtest", "version": version_name,
                   "plan": {"phase_seconds": plan.phase_seconds, "warmup_seconds": plan.warmup_seconds,
                            "upsert_rates": list(plan.upsert_rates), "report_rates": list(plan.report_rates),
                            "batch_size": plan.batch_size, "rate_scale": plan.rate_scale},
                   "latencies": {"call_ms": "each call's own duration (primary, as the article timed it)",
                                 "from_intended_ms": "from the operation's intended start (open loop)"}}
    with loadtest_server(config, version_name, data_dir, provenance_path, extra,
                         f"appversions_loadtest_{version_name}", metrics_path) as server:
        raw, facts = run_loadtest(
            worker_uri(server, config),
            server.database,
            version.collection_name,
            version_name,
            plan,
            upsert_events,
            reports,
            plan_schedule,
            upsert_workers=lt["upsert_workers"],
            report_workers=lt["report_workers"],
        )
        extra.update(facts)
        write_parquet(raw, raw_path)
    steps = summarize_phases(raw, plan, lt["tolerance"], lt.get("bin_seconds"))
    extra["shortfalls"] = describe_shortfalls(steps)
    return extra


def describe_shortfalls(steps: pl.DataFrame) -> str:
    """One line per step whose target was not met, saying who fell behind; a summary line first."""
    missed = steps.filter(~pl.col("met"))
    planned = steps.filter(pl.col("met").is_not_null()).height
    empty = steps.height - planned
    lines = [f"{steps['version'][0] if steps.height else '?'}: {planned - missed.height} of {planned} "
             f"steps at target" + (f" ({empty} steps planned no operation)" if empty else "")]
    for rec in missed.iter_rows(named=True):
        what = "events/s" if rec["kind"] == "upsert" else "requests/s"
        achieved = "none" if rec["achieved_rate"] is None else f"{rec['achieved_rate']:.1f}"
        lines.append(
            f"  {rec['kind']} phase {rec['phase']} step {rec['step']}: target {rec['target_rate']:.1f} "
            f"{what}, achieved {achieved} ({rec['ops_ok']} of {rec['ops_planned']} operations ok, "
            f"{rec['ops_error']} errors, {rec['ops_skipped']} not started) - the {rec['behind']} fell behind"
        )
    return "\n".join(lines) + "\n"
