"""The report rules' params: findings, the page and the run manifest (costlab.jobs says why).

Their values are the workflow's (what each study registered, the compared trees) and the config
without credentials. Light imports only (no polars, pymongo, WiredTiger): the rule files import it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from costlab.jobs import JobParams
from costlab.report.runs import public_config


def _public(config: Mapping[str, Any]) -> dict[str, Any]:
    return public_config(config)


@dataclass(frozen=True)
class FindingsParams(JobParams):
    study_targets: dict[str, list[str]]   # study -> the files it registered for `all`
    studies: list[str]    # the enabled studies

    @classmethod
    def declare(cls, config, study_targets: Mapping[str, list[str]] | None = None):
        return {"study_targets": {study: list(paths) for study, paths in (study_targets or {}).items()},
                "studies": config["studies"]}


@dataclass(frozen=True)
class ReportParams(JobParams):
    study_targets: dict[str, list[str]]   # what each study registered decides what its section shows
    config: dict[str, Any]   # the run's config without credentials: the page shows it (a change rebuilds it)
    compare_with: list[str]
    captions_dir: str
    measured_studies: list[
        str
    ]  # measured on a server in this run: a not_run.json from a run without one is stale

    @classmethod
    def declare(cls, config, study_targets: Mapping[str, list[str]] | None = None, compare_with=(),
                captions_dir: str = "", measured_studies=()):
        return {"study_targets": {study: list(paths) for study, paths in (study_targets or {}).items()},
                "config": _public(config), "compare_with": [str(tree) for tree in compare_with],
                "captions_dir": str(captions_dir), "measured_studies": list(measured_studies)}


@dataclass(frozen=True)
class ManifestParams(JobParams):
    config: dict[str, Any]   # the run's config without credentials
    server_backend: str | None

    @classmethod
    def declare(cls, config, server_backend: str | None = None):
        return {"config": _public(config), "server_backend": server_backend}
