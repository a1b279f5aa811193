"""Walking explain output into the facts a study records: stages, keys and docs examined."""
from __future__ import annotations

from typing import Any, Mapping


def _winning_plan(explain: Mapping) -> Mapping:
    planner = explain.get("queryPlanner", {})
    plan = planner.get("winningPlan", {})
    # Slot-based engine (MongoDB 7+) nests the classic-shaped tree under queryPlan.
    return plan.get("queryPlan", plan)


def stage_names(plan: Mapping) -> list[str]:
    """Stages from the leaf up, e.g. ['IXSCAN', 'FETCH', 'PROJECTION_SIMPLE']."""
    names: list[str] = []
    node: Any = plan
    chain = []
    while isinstance(node, Mapping) and node:
        chain.append(node.get("stage", "?"))
        children = node.get("inputStages") or ([node["inputStage"]] if "inputStage" in node else [])
        node = children[0] if children else None
    names.extend(reversed(chain))
    return names


def plan_summary(explain: Mapping) -> dict:
    """stages (leaf first, ' > '-joined too), keys/docs examined and docs returned."""
    stats = explain.get("executionStats", {})
    stages = stage_names(_winning_plan(explain))
    return {
        "stages": stages,
        "plan": " > ".join(stages),
        "keys_examined": stats.get("totalKeysExamined"),
        "docs_examined": stats.get("totalDocsExamined"),
        "n_returned": stats.get("nReturned"),
        "covered": "FETCH" not in stages and "COLLSCAN" not in stages and bool(stages),
    }
