"""The arraygrowth rules' params: one dataclass per rule, declared here once (costlab.jobs says why).

Light imports only (no polars, pymongo, WiredTiger): the rule files import it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from costlab.engine.job_keys import EngineKeys, engine_repeat_keys
from costlab.jobs import JobParams
from costlab.repeats import ENGINE_REPEATS


class Fallback(TypedDict):
    """arraygrowth.fallback: the sweep's variants and sizes."""
    enabled: bool
    updates: int
    elements_per_update: int
    big_element_bytes: int
    small_doc_elements: int
    slice_elements: int
    variants: list[Any]


class ArraygrowthEngineKeys(EngineKeys):
    arraygrowth: dict[str, Any]   # engine.arraygrowth but its repeats


def _element(config):
    """A user's element's declaration (None for the article's workloads): a changed one reruns its jobs."""
    elements = config["arraygrowth"].get("elements") or {}
    return lambda wildcards: elements.get(wildcards.ag_workload)


@dataclass(frozen=True)
class RunParams(JobParams):
    ns: list[int]
    element: dict[str, Any] | None = None   # the workload's declaration when it is your element

    @classmethod
    def declare(cls, config):
        return {"ns": config["arraygrowth"]["ns"], "element": _element(config)}


@dataclass(frozen=True)
class FallbackSweepParams(JobParams):
    fallback: Fallback   # the sweep's variants and sizes (the model's too)

    @classmethod
    def declare(cls, config):
        return {"fallback": config["arraygrowth"]["fallback"]}


@dataclass(frozen=True)
class FigureParams(JobParams):
    figure: str       # which figure of costlab.arraygrowth.figures this rule draws

    @classmethod
    def declare(cls, config, figure: str = ""):
        return {"figure": figure}


@dataclass(frozen=True)
class EngineParams(JobParams):
    """One repeat's engine job (arraygrowth_engine_repeat): not the repeats, so another count reruns no
    measured repeat."""
    engine: ArraygrowthEngineKeys   # the shared engine keys and engine.arraygrowth (engine_repeat_keys)
    ns: list[int]
    profiles: list[str]
    workloads: list[str]
    fallback: Fallback
    elements: dict[str, dict[str, Any]]   # your own elements, every one measured in the engine lab

    @classmethod
    def declare(cls, config):
        ag = config["arraygrowth"]
        return {"engine": engine_repeat_keys(config, "arraygrowth"), "ns": ag["ns"],
                "profiles": ag["profiles"],
                "workloads": ag["workloads"], "fallback": ag["fallback"],
                "elements": ag.get("elements") or {}}


@dataclass(frozen=True)
class EngineMergeParams(JobParams):
    """The merge of the repeats (arraygrowth_engine): which workloads its log_bytes.csv keeps, what each of
    your elements is compared to, and how many repeats it expects."""
    workloads: list[str]
    elements: dict[str, dict[str, Any]]
    repeats: int      # engine.arraygrowth.repeats

    @classmethod
    def declare(cls, config):
        ag = config["arraygrowth"]
        return {"workloads": ag["workloads"], "elements": ag.get("elements") or {},
                "repeats": ENGINE_REPEATS.count(config, "arraygrowth")}


@dataclass(frozen=True)
class EngineVsMongodParams(JobParams):
    """The engine lab against mongod (arraygrowth_engine_vs_mongod): the lab's keys, and the rate that dates
    the replica set's commits."""
    engine: ArraygrowthEngineKeys
    writes_per_second: int

    @classmethod
    def declare(cls, config):
        return {"engine": engine_repeat_keys(config, "arraygrowth"),
                "writes_per_second": config["engine"]["arraygrowth"]["writes_per_second"]}
