"""Study uniqueidx: the walkthrough of "Unique Indexes Quirks and Unique Documents In an Array of
Documents" as an executable conformance check. Each of the six steps runs against any server
and records what the article says happens, what this server did, and pass / fail / error.
"""
from __future__ import annotations

from dataclasses import dataclass

from costlab.study import RuleAsk, Study
from costlab.targets import Targets, measured

CHECK_S = 60                   # a few dozen commands


@dataclass(frozen=True)
class UniqueIdxNames:
    tables: dict[str, str]   # uniqueidx_conformance's tables
    provenance: str


NAMES = UniqueIdxNames(
    tables={name: f"results/uniqueidx/tables/{name}.csv"
            for name in ("conformance", "published_vs_reproduced")},
    provenance="results/uniqueidx/provenance/conformance.json",
)


def _targets(config: dict) -> Targets:
    """The conformance check's tables and provenance: the same under any config."""
    return Targets(groups=(measured(*NAMES.tables.values(), NAMES.provenance),), names=NAMES)


STUDY = Study(
    name="uniqueidx",
    title="Unique index quirks",
    source='"Unique Indexes Quirks and Unique Documents in an Array of Documents"',
    measured=(
        "A step-by-step conformance check of six unique-index behaviours: missing fields as null, "
        "compound keys over arrays, duplicates within one document, partial indexes, and a validator "
        "that keeps the documents of an array unique."
    ),
    measuring_rules={"uniqueidx_conformance": RuleAsk(work_s=lambda config: CHECK_S, jobs=lambda config: 1)},
    published=("uniqueidx_claims.csv",),
    targets_from=_targets,
)
