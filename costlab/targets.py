"""What `all` builds: each study's targets (`Study.targets(config)`), and this run's plan over them.

A study declares its targets as plain data (costlab/<study>/targets.py): its files in the order it
registers them, each group marked by whether it needs a MongoDB server, and the names its rules file
derives from the config (versions, runs, datasets, which optional parts are on). The rule files read
those names and define every rule unconditionally; what runs is what the targets ask for.

`RunPlan` puts the enabled studies' targets together for one Snakemake invocation. The server probe
(costlab.server.availability) runs the first time a job needs its answer (`all`, the report, a server
setup) and never for a target that needs neither (`snakemake <a model figure>`).
Standard library only: every Snakemake invocation imports it to plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import product
from typing import Any, Callable, Iterable, Mapping, NamedTuple

RUN_MANIFEST = "results/run.json"
REPORT = "results/report.html"


class TargetGroup(NamedTuple):
    """Files a study registers together, and whether they need a MongoDB server (measured on one, or
    following such a measurement)."""

    paths: tuple[str, ...]
    server: bool


def server_free(*paths: str) -> TargetGroup:
    """Files built with no server (models, the engine lab)."""
    return TargetGroup(tuple(str(p) for p in paths), False)


def measured(*paths: str) -> TargetGroup:
    """Files measured on a server and what follows them: with no server, the study's not_run.json instead."""
    return TargetGroup(tuple(str(p) for p in paths), True)


def not_run_path(study: str) -> str:
    return f"results/{study}/not_run.json"


@dataclass(frozen=True)
class Targets:
    """One study's targets under one config: its file groups in registration order, and its rules
    file's names (the study's own frozen dataclass; None when its rules file needs none)."""

    groups: tuple[TargetGroup, ...] = ()
    names: Any = None

    @property
    def server_free(self) -> list[str]:
        return [path for group in self.groups if not group.server for path in group.paths]

    @property
    def measured(self) -> list[str]:
        return [path for group in self.groups if group.server for path in group.paths]

    def registered(self, study: str, has_server: bool) -> list[str]:
        """The files `all` builds of the study: with no server, its measured groups give way to its
        not_run.json, registered where its first measured group stands."""
        paths: list[str] = []
        for group in self.groups:
            if not group.server or has_server:
                paths.extend(group.paths)
            elif not_run_path(study) not in paths:
                paths.append(not_run_path(study))
        return paths


def files(names: Iterable[str], exts: Iterable[str], folder: str) -> list[str]:
    """`<folder>/<name>.<ext>` for each name, then each extension (a figure's png, svg and vl.json)."""
    exts = tuple(exts)
    return [f"{folder}/{name}.{ext}" for name in names for ext in exts]


FIGURE_EXTS = ("png", "svg", "vl.json")


# A study's engine lab against mongod (costlab.engine.vs_mongod): its table in results/<study>/, its figure
# in results/<study>/figures/; the summary and the report find it by this name
VS_MONGOD = "engine_vs_mongod"
VS_MONGOD_FILE = f"{VS_MONGOD}.csv"


def vs_mongod_paths(folder: str) -> dict[str, str]:
    """A study's engine lab against mongod (costlab.engine.vs_mongod): its table and its figure."""
    return {"csv": f"{folder}/{VS_MONGOD_FILE}", "png": f"{folder}/figures/{VS_MONGOD}.png",
            "svg": f"{folder}/figures/{VS_MONGOD}.svg"}


def engine_groups(config: Mapping[str, Any], folder: str, engine_files: Iterable[str], figure: str,
                  *beside_mongod: str) -> tuple[TargetGroup, ...]:
    """The engine lab's targets while engine.enabled: its files and its figure (server-free), then what it
    compares with mongod (measured); none with the engine lab off."""
    if not config["engine"]["enabled"]:
        return ()
    groups = (server_free(*engine_files), server_free(*files([figure], FIGURE_EXTS, f"{folder}/figures")))
    return groups + ((measured(*beside_mongod),) if beside_mongod else ())


class RunPlan:
    """What this Snakemake invocation builds, worked out once and only when asked.

    `targets` holds every registered study's targets under the config (their rules files read the
    names whether or not the study is enabled); the server backend, and with it which measured files
    `all` and the report take, is probed the first time `backend` is read.
    """

    def __init__(
        self, config: Mapping[str, Any], targets: Mapping[str, Targets], probe: Callable[[dict], str | None]
    ) -> None:
        self._config = config
        self.targets = dict(targets)
        self._probe = probe

    def names(self, study: str) -> Any:
        """The names study's rules file reads (Study.targets(config).names)."""
        if study not in self.targets:
            raise ValueError(f"unknown study {study!r}; allowed: {', '.join(self.targets)}")
        return self.targets[study].names

    @cached_property
    def backend(self) -> str | None:
        """docker | binary | external, or None for no server: probed once, when first read."""
        return self._probe(self._config["server"])

    @cached_property
    def study_targets(self) -> dict[str, list[str]]:
        """Enabled study -> the files `all` builds of it, in registry order (the report's params); a study
        that declares no targets is left out (the page says it has no rules yet)."""
        enabled = self._config["studies"]
        return {
            study: targets.registered(study, self.backend is not None)
            for study, targets in self.targets.items()
            if study in enabled and targets.groups
        }

    @property
    def not_run_studies(self) -> list[str]:
        """Enabled studies whose mongod part is not run for want of a server."""
        return (
            []
            if self.backend is not None
            else [
                s
                for s, t in self.targets.items()
                if s in self._config["studies"] and any(g.server for g in t.groups)
            ]
        )

    def measured_studies(self) -> list[str]:
        """Enabled studies measured on a server in this run."""
        return [s for s in self.study_targets if s not in self.not_run_studies]

    def report_inputs(self) -> list[str]:
        """Every file the enabled studies registered, once each, in order: the findings' and the page's."""
        return list(dict.fromkeys(path for paths in self.study_targets.values() for path in paths))

    def all_targets(self) -> list[str]:
        """`all`'s inputs: every study's registered files, the run manifest, then the report."""
        return [path for paths in self.study_targets.values() for path in paths] + [RUN_MANIFEST, REPORT]


def expand(pattern: str, **values: Iterable[Any]) -> list[str]:
    """`pattern` formatted with every combination of the values, the first keyword varying slowest
    (Snakemake's expand: the rule files' inputs and these targets name files alike)."""
    keys = list(values)
    return [
        pattern.format(**dict(zip(keys, combo))) for combo in product(*(list(v) for v in values.values()))
    ]
