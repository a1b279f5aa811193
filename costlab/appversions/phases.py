"""How many operations each load-test phase plans, from the config alone (no polars: the pre-check
and the Snakefile call it before any job).

The schedule (loadtest_plan.intended_starts) starts operation k when the cumulative target count
reaches k + 0.5, carried over phase and step boundaries, so a phase whose expected count
(rate x seconds) is at least 1 plans at least one operation, and one below 1 may plan none.
"""
from __future__ import annotations

from typing import Any


def expected_phase_operations(loadtest: dict[str, Any]) -> list[tuple[str, str, float]]:
    """(phase, what sets its count, expected operations) for the warm-up and each upsert phase."""
    scale = float(loadtest["rate_scale"])
    phase_s, warmup_s, batch = float(loadtest["phase_seconds"]), float(loadtest["warmup_seconds"]), \
        int(loadtest["batch_size"])
    reports = [float(r) for r in loadtest["report_rates"]]
    step_s = phase_s / len(reports)
    rows = []
    if warmup_s > 0:
        rows.append(("warm-up Get Reports", f"report_rates[0] {reports[0]:g} x rate_scale {scale:g} x "
                     f"warmup_seconds {warmup_s:g}", reports[0] * scale * warmup_s))
    for phase, upsert in enumerate((float(r) for r in loadtest["upsert_rates"]), start=1):
        rows.append(
            (
                f"phase {phase} Bulk Upserts",
                f"upsert_rates[{phase - 1}] {upsert:g} x rate_scale {scale:g} x "
                f"phase_seconds {phase_s:g} / batch_size {batch}",
                upsert * scale * phase_s / batch,
            )
        )
        rows.append((f"phase {phase} Get Reports", f"sum(report_rates) x rate_scale {scale:g} x step "
                     f"{step_s:g} s", sum(reports) * scale * step_s))
    return rows


def empty_phase_problem(loadtest: dict[str, Any]) -> str | None:
    """Why this load test would measure nothing in some phase (one line naming the keys), or None."""
    for phase, how, expected in expected_phase_operations(loadtest):
        if expected < 1:
            return (f"invalid config key appversions.loadtest.rate_scale: the {phase} would plan "
                    f"{expected:.3g} operations ({how}); every phase needs at least 1: raise "
                    "appversions.loadtest.rate_scale or phase_seconds")
    return None
