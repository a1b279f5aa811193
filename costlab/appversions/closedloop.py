"""The load test the authors' way: closed-loop workers that sleep `2·U·m − latency` after each call.

What the authors' load-test program does (their `load-test/` workers), re-implemented:

- per version: a warm-up of Get Reports alone (20 workers, 25 requests/s in all, not recorded), then
  20 Bulk Upsert and 20 Get Reports workers for the four phases, then an idle period;
- each worker is a closed loop: call, then sleep `2·U·m − L` (U uniform in [0, 1), m = its mean
  interval = workers / target operations per second at that moment, L = the call's latency; a
  negative sleep is none). It never catches up, so a worker reaches 1 / (1 + (L/m)² / 4) of its
  target for L ≤ 2m and m / L above (`expected_share`);
- Get Reports sends its five aggregations concurrently where the version has five (appV1-V6R2:
  the call lasts as long as the slowest), appV6R3/R4 their one;
- Bulk Upsert's latency includes building the 250 operations; writes use `{w: "majority", j: true}`
  (the authors' deployment was a replica set: use the `replset-1` profile to match it);
- report ends are uniform in milliseconds over 2020 (versions.DayRule: the versions count different
  days there); keys uniform over the users;
- rates are counted by start time per 5-minute step, latencies as percentiles 50/90/95 per 5-minute
  bin, and the value their graphs label "mean" is the median (`mean_as_published_ms`).

The scheduled (open-loop) driver in loadtest.py stays as the other variant: it answers "can this
server sustain the rate?", this one "what would the authors' driver have shown?".
"""
from __future__ import annotations

import json
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import polars as pl
from pymongo import MongoClient, WriteConcern, monitoring
from pymongo.errors import ConnectionFailure

from costlab.appversions.events import keys_for_users, users_for
from costlab.appversions.load import worker_uri
from costlab.appversions.loadtest import loadtest_server
from costlab.appversions.loadtest_plan import LoadTestPlan, new_events_2020, schedule, segments
from costlab.appversions.loadtest_summary import in_bins, step_bins
from costlab.appversions.loadtest_workers import error_text, mark_lost, run_worker_processes, sleep_until
from costlab.appversions.params import AuthorsLoadtestParams
from costlab.appversions.statements import send_update_statements, update_statements
from costlab.appversions.versions import get_version
from costlab.io import write_parquet
from costlab.jobs import RunFacts
from costlab.procs import die_with_parent
from costlab.server.connection import PoolWatch

AUTHORS_WRITE_CONCERN = {"w": "majority", "j": True}
PUBLISHED_BIN_SECONDS = 300.0       # rates and latencies per 5-minute step / bin
PUBLISHED_IDLE_SECONDS = 600.0      # the pause after each version
REPORT_YEAR = (datetime(2020, 1, 1, tzinfo=timezone.utc), datetime(2021, 1, 1, tzinfo=timezone.utc))
RAW_COLUMNS = ["version", "kind", "worker", "op_index", "phase", "step", "events", "start_s", "end_s",
               "call_ms", "sleep_ms", "target_ops_per_s", "status", "error"]
BIN_COLUMNS = ["version", "kind", "phase", "step", "bin", "bin_start_s", "bin_seconds", "target_rate",
               "achieved_rate", "met", "ops_started", "ops_error", "call_ms_p50", "call_ms_p90",
               "call_ms_p95", "call_ms_max", "mean_as_published_ms", "sleep_ms_mean"]


# --- the pacing rule (pure) --------------------------------------------------------------------

def mean_interval_s(ops_per_s: float, workers: int) -> float:
    """m: one worker's mean time between calls for `workers` workers sharing `ops_per_s`."""
    if not ops_per_s > 0 or workers < 1:
        raise ValueError(f"need a rate > 0 and workers >= 1, got {ops_per_s!r}, {workers!r}")
    return workers / ops_per_s


def pacing_sleep_s(mean_interval: float, latency_s: float, uniform: float) -> float:
    """The authors' sleep after a call: 2·U·m − L, none when negative (a late worker never catches up)."""
    return max(0.0, 2.0 * uniform * mean_interval - latency_s)


def expected_share(latency_s: float, mean_interval: float) -> float:
    """The share of its target a closed-loop worker reaches at a constant latency L:
    E[cycle] = L + E[max(0, 2Um − L)] = m (1 + (L/m)²/4) for L ≤ 2m, L above."""
    ratio = latency_s / mean_interval
    return 1.0 / (1.0 + ratio * ratio / 4.0) if ratio <= 2.0 else 1.0 / ratio


# --- the worker --------------------------------------------------------------------------------

@dataclass
class ClosedLoopSpec:
    kind: str
    worker: int
    workers: int
    version: str
    uri: str
    database: str
    collection: str
    plan: LoadTestPlan
    payload_path: str          # upsert: the event pool (batches worker, worker + workers, ...); report: keys
    seed: int
    concurrent_reports: bool
    write_concern: dict | None
    out_path: str

    @property
    def test_seconds(self) -> float:
        return self.plan.total_seconds


def _rates(
    plan: LoadTestPlan, kind: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    segs = segments(plan).filter(pl.col("kind") == kind).sort("start_s")
    return (segs["start_s"].to_numpy(), segs["end_s"].to_numpy(), segs["ops_per_s"].to_numpy(),
            segs["phase"].to_numpy(), segs["step"].to_numpy())


def _segment_at(starts: np.ndarray, ends: np.ndarray, t: float) -> int | None:
    i = int(np.searchsorted(starts, t, side="right")) - 1
    return i if 0 <= i < len(starts) and t < ends[i] else None


class _WriteConcerns(monitoring.CommandListener):
    """Counts the write concerns the driver puts on `update` commands (pymongo command monitoring)."""

    def __init__(self) -> None:
        self.sent: dict[str, int] = {}

    def started(self, event) -> None:
        if event.command_name == "update":
            concern = json.dumps(event.command.get("writeConcern"), sort_keys=True, default=str)
            self.sent[concern] = self.sent.get(concern, 0) + 1

    def succeeded(self, event) -> None:
        pass

    def failed(self, event) -> None:
        pass


def _closed_loop_main(
    spec: ClosedLoopSpec, ready_queue, go_event, t0_value, parent_pid: int | None = None
) -> None:
    """One closed-loop worker process (see the module doc)."""

    if parent_pid is not None:
        die_with_parent(parent_pid)

    version = get_version(spec.version)
    watch, concerns = PoolWatch(), _WriteConcerns()
    client = MongoClient(spec.uri, maxPoolSize=8, event_listeners=[watch, concerns])
    executor = ThreadPoolExecutor(5) if spec.kind == "report" and spec.concurrent_reports else None
    starts, ends, rates, phases, steps = _rates(spec.plan, spec.kind)
    rng = np.random.default_rng([spec.seed, spec.worker, 0 if spec.kind == "upsert" else 1])
    rows: dict[str, list] = {
        c: []
        for c in ("phase", "step", "start_s", "end_s", "sleep_ms", "target_ops_per_s", "status", "error")
    }
    try:
        collection = client[spec.database][spec.collection]
        if spec.write_concern:
            collection = collection.with_options(write_concern=WriteConcern(**spec.write_concern))
        client.admin.command("ping")
        payload = pl.read_parquet(spec.payload_path)
        batch = spec.plan.batch_size
        batches = max(1, payload.height // batch) if spec.kind == "upsert" else 0
        keys = payload["key"].to_list() if spec.kind == "report" else []
        year_ms = [int(d.timestamp() * 1000) for d in REPORT_YEAR]
        ready_queue.put(spec.worker)
        go_event.wait()
        t0 = t0_value.value
        if len(starts):
            sleep_until(t0 + starts[0])   # upsert workers start when the first phase does
        cpu_before = time.process_time()
        i = 0
        while True:
            started = time.monotonic()
            segment = _segment_at(starts, ends, started - t0)
            if started - t0 >= spec.test_seconds or segment is None:
                break
            try:
                if spec.kind == "upsert":   # building the statements is part of the timed call, as theirs
                    j = (spec.worker + i * spec.workers) % batches
                    send_update_statements(
                        collection, update_statements(version, payload.slice(j * batch, batch)), spec.version
                    )
                else:
                    end_ms = int(rng.integers(year_ms[0], year_ms[1]))
                    version.get_reports(collection, keys[int(rng.integers(0, len(keys)))],
                                        datetime.fromtimestamp(end_ms / 1000, timezone.utc), executor)
                status, error = "ok", None
            except ConnectionFailure as exc:
                mark_lost(spec, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}")
                raise SystemExit(3) from None
            except Exception as exc:  # recorded per operation
                status, error = "error", error_text(exc)
            if watch.cleared:
                mark_lost(spec, "the driver reconnected to the server during the test")
                raise SystemExit(3)
            ended = time.monotonic()
            latency = ended - started
            now_segment = _segment_at(starts, ends, ended - t0)
            rate = rates[now_segment if now_segment is not None else segment]
            sleep = (
                pacing_sleep_s(mean_interval_s(rate, spec.workers), latency, float(rng.random()))
                if rate > 0
                else 0.0
            )
            for column, value in (
                ("phase", int(phases[segment])),
                ("step", int(steps[segment])),
                ("start_s", started - t0),
                ("end_s", ended - t0),
                ("sleep_ms", sleep * 1000),
                ("target_ops_per_s", float(rates[segment])),
                ("status", status),
                ("error", error),
            ):
                rows[column].append(value)
            i += 1
            sleep_until(min(ended + sleep, t0 + spec.test_seconds))
        cpu_seconds = time.process_time() - cpu_before
    finally:
        if executor is not None:
            executor.shutdown(wait=True)
        client.close()
    frame = pl.DataFrame(
        rows,
        schema={
            "phase": pl.Int32,
            "step": pl.Int32,
            "start_s": pl.Float64,
            "end_s": pl.Float64,
            "sleep_ms": pl.Float64,
            "target_ops_per_s": pl.Float64,
            "status": pl.Utf8,
            "error": pl.Utf8,
        },
    )
    frame = frame.with_columns(pl.lit(spec.worker).alias("worker"), pl.lit(spec.kind).alias("kind"),
                               pl.arange(0, frame.height, dtype=pl.Int64).alias("op_index"))
    frame.write_parquet(spec.out_path)
    Path(spec.out_path).with_suffix(".json").write_text(json.dumps(
        {"cpu_seconds": cpu_seconds, "write_concerns": concerns.sent}))


def run_closed_loop(
    uri: str,
    database: str,
    collection: str,
    version: str,
    plan: LoadTestPlan,
    upsert_events: pl.DataFrame,
    report_keys: list[str],
    upsert_workers: int,
    report_workers: int,
    seed: int,
    write_concern: dict | None = AUTHORS_WRITE_CONCERN,
    start_timeout_s: float = 180.0,
) -> tuple[pl.DataFrame, dict]:
    """The closed-loop test of one version from worker processes; (raw rows, run facts)."""

    concurrent = len(get_version(version).get_reports_pipelines("0" * 64, REPORT_YEAR[0])) > 1
    with tempfile.TemporaryDirectory(prefix="costlab-closedloop-") as tmp:
        tmp_path = Path(tmp)
        events_path, keys_path = tmp_path / "upsert_events.parquet", tmp_path / "report_keys.parquet"
        upsert_events.write_parquet(events_path)
        pl.DataFrame({"key": list(report_keys)}, schema={"key": pl.Utf8}).write_parquet(keys_path)
        specs = [
            ClosedLoopSpec(kind=kind, worker=w, workers=workers, version=version, uri=uri, database=database,
                           collection=collection, plan=plan,
                           payload_path=str(events_path if kind == "upsert" else keys_path), seed=seed,
                           concurrent_reports=concurrent, write_concern=write_concern,
                           out_path=str(tmp_path / f"{kind}_{w}.parquet"))
            for kind, workers in (("upsert", upsert_workers), ("report", report_workers))
            for w in range(workers)
        ]
        parts, worker_facts, started_at = run_worker_processes(_closed_loop_main, specs, version, uri,
                                                               plan.total_seconds, start_timeout_s)
    concerns: dict[str, int] = {}
    for facts in worker_facts.values():
        for concern, count in facts["write_concerns"].items():
            concerns[concern] = concerns.get(concern, 0) + count
    raw = pl.concat(parts, how="vertical_relaxed").with_columns(
        pl.lit(version).alias("version"),
        pl.when(pl.col("kind") == "upsert").then(plan.batch_size).otherwise(1).cast(pl.Int64).alias("events"),
        ((pl.col("end_s") - pl.col("start_s")) * 1000).alias("call_ms"),
    ).sort("kind", "start_s").select(RAW_COLUMNS)
    cpu = sum(f["cpu_seconds"] for f in worker_facts.values())
    return raw, {
        "driver": "authors",
        "started_at": started_at.isoformat(),
        "test_seconds": plan.total_seconds,
        "upsert_workers": upsert_workers,
        "report_workers": report_workers,
        "concurrent_reports": concurrent,
        "write_concern": write_concern,
        "update_commands_by_write_concern": concerns,
        "worker_cpu_seconds_total": round(cpu, 3),
    }


# --- summaries ---------------------------------------------------------------------------------

def closed_loop_bins(raw: pl.DataFrame, plan: LoadTestPlan, bin_seconds: float | None = PUBLISHED_BIN_SECONDS,
                     tolerance: float = 0.05) -> pl.DataFrame:
    """Per (version, kind, phase, step, bin) of the phases (the warm-up is not recorded, as theirs):
    the rate by **start time** (events or requests of the successful calls started in the bin, per
    second) against the target, met (≥ (1 − tolerance) × target), call_ms percentiles 50/90/95 and
    max of the successful calls started in the bin, and `mean_as_published_ms` = the median (what the
    authors' graphs label "mean"). bin_seconds: None = one bin per step (the published 5-minute steps
    are 300 s bins)."""
    bins = step_bins(plan, bin_seconds).filter(pl.col("phase") >= 1)
    version = raw["version"][0] if raw.height else None
    keys = ["kind", "bin_phase", "bin_step", "bin"]
    ok = pl.col("status") == "ok"
    started = (
        in_bins(raw.filter(pl.col("phase") >= 1), bins, "start_s")
        .group_by(keys)
        .agg(
            pl.col("events").filter(ok).sum().alias("achieved_events"),
            pl.len().alias("ops_started"),
            (pl.col("status") == "error").sum().alias("ops_error"),
            *[
                pl.col("call_ms")
                .filter(ok)
                .quantile(q, interpolation="linear")
                .alias(f"call_ms_p{round(q * 100)}")
                for q in (0.5, 0.9, 0.95)
            ],
            pl.col("call_ms").filter(ok).max().alias("call_ms_max"),
            pl.col("sleep_ms").mean().alias("sleep_ms_mean"),
        )
    )
    frame = (bins.rename({"phase": "bin_phase", "step": "bin_step"}).join(started, on=keys, how="left")
             .rename({"bin_phase": "phase", "bin_step": "step"})
             .with_columns(pl.col("achieved_events", "ops_started", "ops_error").fill_null(0),
                           (pl.col("bin_end_s") - pl.col("bin_start_s")).alias("bin_seconds"),
                           pl.lit(version, dtype=pl.Utf8).alias("version")))
    return (
        frame.with_columns(
            pl.col("events_per_s").alias("target_rate"),
            (pl.col("achieved_events") / pl.col("bin_seconds")).alias("achieved_rate"),
            (
                pl.col("achieved_events") >= (1 - tolerance) * pl.col("events_per_s") * pl.col("bin_seconds")
            ).alias("met"),
            pl.col("call_ms_p50").alias("mean_as_published_ms"),
        )
        .select(BIN_COLUMNS)
        .sort("version", "kind", "phase", "step", "bin")
    )


# --- the job -----------------------------------------------------------------------------------

def closed_loop_job(params: AuthorsLoadtestParams, run: RunFacts, version_name: str, data_dir: str | Path,
                    raw_path: str | Path, provenance_path: str | Path,
                    metrics_path: str | Path | None = None) -> dict:
    """The authors'-way load test of one version on its loaded data directory; raw rows to raw_path,
    the server's metrics over the test (the idle period included) to metrics_path. `params` are the
    rule's (costlab.appversions.params.AuthorsLoadtestParams), `run` the run's facts."""

    data, lt = params.data, params.loadtest
    version = get_version(version_name)
    plan = LoadTestPlan.from_config(lt)
    # Enough new events for the target (a faster worker cycles through them again).
    needed = max(schedule(plan)["upsert"].height * plan.batch_size, plan.batch_size * lt["upsert_workers"])
    events = new_events_2020(data["events_per_year"], data["seed"], needed)
    keys = keys_for_users(users_for(data["events_per_year"])).to_list()
    idle = float(lt.get("idle_seconds", 0.0))
    extra: dict = {
        "study": "appversions",
        "step": "loadtest",
        "driver": "authors",
        "version": version_name,
        "plan": {
            "phase_seconds": plan.phase_seconds,
            "warmup_seconds": plan.warmup_seconds,
            "idle_seconds": idle,
            "upsert_rates": list(plan.upsert_rates),
            "report_rates": list(plan.report_rates),
            "batch_size": plan.batch_size,
            "rate_scale": plan.rate_scale,
        },
        "pacing": "closed loop: after each call sleep 2*U*m - latency (U uniform, m = workers / target rate)",
    }
    with loadtest_server(params, run, version_name, data_dir, provenance_path, extra,
                         f"appversions_loadtest_authors_{version_name}", metrics_path) as server:
        raw, facts = run_closed_loop(worker_uri(server, run.server), server.database, version.collection_name,
                                     version_name, plan, events, keys, lt["upsert_workers"],
                                     lt["report_workers"], data["seed"])
        time.sleep(idle)   # the authors' pause after a version, before the next one's warm-up
        extra.update(facts)
        write_parquet(raw, raw_path)
    return extra
