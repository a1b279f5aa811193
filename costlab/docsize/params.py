"""The docsize rules' params: one dataclass per rule, declared here once (costlab.jobs says why).

Light imports only (no polars, pymongo, WiredTiger): the rule files import it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

from costlab.docsize.documents import DECLARED, ORDERS, DocumentDeclaration
from costlab.engine.job_keys import EngineKeys, engine_keys
from costlab.jobs import JobParams
from costlab.namespaces import data_params
from costlab.repeats import COUNT_KEY


class Data(TypedDict):
    """The loaded data's keys (costlab.namespaces.data_params): they name the database."""
    docs_per_collection: int
    seed: int
    customers: int
    spread_customer: bool


class Runs(TypedDict):
    """docsize.runs: each run's warm-ups and timed queries."""
    same_window: dict[str, Any]
    random_windows: dict[str, Any]
    small_cache: dict[str, Any]


class Protocol(TypedDict):
    """The docsize keys of the server's work: the loaded orders, the window, the runs."""
    docs_per_collection: int
    window_minutes: int
    seed: int
    customers: int
    runs: Runs


class ModelStudy(Protocol):
    """The docsize section the model reads: every size, variant and count (not your documents)."""
    sizes_kb: list[int]
    variants: dict[str, Any]


class DocsizeEngineKeys(EngineKeys):
    docsize: dict[str, Any]   # engine.docsize


def _data_section(data: Data) -> dict[str, Any]:
    """The loaded data's keys (namespaces.data_params) in the docsize section's own shape."""
    return {
        "docs_per_collection": data["docs_per_collection"],
        "seed": data["seed"],
        "customers": data["customers"],
        "variants": {"spread_customer": data["spread_customer"]},
    }


@dataclass(frozen=True)
class ModelParams(JobParams):
    study: ModelStudy   # every size, variant and count is the model's (not your documents)

    @classmethod
    def declare(cls, config):
        # not your documents (their own jobs), nor the repeats (more repeats rerun the measuring jobs only)
        return {"study": {k: v for k, v in config["docsize"].items() if k not in ("documents", COUNT_KEY)}}


@dataclass(frozen=True)
class LoadParams(JobParams):
    data: Data

    @classmethod
    def declare(cls, config):
        return {"data": data_params(config, "docsize")}

    def section(self) -> dict[str, Any]:
        return _data_section(self.data)


# The order a measuring job queries in (costlab.docsize.run.job_order): a warm run's queries interleaved
# (RMIT), a cold-start run's blocks. A param, so a results tree measured in the older order (all of one shape,
# then the next) is measured again rather than read as if it were this order's.
QUERY_ORDER = "interleaved (RMIT); cold-start runs in blocks, the article's order in every repeat"


@dataclass(frozen=True)
class MeasureParams(JobParams):
    data: Data
    window_minutes: int
    runs: Runs
    order: str        # QUERY_ORDER (the repeat is the job's {rep} wildcard, not a param: docsize.repeats)

    @classmethod
    def declare(cls, config):
        ds = config["docsize"]
        return {
            "data": data_params(config, "docsize"),
            "window_minutes": ds["window_minutes"],
            "runs": ds["runs"],
            "order": QUERY_ORDER,
        }

    def section(self) -> dict[str, Any]:
        return {**_data_section(self.data), "window_minutes": self.window_minutes, "runs": self.runs}


@dataclass(frozen=True)
class TablesParams(JobParams):
    window_minutes: int

    @classmethod
    def declare(cls, config):
        return {"window_minutes": config["docsize"]["window_minutes"]}


FiguresParams = TablesParams   # the figures read the same one key



@dataclass(frozen=True)
class EngineParams(JobParams):
    engine: DocsizeEngineKeys   # the shared engine keys and engine.docsize (engine_keys)
    sizes_kb: list[int]
    seed: int
    customers: int

    @classmethod
    def declare(cls, config):
        ds = config["docsize"]
        return {"engine": engine_keys(config, "docsize"), "sizes_kb": ds["sizes_kb"], "seed": ds["seed"],
                "customers": ds["customers"]}

    def section(self) -> dict[str, Any]:
        return {"sizes_kb": self.sizes_kb, "seed": self.seed, "customers": self.customers}


@dataclass(frozen=True)
class EngineVsMongodParams(JobParams):
    """The engine lab against mongod (docsize_engine_vs_mongod): the server's work (the loaded orders, the
    window, the runs' warm-ups and queries) and the lab's keys, should the lab run that work again."""
    engine: DocsizeEngineKeys
    study: Protocol

    @classmethod
    def declare(cls, config):
        ds = config["docsize"]
        return {"engine": engine_keys(config, "docsize"),
                "study": {key: ds[key]
                          for key in ("docs_per_collection", "window_minutes", "seed", "customers", "runs")}}


class _DeclaredDocument:
    """A job of one declared document: its `name` and `document` fields as a DocumentDeclaration."""

    def declaration(self):
        return DocumentDeclaration(self.name, self.document["sample"], tuple(self.document["projected"]),
                                   bool(self.document.get("grow", True)),
                                   self.document.get("compare_to", ORDERS))


@dataclass(frozen=True)
class DocumentEngineParams(_DeclaredDocument, JobParams):
    """One declared document's engine-lab job (docsize.documents.<name>): the orders' engine settings, so its
    numbers stand beside the orders' at the same scale."""
    engine: DocsizeEngineKeys
    sizes_kb: list[int]
    seed: int
    customers: int
    name: str
    document: dict[str, Any]   # its declaration: sample, projected, grow, compare_to

    @classmethod
    def declare(cls, config):
        ds = config["docsize"]
        declared = ds.get("documents") or {}
        # the {document} wildcard's declaration: a changed one reruns that document's job alone
        return {"engine": engine_keys(config, "docsize"), "sizes_kb": ds["sizes_kb"], "seed": ds["seed"],
                "customers": ds["customers"], "name": lambda wildcards: wildcards.document,
                "document": lambda wildcards: declared.get(wildcards.document)}

    def section(self) -> dict[str, Any]:
        return {"sizes_kb": self.sizes_kb, "seed": self.seed, "customers": self.customers}


@dataclass(frozen=True)
class DocumentFindingsParams(JobParams):
    """The rows of "Your variants" for the declared documents: each one's compare_to."""
    documents: dict[str, str]   # name -> compare_to

    @classmethod
    def declare(cls, config):
        return {"documents": DECLARED.compare_pairs(config["docsize"])}


def _document_fields(config) -> dict:
    """A declared document's name and declaration, from the rule's {document} wildcard."""
    declared = config["docsize"].get("documents") or {}
    return {"name": lambda wildcards: wildcards.document,
            "document": lambda wildcards: declared.get(wildcards.document)}


@dataclass(frozen=True)
class DocumentLoadParams(_DeclaredDocument, JobParams):
    """One declared document's load at one size (the orders' data keys: its count, seed and customers)."""
    data: Data
    sizes_kb: list[int]   # a document kept as it is stands beside the nearest size
    name: str
    document: dict[str, Any]

    @classmethod
    def declare(cls, config):
        return {"data": data_params(config, "docsize"), "sizes_kb": config["docsize"]["sizes_kb"],
                **_document_fields(config)}

    def section(self) -> dict[str, Any]:
        return {**_data_section(self.data), "sizes_kb": self.sizes_kb}


@dataclass(frozen=True)
class DocumentMeasureParams(_DeclaredDocument, JobParams):
    """One run on one declared document's dataset, with the orders' protocol keys."""
    data: Data
    window_minutes: int
    runs: Runs
    sizes_kb: list[int]
    name: str
    document: dict[str, Any]
    order: str        # QUERY_ORDER

    @classmethod
    def declare(cls, config):
        ds = config["docsize"]
        return {"data": data_params(config, "docsize"), "window_minutes": ds["window_minutes"],
                "runs": ds["runs"], "sizes_kb": ds["sizes_kb"], **_document_fields(config),
                "order": QUERY_ORDER}

    def section(self) -> dict[str, Any]:
        return {**_data_section(self.data), "window_minutes": self.window_minutes, "runs": self.runs,
                "sizes_kb": self.sizes_kb}
