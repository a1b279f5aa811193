"""The load test's plan: its schedule (who sends what, when) and the requests each operation sends.

Part of the load test in four roles: plan (here), workers (loadtest_workers.py: the processes that
send the operations, shared by the scheduled and the authors' drivers), summary
(loadtest_summary.py: per bin and step, against the plan) and job (loadtest.py: one version on its
server). The plan and the summaries import no multiprocessing (tables.py and figures.py use them).

Method (series Introduction, "Load Testing Methodology"): Bulk Upsert and Get Reports run
concurrently, each from its own pool of workers (published: 20 each). After a warm-up of Get
Reports at the first report rate, four Bulk Upsert phases run at 250, 500, 750 and 1000 events/s
(batches of 250 events); inside each phase Get Reports rises from 25 to 250 requests/s by 25
every tenth of the phase. Published: 50-minute phases (200 minutes); here `phase_seconds`.

Open loop: every operation has an intended start time fixed before the test starts; a worker
sends it at that time, or as soon as it is free when it is late.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

import numpy as np
import polars as pl

from costlab.appversions.events import generate_events

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
    upsert_rates: tuple[float, ...] = PUBLISHED_UPSERT_RATES  # events/s, one per phase
    report_rates: tuple[float, ...] = PUBLISHED_REPORT_RATES  # requests/s, steps inside each phase
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
        return cls(
            phase_seconds=float(loadtest_config["phase_seconds"]),
            warmup_seconds=float(loadtest_config["warmup_seconds"]),
            upsert_rates=tuple(float(r) for r in loadtest_config["upsert_rates"]),
            report_rates=tuple(float(r) for r in loadtest_config["report_rates"]),
            batch_size=int(loadtest_config["batch_size"]),
            rate_scale=float(loadtest_config["rate_scale"]),
        )


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
            rows.append(
                (
                    "report",
                    phase,
                    step,
                    start,
                    end,
                    report_rate * plan.rate_scale,
                    report_rate * plan.rate_scale,
                )
            )
    return pl.DataFrame(
        rows,
        orient="row",
        schema={
            "kind": pl.Utf8,
            "phase": pl.Int32,
            "step": pl.Int32,
            "start_s": pl.Float64,
            "end_s": pl.Float64,
            "ops_per_s": pl.Float64,
            "events_per_s": pl.Float64,
        },
    )


def intended_starts(kind_segments: pl.DataFrame) -> pl.DataFrame:
    """Intended start times of one kind's operations, from its rate segments (sorted by start).

    Operation k starts when the cumulative target count (the integral of the rate) reaches
    k + 0.5, so a constant rate r gives starts at 0.5/r, 1.5/r, ... and fractional rates carry
    over segment boundaries instead of being rounded in each segment.
    """
    kind_segments = kind_segments.sort("start_s")
    starts, phases, steps = [], [], []
    cumulative = 0.0
    for seg in kind_segments.iter_rows(named=True):  # a few dozen segments, not per operation
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
        return pl.DataFrame(
            schema={"op_index": pl.Int64, "intended_s": pl.Float64, "phase": pl.Int32, "step": pl.Int32}
        )
    intended = np.concatenate(starts)
    return pl.DataFrame(
        {
            "op_index": np.arange(len(intended), dtype=np.int64),
            "intended_s": intended,
            "phase": np.concatenate(phases),
            "step": np.concatenate(steps),
        }
    )


def schedule(plan: LoadTestPlan) -> dict[str, pl.DataFrame]:
    """Intended starts per kind: {"report": ..., "upsert": ...}."""
    segs = segments(plan)
    return {kind: intended_starts(segs.filter(pl.col("kind") == kind)) for kind in KINDS}


def assign_workers(n_ops: int, workers: int) -> np.ndarray:
    """Operation i goes to worker i mod workers: consecutive operations on different workers."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers!r}")
    return np.arange(n_ops, dtype=np.int64) % workers


def loadtest_requests(
    plan: LoadTestPlan, new_events: pl.DataFrame, report_keys: list[str] | np.ndarray, seed: int
) -> tuple[dict[str, pl.DataFrame], pl.DataFrame, pl.DataFrame]:
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
    reports = pl.DataFrame(
        {
            "op_index": np.arange(n_reports, dtype=np.int64),
            "key": key_choice.astype(str),
            "end_date": end_dates,
        },
        schema={"op_index": pl.Int64, "key": pl.Utf8, "end_date": pl.Datetime("ms", "UTC")},
    )
    return plan_schedule, upsert_events, reports


def new_events_2020(events_per_year: int, seed: int, needed: int) -> pl.DataFrame:
    """The load test's new events: the generator continued into 2020 (same key space, date order).

    Only the first days of 2020 that hold `needed` events are generated (the published scale
    needs 7.5 million of 2020's 50 million); more than a year's worth is cycled by the caller.
    """
    days_2020 = (date(2021, 1, 1) - date(2020, 1, 1)).days
    days = min(days_2020, math.ceil(needed / events_per_year * days_2020) + 1)
    return generate_events(
        events_per_year, seed + 2020, start=date(2020, 1, 1), end=date(2020, 1, 1) + timedelta(days=days)
    )
