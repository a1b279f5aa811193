"""The flatnested rules' params: one dataclass per rule, declared here once (costlab.jobs says why).

Light imports only (no polars, pymongo, WiredTiger): the rule files import it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from costlab.flatnested.shapes import MAX_FIELDS, shapes_for
from costlab.jobs import JobParams
from costlab.namespaces import data_params


class Data(TypedDict):
    """The loaded data's keys (costlab.namespaces.data_params): they name the database."""
    documents: int
    seed: int
    groups: int       # sub-documents of the widest structured shape


@dataclass(frozen=True)
class ValuesParams(JobParams):
    documents: int
    groups: int       # sub-documents of the widest structured shape (costlab.namespaces)
    seed: int

    @classmethod
    def declare(cls, config):
        data = data_params(config, "flatnested")
        return {"documents": data["documents"], "groups": data["groups"], "seed": data["seed"]}


@dataclass(frozen=True)
class ModelParams(JobParams):
    shapes: list[str]

    @classmethod
    def declare(cls, config):
        return {"shapes": [s.name for s in shapes_for(config["flatnested"]["flat_fields"], MAX_FIELDS)]}


@dataclass(frozen=True)
class LoadParams(JobParams):
    data: Data

    @classmethod
    def declare(cls, config):
        return {"data": data_params(config, "flatnested")}


@dataclass(frozen=True)
class MeasureParams(JobParams):
    data: Data
    runs: int
    warmup_runs: int

    @classmethod
    def declare(cls, config):
        fn = config["flatnested"]
        return {
            "data": data_params(config, "flatnested"),
            "runs": fn["runs"],
            "warmup_runs": fn["warmup_runs"],
        }
