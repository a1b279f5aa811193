"""Study `arraygrowth`: WiredTiger journal bytes of a growing array, standalone vs replica set.

Source: "Linear array growth in MongoDB" (../shared/seeds/004_57aab6fbec664121.txt).
Modules: workloads (what is sent to the server), run (measuring jobs -> raw rows),
model (server-free size conditions of WiredTiger's delta path), fit (power-law exponent),
tables and figures (what the report shows), published (the article's numbers).
"""
from __future__ import annotations

from costlab.arraygrowth.ceilings import CEILINGS
from costlab.arraygrowth.elements import problem
from costlab.arraygrowth.targets import targets
from costlab.study import ENGINE_S, EngineOverlay, Overlay, RuleAsk, Study

WRITE_OPS_PER_S = 100          # assumed single-document updates per second (arrays grow large)


def _config_problem(config: dict) -> str | None:
    """A user's elements (arraygrowth.elements) and the workloads naming them: one line naming the key."""

    return problem(config.get("arraygrowth") or {})


def _fallback_jobs(config: dict) -> int:
    study = config["arraygrowth"]
    return len(study["profiles"]) if study["fallback"]["enabled"] else 0


def _fallback_s(config: dict) -> float:
    fallback = config["arraygrowth"]["fallback"]
    return len(fallback["variants"]) * int(fallback["updates"]) / WRITE_OPS_PER_S


STUDY = Study(
    name="arraygrowth",
    title="Linear array growth",
    source='"Linear array growth in MongoDB"',
    measured=(
        "Pushing N timestamps into one document's array versus inserting N documents: the WiredTiger "
        "journal bytes written, which the article finds grow quadratically with N on a standalone and "
        "linearly on a single-node replica set."
    ),
    measuring_rules={
        "arraygrowth_run": RuleAsk(
            work_s=lambda config: sum(int(n) for n in config["arraygrowth"]["ns"]) / WRITE_OPS_PER_S,
            jobs=lambda config: (
                len(config["arraygrowth"]["profiles"]) * len(config["arraygrowth"]["workloads"])
            ),
        ),
        "arraygrowth_fallback": RuleAsk(work_s=_fallback_s, jobs=_fallback_jobs),
    },
    other_rules={"arraygrowth_engine_repeat": RuleAsk(work_s=lambda config: ENGINE_S)},
    kept_rules=("arraygrowth_run", "arraygrowth_fallback"),
    job_selecting_keys=(("profiles",), ("workloads",)),
    ceilings=CEILINGS,
    engine_replica_set=True,
    config_problem=_config_problem,
    targets_from=targets,
    overlay=Overlay(
        "runs",
        "n",
        "log_bytes",
        "Q",
        "Journal bytes of N $push, runs overlaid",
        "wiredTiger.log bytes written",
        facet="profile",
        filters=(("workload", "push"),),
    ),
    engine_overlay=EngineOverlay(
        "log_bytes",
        "n",
        ("log_bytes",),
        "Q",
        "Journal bytes of N $push on the engine lab, runs overlaid",
        "journal bytes written (bytes, log)",
        facet="profile",
        filters=(("workload", "push"),),
        scales=("log", "log"),
        published="arraygrowth_log_bytes.csv",
        published_y=("log_bytes",),
        published_filters=(("workload", "push"),),
    ),
    published=("arraygrowth_cursor_calls.csv", "arraygrowth_log_bytes.csv", "arraygrowth_tolerances.csv",
               "arraygrowth_claims.csv"),
    your_schema="costlab.arraygrowth.your_schema:your_schema",
)
