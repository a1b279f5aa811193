"""Walking explain output into the facts a study records: stages, keys and docs examined."""
from __future__ import annotations

from typing import Any, Iterator, Mapping

# Stages that read the document itself. IDHACK (_id lookups before 8.0) and the 8.0 express
# stages (src/mongo/db/exec/express/express_plan.h) fetch the record with no FETCH stage above
# them, so "no FETCH" alone does not make a plan covered.
FETCHING_STAGES = frozenset({"FETCH", "COLLSCAN", "CLUSTERED_IXSCAN", "IDHACK", "EXPRESS_IXSCAN",
                             "EXPRESS_CLUSTERED_IXSCAN"})
# Stages that answer from index keys alone when nothing above them fetches.
INDEX_ONLY_STAGES = frozenset({"IXSCAN", "COUNT_SCAN", "DISTINCT_SCAN"})


def _winning_plan(explain: Mapping) -> Mapping:
    planner = explain.get("queryPlanner", {})
    plan = planner.get("winningPlan", {})
    # Slot-based engine (MongoDB 7+) nests the classic-shaped tree under queryPlan.
    return plan.get("queryPlan", plan)


def _children(node: Mapping) -> list:
    return list(node.get("inputStages") or ([node["inputStage"]] if "inputStage" in node else []))


def stage_names(plan: Mapping) -> list[str]:
    """Stages from the leaf up, e.g. ['IXSCAN', 'FETCH', 'PROJECTION_SIMPLE']."""
    names: list[str] = []
    node: Any = plan
    chain = []
    while isinstance(node, Mapping) and node:
        chain.append(node.get("stage", "?"))
        children = _children(node)
        node = children[0] if children else None
    names.extend(reversed(chain))
    return names


def _all_nodes(plan: Mapping) -> Iterator[Mapping]:
    """Every stage of the tree, every branch (an OR plan has several inputs)."""
    stack: list[Any] = [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping) and node:
            yield node
            stack.extend(_children(node))


def is_covered(plan: Mapping, docs_examined: int | None) -> bool:
    """True when the query was answered from the index alone.

    Covered means PROJECTION_COVERED in the plan, an express plan that says projectionCovered
    (src/mongo/db/query/plan_explainer_express.cpp), or zero documents examined by a plan that
    scans an index and has no stage that reads documents. The last needs executionStats:
    with queryPlanner verbosity only the first two can say "covered".
    """
    nodes = list(_all_nodes(plan))
    stages = {node.get("stage") for node in nodes}
    if "PROJECTION_COVERED" in stages or any(node.get("projectionCovered") is True for node in nodes):
        return True
    return (docs_examined == 0 and not stages & FETCHING_STAGES and bool(stages & INDEX_ONLY_STAGES))


def plan_summary(explain: Mapping) -> dict:
    """stages (leaf first, ' > '-joined too), keys/docs examined and docs returned."""
    stats = explain.get("executionStats", {})
    plan = _winning_plan(explain)
    stages = stage_names(plan)
    docs_examined = stats.get("totalDocsExamined")
    return {
        "stages": stages,
        "plan": " > ".join(stages),
        "keys_examined": stats.get("totalKeysExamined"),
        "docs_examined": docs_examined,
        "n_returned": stats.get("nReturned"),
        "covered": is_covered(plan, docs_examined),
    }
