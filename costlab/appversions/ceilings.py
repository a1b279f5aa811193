"""What an appversions config plans, counted before any job, with its ceilings (costlab/plan.py runs them),
and its limits against this machine. Plain arithmetic, standard library only: the pre-check and the
Snakefile call it.

`upsert_rates: [1000000]`, `rate_scale: 100`, `phase_seconds: 86400` planned 8.64e12 operations and died
after hours of load and correctness ("Unable to allocate 62.9 TiB"); `events_per_year: 3e8` wrote 5.6 GB
of temporary file in 200 s. The ceilings are a few times the published scale (config/full.yaml), sized
against this machine's measured throughput (benchmarks/bench_plan_ceilings.py).
"""
from __future__ import annotations

from costlab.paths import user_file_path
from costlab.study import Ceiling

YEARS = 10  # the events span 2010-2020 (appversions/events.py); the authors' window is 0.08 % more
AUTHORS_WINDOW = 1.0008  # 500,390,000 events at 50,000,000 a year (window.py)
MAX_METRICS_PER_S = 10               # serverStatus samples a second in a load test (metrics_seconds >= 0.1)
MAX_BINS_PER_VERSION = 100_000       # load-test time bins per version (its seconds / bin_seconds)
LAYOUT_IMPORT_S = 20.0               # a layout file of yours is imported in a child with this time limit


def loadtest_operations(config: dict) -> float:
    """The sum of appversions.phases.expected_phase_operations: warm-up Get Reports, then per phase its Bulk
    Upserts and Get Reports."""
    loadtest = (config.get("appversions") or {}).get("loadtest") or {}
    scale, phase_s = float(loadtest["rate_scale"]), float(loadtest["phase_seconds"])
    reports = [float(r) for r in loadtest["report_rates"]]
    warmup = reports[0] * scale * float(loadtest["warmup_seconds"])
    upserts = sum(float(r) for r in loadtest["upsert_rates"]) * scale * phase_s / int(loadtest["batch_size"])
    gets = len(loadtest["upsert_rates"]) * sum(reports) * scale * phase_s / len(reports)
    return warmup + upserts + gets


def events(config: dict) -> float:
    return float((config.get("appversions") or {}).get("events_per_year", 0)) * YEARS * AUTHORS_WINDOW


def own_event_rows(config: dict) -> int | None:
    """The rows of your own events file (appversions.events: Parquet from its footer, CSV its lines but the
    header), None without one or where it cannot be read (the study's config check says why)."""
    path = (config.get("appversions") or {}).get("events")
    if not isinstance(path, str) or not path:
        return None

    resolved = user_file_path(path)
    try:
        if resolved.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq  # noqa: PLC0415  only where a config names a Parquet file of events

            with pq.ParquetFile(resolved) as parquet:
                return parquet.metadata.num_rows
        lines, last = 0, b"\n"
        with open(resolved, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                lines, last = lines + block.count(b"\n"), block[-1:]
        return max(0, lines + (last != b"\n") - 1)
    except Exception:  # noqa: BLE001  an unreadable file is the config check's to name
        return None


def engine_events(config: dict) -> float:
    """Events each engine-lab version job grows: your own events file's rows, else the generator's."""
    own = own_event_rows(config)
    if own is not None:
        return float(own)
    engine = config.get("engine") or {}
    return float((engine.get("appversions") or {}).get("events_per_year", 0)) * YEARS * AUTHORS_WINDOW


CEILINGS: dict[str, Ceiling] = {
    "loadtest_operations": Ceiling(
        "load-test operations per version",
        10_000_000,
        1_687_500,
        "appversions.loadtest: per phase upsert_rates[i] x rate_scale x phase_seconds / batch_size "
        "+ mean(report_rates) x rate_scale x phase_seconds, + report_rates[0] x rate_scale x warmup_seconds",
        loadtest_operations,
    ),
    "events": Ceiling(
        "events to generate", 1_000_000_000, 500_390_000, "appversions.events_per_year x 10 years", events
    ),
    "engine_events": Ceiling(
        "engine events per version", 5_000_000, 500_400,
        "engine.appversions.events_per_year x 10 years, or the rows of appversions.events",
        engine_events, engine=True,
    ),
}


def _loadtest_seconds(loadtest: dict) -> float:
    """A version's load test: the warm-up, then each phase of phase_seconds (its report-rate steps inside)."""
    phases = len(loadtest["upsert_rates"])
    return float(loadtest["warmup_seconds"]) + phases * float(loadtest["phase_seconds"])


def limit_problem(config: dict) -> str | None:
    """The load test's server metrics samples a second and its time bins, each against its limit: one line
    naming the key, the estimate and the limit, or None."""
    loadtest = (config.get("appversions") or {}).get("loadtest") or {}
    if not loadtest:
        return None
    seconds = _loadtest_seconds(loadtest)
    metrics = float(loadtest["metrics_seconds"])
    if 1 / metrics > MAX_METRICS_PER_S:
        return (f"invalid config key appversions.loadtest.metrics_seconds: {metrics:g} s asks for "
                f"{1 / metrics:.3g} server metrics samples a second ({seconds / metrics:.3g} in a "
                f"{seconds:g}-s load test), above the limit of {MAX_METRICS_PER_S} a second: allowed at "
                f"least {1 / MAX_METRICS_PER_S:g} s")
    bins = loadtest.get("bin_seconds")
    if bins is not None and seconds / float(bins) > MAX_BINS_PER_VERSION:
        return (f"invalid config key appversions.loadtest.bin_seconds: {float(bins):g} s cuts a "
                f"{seconds:g}-s load test into {seconds / float(bins):.3g} bins, above the limit of "
                f"{MAX_BINS_PER_VERSION:,}: allowed at least {seconds / MAX_BINS_PER_VERSION:.3g} s")
    return None
