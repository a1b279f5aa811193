"""The arraygrowth rules' params: one dataclass per rule, declared here once (costlab.jobs says why).

Light imports only (no polars, pymongo, WiredTiger): the rule files import it.
"""
from __future__ import annotations

from dataclasses import dataclass

from costlab.engine.job_keys import engine_keys
from costlab.jobs import JobParams


@dataclass(frozen=True)
class RunParams(JobParams):
    ns: list[int]

    @classmethod
    def declare(cls, config):
        return {"ns": config["arraygrowth"]["ns"]}


@dataclass(frozen=True)
class FallbackSweepParams(JobParams):
    fallback: dict    # arraygrowth.fallback: the sweep's variants and sizes (the model's too)

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
    engine: dict      # the shared engine keys and engine.arraygrowth (engine_keys)
    ns: list[int]
    profiles: list[str]
    workloads: list[str]
    fallback: dict

    @classmethod
    def declare(cls, config):
        ag = config["arraygrowth"]
        return {"engine": engine_keys(config, "arraygrowth"), "ns": ag["ns"], "profiles": ag["profiles"],
                "workloads": ag["workloads"], "fallback": ag["fallback"]}
