"""The appversions rules' params: one dataclass per rule, declared here once (costlab.jobs says why).

Light imports only (no polars, pymongo, WiredTiger): the rule files import it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, TypedDict

from costlab.appversions import names
from costlab.engine.job_keys import EngineKeys, engine_keys, engine_repeat_keys
from costlab.jobs import JobParams
from costlab.namespaces import data_params
from costlab.repeats import ENGINE_REPEATS

# Load-test keys that change only the tables (binning, tolerance) or which versions and drivers run
# (those choose the jobs, not what one job does): another value must not rerun a load test.
LOADTEST_TABLE_KEYS = ("versions", "bin_seconds", "tolerance", "authors_driver", "idle_seconds")


class _DataSometimes(TypedDict, total=False):
    # total=False, not NotRequired: this module's annotations are strings, which TypedDict takes as required
    events: str   # your own events file (appversions.events)


class Data(_DataSometimes):
    """The loaded data's keys (costlab.namespaces.data_params): they name the database."""
    events_per_year: int
    seed: int
    event_window: str
    batch_size: int


class LoadtestSchedule(TypedDict):
    """loadtest_schedule(config): what changes a load test."""
    profile: str
    phase_seconds: float
    warmup_seconds: float
    upsert_rates: list[float]
    report_rates: list[float]
    rate_scale: float
    batch_size: int
    upsert_workers: int
    report_workers: int
    metrics_seconds: float


class AuthorsLoadtestSchedule(LoadtestSchedule):
    idle_seconds: float


class LoadtestSection(AuthorsLoadtestSchedule):
    """The whole appversions.loadtest section."""
    versions: list[str] | None
    bin_seconds: float | None
    tolerance: float
    authors_driver: bool


class VersionEngineKeys(EngineKeys):
    appversions: dict[str, Any]   # engine.appversions (but its repeats, for a repeat's job)


def loadtest_schedule(config: Mapping[str, Any]) -> dict[str, Any]:
    """What changes a load test (schedule, workers, sampling): the loadtest keys but LOADTEST_TABLE_KEYS."""
    return {k: v for k, v in config["appversions"]["loadtest"].items() if k not in LOADTEST_TABLE_KEYS}


def tested_versions(config: Mapping[str, Any]) -> list[str]:
    """The load-tested versions (costlab.appversions.names.tested_versions)."""
    return names.tested_versions(config["appversions"])


def _declaration(config: Mapping[str, Any]) -> Callable[[Any], Any]:
    """A variant's declaration (None for a published version): a changed one reruns the version's job."""
    variants = config["appversions"]["variants"]
    return lambda wildcards: variants.get(wildcards.version)


def events_file(config: Mapping[str, Any]) -> str | None:
    """appversions.events: your own events file (None: the generator's events). Its content is the rules'
    input (rules/common.smk by_content); its path is a param, so naming another file reruns the jobs."""
    return config["appversions"].get("events") or None


@dataclass(frozen=True)
class EventsParams(JobParams):
    events_per_year: int
    seed: int
    window: str
    events_file: str | None   # your own events (appversions.events) in place of the generator's

    @classmethod
    def declare(cls, config):
        av = config["appversions"]
        return {"events_per_year": av["events_per_year"], "seed": av["seed"], "window": av["event_window"],
                "events_file": events_file(config)}


@dataclass(frozen=True)
class ModelParams(JobParams):
    versions: list[str]
    variants: dict[str, dict[str, Any]]   # your own versions' declarations: a changed one is modelled again
    tolerance: float | None
    events_per_year: int
    seed: int
    window: str
    events_file: str | None   # your own events: the model's rows at this run's events are not the article's

    @classmethod
    def declare(cls, config):
        av = config["appversions"]
        return {
            "versions": av["versions"],
            "variants": av["variants"],
            "tolerance": av["model_tolerance"],
            **EventsParams.declare(config),
        }


@dataclass(frozen=True)
class CorrectnessParams(JobParams):
    samples: int
    midday_samples: int
    seed: int
    profile: str      # the load test's server profile, on which the check runs
    data: Data        # the loaded data's keys: they name the database the check reads (costlab.namespaces)

    @classmethod
    def declare(cls, config):
        av = config["appversions"]
        return {
            "samples": av["correctness_samples"],
            "midday_samples": av["midday_samples"],
            "seed": av["correctness_seed"],
            "profile": av["loadtest"]["profile"],
            "data": data_params(config, "appversions"),
        }


@dataclass(frozen=True)
class LoadParams(JobParams):
    data: Data
    declaration: dict[str, Any] | None   # a variant's declaration (None for a published version)
    load_workers: int
    profile: str

    @classmethod
    def declare(cls, config):
        av = config["appversions"]
        return {
            "data": data_params(config, "appversions"),
            "declaration": _declaration(config),
            "load_workers": av["load_workers"],
            "profile": av["loadtest"]["profile"],
        }


@dataclass(frozen=True)
class LoadtestParams(JobParams):
    data: Data
    loadtest: LoadtestSchedule   # never the tables' tolerance and binning

    @classmethod
    def declare(cls, config):
        return {"data": data_params(config, "appversions"), "loadtest": loadtest_schedule(config)}


@dataclass(frozen=True)
class AuthorsLoadtestParams(JobParams):
    data: Data
    loadtest: AuthorsLoadtestSchedule   # loadtest_schedule(config) and the authors' idle_seconds

    @classmethod
    def declare(cls, config):
        return {
            "data": data_params(config, "appversions"),
            "loadtest": {
                **loadtest_schedule(config),
                "idle_seconds": config["appversions"]["loadtest"]["idle_seconds"],
            },
        }


@dataclass(frozen=True)
class TablesParams(JobParams):
    loadtest: LoadtestSection   # binning and tolerance are the tables' own
    model_tolerance: float | None
    variants: dict[str, dict[str, Any]]   # which version each variant is compared to
    events_file: str | None   # your own events: sizes per event are not the article's, not judged by them

    @classmethod
    def declare(cls, config):
        av = config["appversions"]
        return {
            "loadtest": av["loadtest"],
            "model_tolerance": av["model_tolerance"],
            "variants": av["variants"],
            "events_file": events_file(config),
        }


@dataclass(frozen=True)
class FiguresParams(JobParams):
    loadtest_versions: list[str]
    loadtest: LoadtestSection

    @classmethod
    def declare(cls, config):
        return {"loadtest_versions": tested_versions(config), "loadtest": config["appversions"]["loadtest"]}


@dataclass(frozen=True)
class EngineVersionParams(JobParams):
    engine: VersionEngineKeys   # the shared engine keys, engine.appversions and engine.replica_set
    declaration: dict[str, Any] | None
    batch_size: int   # the load step's batches, applied as it sends them
    load_workers: int
    seed: int         # appversions.seed: repeat 1's events seed; repeat r's derives from (seed, r)
    event_window: str
    events_file: str | None   # your own events (appversions.events): every repeat grows them, not generated

    @classmethod
    def declare(cls, config):
        av = config["appversions"]
        return {
            "engine": engine_repeat_keys(config, "appversions"),
            "declaration": _declaration(config),
            "batch_size": av["batch_size"],
            "load_workers": av["load_workers"],
            "seed": av["seed"],
            "event_window": av["event_window"],
            "events_file": events_file(config),
        }


@dataclass(frozen=True)
class EngineVsMongodParams(JobParams):
    """The engine lab against mongod (appversions_engine_vs_mongod): the shared engine keys (compressors,
    scratch directory, replica set); the work itself (events, batches, workers, cache) is the loads'."""
    engine: EngineKeys

    @classmethod
    def declare(cls, config):
        return {"engine": {key: value for key, value in engine_keys(config, "appversions").items()
                           if key != "appversions"}}


@dataclass(frozen=True)
class EngineParams(JobParams):
    versions: list[str]
    variants: dict[str, dict[str, Any]]   # which version each variant is compared to
    repeats: int      # engine.appversions.repeats: the version jobs merged per version
    events_file: str | None   # your own events: storage per event is not the article's, not judged by it

    @classmethod
    def declare(cls, config):
        av = config["appversions"]
        return {"versions": av["versions"], "variants": av["variants"],
                "repeats": ENGINE_REPEATS.count(config, "appversions"), "events_file": events_file(config)}
