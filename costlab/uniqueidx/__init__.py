"""Study uniqueidx: the walkthrough of "Unique Indexes Quirks and Unique Documents In an Array of
Documents" as an executable conformance check. Each of the six steps runs against any server
and records what the article says happens, what this server did, and pass / fail / error.
"""
from __future__ import annotations

from costlab.study import RuleAsk, Study

CHECK_S = 60                   # a few dozen commands

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
)
