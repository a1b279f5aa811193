"""What tests take from the registries instead of writing it out again: the studies and the versions
(counts and names), the articles' versions once, and a version name no declaration can ever take.

Adding a study or a version then edits no test but its own (docs/development.md)."""
from __future__ import annotations

from costlab.appversions.registry import NAME_RE, PUBLISHED_NAMES
from costlab.registry import STUDY_NAMES

# The articles' 14 versions, in the order they publish them (Parts 1-3 of the series): the published fact,
# written here once. A version added later comes after them in the registry.
ARTICLE_VERSIONS = ("appV1", "appV2", "appV3", "appV4", "appV5R0", "appV5R1", "appV5R2", "appV5R3", "appV5R4",
                    "appV6R0", "appV6R1", "appV6R2", "appV6R3", "appV6R4")
# A version name NAME_RE refuses (letters, digits, _ and -, starting with a letter), so no version or variant
# can ever be declared with it: it stays unknown whatever is added (appV7, the tests' old example, could be).
UNKNOWN_VERSION = "appV7?"
assert not NAME_RE.match(UNKNOWN_VERSION)

# The columns of every findings table (results/findings.csv, each study's published_vs_reproduced.csv), in
# order: the contract of docs/report.md, written out here rather than read from costlab.finding.COLUMNS.
FINDINGS_COLUMNS = ("finding", "metric", "unit", "published", "reproduced", "interval", "risk", "ratio",
                    "tolerance", "verdict", "reason", "kind", "server_kind", "note", "samples", "band_low",
                    "band_high")

__all__ = ["ARTICLE_VERSIONS", "FINDINGS_COLUMNS", "PUBLISHED_NAMES", "STUDY_NAMES", "UNKNOWN_VERSION"]
