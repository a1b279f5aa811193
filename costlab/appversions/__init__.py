"""Study `appversions`: the 14 application versions of "The Cost of Not Knowing MongoDB".

events: the event generator; versions: the registry (schema, Bulk Upsert, Get Reports, indexes,
collection options per version); statements: the Bulk Upsert as raw BSON update statements and
their checked sender (what the loader and the load test send); model: server-free collection
sizes and expected reports; correctness: Get Reports of a loaded collection vs the model.
"""
from __future__ import annotations

import math

from costlab.appversions.ceilings import CEILINGS, YEARS
from costlab.appversions.ceilings import limit_problem as loadtest_limit_problem
from costlab.appversions.names import tested_versions
from costlab.appversions.phases import empty_phase_problem
from costlab.appversions.registry import config_problem as versions_problem
from costlab.appversions.targets import targets
from costlab.appversions.variants import declared_names, register_variants
from costlab.appversions.variants import problem as variants_problem
from costlab.jobs import snakemake_job
from costlab.repeats import COUNT_KEY, SERVER_REPEATS
from costlab.study import ENGINE_S, SERVER_FREE_MB, EngineOverlay, MeasuredStream, Overlay, RuleAsk, Study

# Assumed throughput floors (chosen low so a cluster time limit is rarely hit; not measurements).
EVENT_ROW_BYTES = 200          # one event in memory (64-hex key ~72 B, date 8 B, status) with a working copy
EVENTS_ROWS_PER_S = 500_000    # events generated / read / checked per second, server-free
LOAD_EVENTS_PER_S = 10_000     # Bulk Upsert events per second into a fresh server
LOADTEST_NEW_EVENTS_YEARS = 1  # the load test sends 2020's events

# Measured on the development machine (2 cores shared with other sessions, 2026-12-02; issue 26):
# the largest figure per million events at 32 M, 128 M (`python benchmarks/bench_model_scale.py 2 32
# 128`) and 500.39 M events (config/full.yaml's `snakemake results/appversions/model/stats.csv`
# under /usr/bin/time -v), and the largest peak RSS at any of them (docs/slurm.md has the table).
# events: 0.128 / 0.120 / 0.117 CPU s per M, peak 417 / 435 / 448 MB; model: 0.494 / 0.463 /
# 0.573 CPU s per M, peak 526 / 594 / 707 MB (the model's peak grows a little with the users).
MEASURED = "bench_model_scale.py 2 32 128 and the full.yaml run, 2026-12-02"
EVENTS_STREAM = MeasuredStream(cpu_s_per_million=0.13, peak_mb=450, measured=MEASURED)
MODEL_STREAM = MeasuredStream(cpu_s_per_million=0.58, peak_mb=710, measured=MEASURED)


def _events(config: dict, years: int = YEARS) -> int:
    return int(config["appversions"]["events_per_year"]) * years


def _event_table_mb(events: int) -> int:
    return max(SERVER_FREE_MB, math.ceil(events * EVENT_ROW_BYTES / 2**20))


def _loaded(config: dict) -> list[str]:
    av = config["appversions"]
    return list(av.get("load_versions") or av["versions"])


def _tested(config: dict) -> list[str]:
    return tested_versions(config["appversions"])


def _reloads(config: dict) -> int:
    """Loads after the first (appversions.repeats: each later repeat reloads each load-tested version)."""
    return (SERVER_REPEATS.count(config, "appversions") - 1) * len(_tested(config))


def _loadtest_s(config: dict, idle: bool = False) -> float:
    lt = config["appversions"]["loadtest"]
    schedule = float(lt["warmup_seconds"]) + float(lt["phase_seconds"]) * len(lt["upsert_rates"])
    if idle:
        schedule += float(lt.get("idle_seconds") or 0)   # the authors' idle period after the test
    return schedule + _events(config, LOADTEST_NEW_EVENTS_YEARS) / EVENTS_ROWS_PER_S


def _loadtest_threads(config: dict) -> int:
    lt = config["appversions"]["loadtest"]
    return int(lt["upsert_workers"]) + int(lt["report_workers"])


def _loadtest_ask(idle: bool, jobs) -> RuleAsk:
    # the two load-test drivers (scheduled and the authors' closed loop) ask alike
    return RuleAsk(
        work_s=lambda config: _loadtest_s(config, idle),
        threads=_loadtest_threads,
        client_mb=lambda config: _event_table_mb(_events(config, LOADTEST_NEW_EVENTS_YEARS)),
        jobs=jobs,
        timed=True,
    )


def version_subset_problem(section: dict) -> str | None:
    """Loaded versions must be configured versions, and load-tested ones loaded (empty = all of the
    list above): the workflow has no rule that makes a version's data otherwise."""
    configured = list(section.get("versions") or ())
    loaded = list(section.get("load_versions") or configured)
    tested = tested_versions(section)
    for key, chosen, allowed, what in (
        ("appversions.load_versions", loaded, configured, "in appversions.versions"),
        ("appversions.loadtest.versions", tested, loaded, "loaded"),
    ):
        extra = sorted(set(chosen) - set(allowed))
        if extra:
            return f"invalid config key {key}: {extra} are not {what} (allowed: {', '.join(allowed)})"
    return None


def _config_problem(config: dict) -> str | None:
    study = config.get("appversions") or {}
    # the version lists name registered versions (the registry, not the schema, lists them) or the
    # variants the config declares (appversions.variants: checked first, registered by the rules)
    problem = (versions_problem(study, declared_names(study)) or variants_problem(study)
               or version_subset_problem(study))
    if problem:
        return problem
    if study.get("events") is not None:   # your own events (appversions.events): read and checked now
        from costlab.appversions.user_events import events_problem  # noqa: PLC0415  heavy: polars; the rule files import this module

        problem = events_problem(study)
        if problem:
            return problem
    loadtest = study.get("loadtest") or {}
    return empty_phase_problem(loadtest) if loadtest else None


STUDY = Study(
    name="appversions",
    title="The cost of not knowing MongoDB",
    source='"The Cost of Not Knowing MongoDB", Introduction and Parts 1-3',
    measured=(
        "One fraud-report application built 14 ways (appV1 to appV6R4): for each schema the number of "
        "documents, document and data sizes, storage and index size per event, and a phased load test "
        "of Bulk Upsert and Get Reports (rates reached and latencies)."
    ),
    data_keys=("events_per_year", "seed", "event_window", "batch_size"),
    # your own events (appversions.events) name the loaded data too, when given
    derived_data=lambda section: {"events": section["events"]} if section.get("events") else {},
    measuring_rules={
        "appversions_load": RuleAsk(
            work_s=lambda config: _events(config) / LOAD_EVENTS_PER_S,
            threads=lambda config: int(config["appversions"]["load_workers"]),
            # each worker holds one chunk of a million events
            client_mb=lambda config: (
                int(config["appversions"]["load_workers"]) * math.ceil(1_000_000 * EVENT_ROW_BYTES / 2**20)
            ),
            jobs=lambda config: len(_loaded(config)) + _reloads(config),
        ),
        # still reads the whole event table into memory (the key strings built for every event)
        "appversions_correctness": RuleAsk(
            work_s=lambda config: _events(config) / EVENTS_ROWS_PER_S,
            client_mb=lambda config: _event_table_mb(_events(config)),
            jobs=lambda config: len(_loaded(config)),
        ),
        "appversions_loadtest": _loadtest_ask(
            False, lambda config: len(_tested(config)) * SERVER_REPEATS.count(config, "appversions")),
        "appversions_loadtest_authors": _loadtest_ask(
            True,
            lambda config: (
                len(_tested(config)) if config["appversions"]["loadtest"].get("authors_driver") else 0
            ),
        ),
    },
    other_rules={
        # streamed chunk by chunk: memory flat at any event count, time linear in it
        "appversions_events": RuleAsk(
            work_s=lambda config: _events(config) / 1e6 * EVENTS_STREAM.cpu_s_per_million,
            stream=EVENTS_STREAM,
        ),
        "appversions_model": RuleAsk(
            work_s=lambda config: _events(config) / 1e6 * MODEL_STREAM.cpu_s_per_million, stream=MODEL_STREAM
        ),
        "appversions_engine_version": RuleAsk(work_s=lambda config: ENGINE_S),
    },
    config_problem=_config_problem,
    kept_rules=("appversions_correctness", "appversions_loadtest", "appversions_loadtest_authors"),
    job_selecting_keys=(("versions",), ("load_versions",), ("loadtest", "versions"),
                        ("loadtest", "authors_driver"), (COUNT_KEY,),
                        ("your_keys",)),   # the report's sizing alone: no job reads it
    ceilings=CEILINGS,
    limit_problem=loadtest_limit_problem,
    engine_cache_keys=(("engine", "appversions", "cache_mb"),),
    engine_replica_set=True,
    targets_from=targets,
    overlay=Overlay(
        "collection_stats",
        "version",
        "total_storage_bytes_per_event",
        "O",
        "Storage per event by app version, runs overlaid",
        "storage + index bytes per event",
    ),
    engine_overlay=EngineOverlay(
        "storage",
        "version",
        ("storage_bytes_per_event", "index_bytes_per_event"),
        "O",
        "Storage per event by app version on the engine lab, runs overlaid",
        "storage + index bytes per event",
        published_y=("published_storage_bytes_per_event", "published_index_bytes_per_event"),
    ),
    published=(
        "appversions_collection_stats.csv",
        "appversions_event_stats.csv",
        "appversions_loadtest_facts.csv",
        "appversions_loadtest_method.csv",
        "appversions_tolerances.csv", "appversions_claims.csv"),
    your_schema="costlab.appversions.your_schema:your_schema",
)

# In a Snakemake job of this study, your own versions (appversions.variants) are versions in its process
# too, registered once here rather than by each script (its spawned workers register them from the
# environment this sets: variants.py). Other jobs need not: they import no layout for it.
_JOB = snakemake_job()
if _JOB is not None and str(getattr(_JOB, "rule", "")).startswith(f"{STUDY.name}_"):
    register_variants(_JOB.config)
