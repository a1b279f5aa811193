"""What a study declares, once: the `Study` each costlab/<study>/__init__.py holds as STUDY.

costlab.registry collects them; every list of studies (the report's sections, the databases'
data keys, what a cluster job asks for, the rules files the Snakefile includes, the config's
`studies` values) is derived from there. Adding a study: docs/development.md.

Standard library only: every Snakemake invocation imports the registry to plan.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from costlab.targets import Targets

# What a job asks a cluster for when its study says nothing more (costlab/cluster.py adds a measuring
# job's own server): memory of a server-free job that holds no event table, and an engine-lab sweep
# (WiredTiger in-process): not timed here, a generous guess.
SERVER_FREE_MB = 2000
ENGINE_S = 1800


def _one(config: dict) -> int:
    return 1


def _none(config: dict) -> None:
    return None


@dataclass(frozen=True)
class MeasuredStream:
    """A server-free step that streams its input: its measured cost per million rows and its peak memory."""
    cpu_s_per_million: float   # CPU seconds (user + system, all threads) per million rows
    peak_mb: int               # peak RSS, the same at every row count measured
    measured: str              # where the figures come from


@dataclass(frozen=True)
class RuleAsk:
    """What one job of a rule needs, scaled from the whole config; costlab.cluster turns it into
    threads, memory and a time limit (and, for a measuring rule, a whole node and its own server)."""
    work_s: Callable[[dict], float]               # seconds of work of the rule's largest job
    threads: Callable[[dict], int] = _one         # the client's processes at once
    client_mb: Callable[[dict], int | None] = _none   # the client's memory (None: SERVER_FREE_MB)
    # measuring rules only (they start or connect to a server): how many jobs `all` runs (0: none)
    jobs: Callable[[dict], int] | None = None
    stream: MeasuredStream | None = None          # a streamed step: what its ask comes from
    # its result is a wall-clock time: on one machine it runs alone (every core), since another job
    # beside it would share the CPUs, the disk and the OS cache the timing is about
    timed: bool = False


@dataclass(frozen=True)
class Ceiling:
    """A cost a config plans, counted before any job (costlab/plan.py), and the most it may be. A quantity
    two studies declare under one name (documents to generate) is their sum: same `what` and `limit`, the
    published values added, the keys joined."""
    what: str
    limit: float
    published: float   # the same quantity at the published scale (config/full.yaml), for the message
    keys: str          # the keys that multiply to it
    count: Callable[[dict], float]   # from the whole (validated) config; called only when the study runs
    engine: bool = False             # the engine lab's: counted only while engine.enabled
    # bytes of the engine lab's scratch (checked against the free space of engine.workdir): the key to lower
    scratch_key: str | None = None


@dataclass(frozen=True)
class Overlay:
    """A study's main measurement, from one of its tables, drawn for every compared run."""
    table: str
    x: str
    y: str
    x_type: str              # Q | O
    title: str
    y_title: str
    facet: str | None = None
    filters: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class EngineOverlay:
    """A study's engine-lab measurement (results/<study>/engine/<table>.csv) drawn for every run that has it,
    with the published values (from resources/published/<published>, or columns of the run's own table)."""
    table: str
    x: str
    y: tuple[str, ...]              # summed
    x_type: str
    title: str
    y_title: str
    facet: str | None = None
    filters: tuple[tuple[str, str], ...] = ()
    scales: tuple[str, str] = ("linear", "linear")   # x and y: costlab.report.compare.SCALES
    published: str | None = None  # a CSV in resources/published/
    published_y: tuple[str, ...] = ()  # its y column(s); or, with published=None, this run's table's
    published_filters: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Study:
    """One published study as the workflow, the report and a cluster see it."""
    name: str                 # results/<name>/, config key <name>, rules/<name>.smk
    title: str                # the report section's heading
    source: str               # the article
    measured: str             # the report's paragraph: what is measured
    # The Snakemake rules (relative to the checkout, or absolute for a study kept elsewhere).
    rules_file: str = ""
    # What changes the study's loaded data (and only that): config keys of its section, plus what
    # `derived_data` computes from the section. Names the databases (costlab.namespaces) and is the
    # rules' `data` param, so a change reloads and nothing else does.
    data_keys: tuple[str, ...] = ()
    derived_data: Callable[[dict], dict] = field(default=lambda section: {})
    # Rules that start or connect to a server (each runs alone on a node), and the server-free rules
    # that ask for more than one CPU, SERVER_FREE_MB and a minute: rule name -> RuleAsk.
    measuring_rules: Mapping[str, RuleAsk] = field(default_factory=dict)
    other_rules: Mapping[str, RuleAsk] = field(default_factory=dict)
    # A config problem a schema cannot say (checked when the study is enabled): the message, or None.
    config_problem: Callable[[dict], str | None] = _none
    # The study's config section's JSON schema, for a study config/schema.yaml does not describe.
    config_schema: Mapping | None = None
    colors: Mapping[str, Mapping[str, str]] = field(default_factory=dict)   # category -> value -> colour
    overlay: Overlay | None = None               # compared runs: the main measurement
    engine_overlay: EngineOverlay | None = None  # compared runs: the engine lab's
    published: tuple[str, ...] = ()              # its files in resources/published/
    # The user's own variants' absolute costs beside their compare_to: "module:function", a function of the
    # study's results folder and the run's config giving a costlab.yourschema.YourSchema (loaded when the
    # report is built: costlab.yourschema.load); None: the study takes no variants of the user's
    your_schema: str | None = None
    # Measuring rules whose outputs the rules file wraps in kept(...) (rules/common.smk): Snakemake keeps
    # them while the job reruns and puts them back when it fails; the job records the failure
    # (costlab/jobs.py) and the page says which run it shows. A measuring rule left out loses its last
    # good result on a failed rerun (tests/test_failed_rerun.py checks the plan against this list).
    kept_rules: tuple[str, ...] = ()
    # Config keys (paths in its section) that choose which measuring jobs run, not what one measures: left
    # out of the study's hash (costlab.config.study_config_hash), so fewer sizes ask for no rerun.
    job_selecting_keys: tuple[tuple[str, ...], ...] = ()
    # What a config plans for it, counted before any job, each with its ceiling (costlab/plan.py).
    ceilings: Mapping[str, Ceiling] = field(default_factory=dict)
    # Its keys past a limit of this machine (not multiplied by plan_ceiling_factor): the message, or None.
    limit_problem: Callable[[dict], str | None] = _none
    # Its engine-lab caches (config paths, MB): held to WiredTiger's largest cache and this machine's memory.
    engine_cache_keys: tuple[tuple[str, ...], ...] = ()
    # Engine-lab settings WiredTiger would refuse part-way (checked while engine.enabled): a message or None.
    engine_problem: Callable[[dict], str | None] = _none
    # Topology: its engine jobs model a replica set, so they read engine.replica_set (engine/job_keys.py).
    engine_replica_set: bool = False
    # What `all` builds of it and the names its rules file reads, from the whole (validated) config: see
    # targets() and costlab/targets.py. A study whose rules file registers nothing leaves it out.
    targets_from: Callable[[dict], Targets] = field(default=lambda config: Targets())

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or not self.name.islower():
            raise ValueError(f"study name {self.name!r}: allowed lower-case letters, digits and _")
        if not self.rules_file:
            object.__setattr__(self, "rules_file", f"rules/{self.name}.smk")
        both = set(self.measuring_rules) & set(self.other_rules)
        if both:
            raise ValueError(f"study {self.name}: rules {sorted(both)} are both measuring and server-free")
        for rule, ask in self.measuring_rules.items():
            if ask.jobs is None:
                raise ValueError(f"study {self.name}: measuring rule {rule} says no job count (RuleAsk.jobs)")
        not_measuring = sorted(set(self.kept_rules) - set(self.measuring_rules))
        if not_measuring:
            raise ValueError(f"study {self.name}: kept rules {not_measuring} are not among its measuring "
                             f"rules (allowed: {', '.join(self.measuring_rules) or 'none'})")
        for path in self.job_selecting_keys:
            if not isinstance(path, tuple) or not path or not all(isinstance(key, str) for key in path):
                raise ValueError(f"study {self.name}: job-selecting key {path!r} is not a path of key names")

    def targets(self, config: dict) -> Targets:
        """Its targets under `config` (its files, each group marked server-free or measured, in the order
        `all` and the report take them) and the names its rules file derives: plain data, no Snakemake."""
        return self.targets_from(config)

    def data_params(self, config: dict) -> dict:
        """The study's settings that change its loaded data, from the whole config."""
        section = config.get(self.name) or {}
        return {key: section.get(key) for key in self.data_keys} | self.derived_data(section)
