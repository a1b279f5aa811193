"""The study's figure names: what rules/appversions.smk needs to declare its jobs.

No altair, polars or pymongo here, so parsing the workflow stays cheap; figures.py takes these
from here.
"""
from __future__ import annotations

from costlab.appversions.registry import in_order

# (figure name, versions) as the articles compare them, then all versions together.
COMPARISONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("loadtest_appV5R0_vs_appV6R0", ("appV5R0", "appV6R0")),
    ("loadtest_appV6R1_vs_appV6R2", ("appV6R1", "appV6R2")),
    ("loadtest_appV6R3_vs_appV6R4", ("appV6R3", "appV6R4")),
)
STATIC_FIGURES = ("storage_per_event", "document_size")
# The load-test claim's two ends (resources/published/appversions_claims.csv): appV1 misses its targets,
# appV6R4 meets every one. With appversions.loadtest.versions null, these are the versions load tested
# where they are loaded (a load test is minutes a version: 14 would be the first run's half hour).
CLAIM_LOADTEST_VERSIONS = ("appV1", "appV6R4")


def tested_versions(section) -> list[str]:
    """The load-tested versions of an `appversions` config section: loadtest.versions; else the claim's two
    ends among the loaded versions; else every loaded version (load_versions, else versions)."""
    loaded = list(section.get("load_versions") or section.get("versions") or ())
    chosen = (section.get("loadtest") or {}).get("versions")
    if chosen:
        return list(chosen)
    return [v for v in CLAIM_LOADTEST_VERSIONS if v in loaded] or loaded


def loadtest_figures(loadtest_versions: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Comparison figures whose versions were all load tested, plus all versions together
    (unless those are exactly one comparison's versions: the same figure twice says nothing)."""
    tested = set(loadtest_versions)
    figures = [(name, versions) for name, versions in COMPARISONS if set(versions) <= tested]
    if tested and not any(set(versions) == tested for _, versions in figures):
        figures.append(("loadtest_all", tuple(in_order(loadtest_versions))))
    return figures


def figure_names(loadtest_versions: list[str]) -> list[str]:
    return [*STATIC_FIGURES, *(name for name, _ in loadtest_figures(loadtest_versions))]
