"""How a verdict's wording is counted (standard library only: the console summary reads it too).

Studies write verdicts as sentences ("reproduced", "not reproduced", "not comparable at this scale
(...)", "not comparable (stand-in)", "not run: no MongoDB server"); the report and the summary count
them by what they say about the finding.
"""
from __future__ import annotations

VERDICT_CLASSES = ("reproduced", "not reproduced", "not comparable", "not run", "other")


def verdict_class(verdict: str | None) -> str:
    """reproduced | not reproduced | not comparable | not run | other, from a verdict's wording."""
    text = (verdict or "").strip().lower()
    if text.startswith(("not run", "not in this run", "not measured")):
        return "not run"
    if text.startswith("not comparable") or "stand-in" in text:
        return "not comparable"
    if text.startswith("not "):
        return "not reproduced"
    if text.startswith("reproduced"):
        return "reproduced"
    return "other"
