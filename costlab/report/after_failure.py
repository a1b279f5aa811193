"""The page after a failed run (rules/common.smk onerror): a study whose measuring job failed to rerun
shows its kept measurement and says so (costlab.jobs). Imports the report only when it has to."""
from __future__ import annotations

import sys
from pathlib import Path

from costlab.jobs import after_failed_run


def rebuild_after_failed_rerun(results: str | Path, config: dict, study_targets: dict | None) -> None:
    """Date the kept outputs of failed reruns before their inputs and rebuild the page to mark them."""

    page = Path(results) / "report.html"
    if not after_failed_run(results) or not page.exists():
        return
    from costlab.report.page import build_report  # noqa: PLC0415  heavy (altair): only after a failed rerun

    try:
        build_report(results, page, config, study_targets)
    except Exception as err:  # noqa: BLE001 - the run has already failed; say why the page is as it was
        print(f"costlab: the report was not rebuilt after the failure: {err}", file=sys.stderr)
