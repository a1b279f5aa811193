"""The HTML report: one self-contained page (no network) with every study's header, figures and tables.

Figures are embedded as their Vega-Lite spec (.vl.json) and drawn by the Vega/Vega-Lite/vega-embed
JavaScript that vl-convert bundles offline, inlined once; a figure without a spec falls back to its
inline SVG, then to its PNG as a data URI. A study that is disabled or has no results is a
"not run" section with the command that runs it, never an error.

Collecting (costlab.report.collect: results -> sections) and presenting (costlab.report.views:
sections -> the template's values) are separate; this module joins them and writes the page.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from costlab.config import ROOT
from costlab.io import atomic_path
from costlab.report.collect import add_comparison, collect_sections
from costlab.report.findings import findings_frame, read_findings
from costlab.report.settings import default_config
from costlab.report.views import render_page


@dataclass
class ReportSummary:
    path: Path
    studies: dict[str, str]       # study -> "shown" / "disabled" / "no results"
    stand_in: bool
    problems: list[str]
    seconds: float


def build_report(results_dir: str | Path, out_path: str | Path, config: dict,
                 study_targets: dict[str, list[str]] | None = None, captions_dir: str | Path | None = None,
                 defaults: dict | None = None, compare_with: list[str | Path] | None = None,
                 findings_path: str | Path | None = None) -> ReportSummary:
    """Write the report page for every known study and return what it showed.

    study_targets: the paths each study registered (its Study.targets; the workflow's PLAN.study_targets);
    None scans results/<study>/{tables,figures,provenance}/ instead (building outside Snakemake).
    A study enabled in config but absent from study_targets has no rules yet.
    compare_with: other results trees (config compare.with) shown beside this run.
    findings_path: results/findings.csv (the findings rule's output); None collects the findings here.
    """
    started = time.perf_counter()
    out_path = Path(out_path)
    captions = Path(captions_dir) if captions_dir is not None else ROOT / "rules" / "captions"
    defaults = default_config() if defaults is None else defaults
    sections = collect_sections(Path(results_dir), config, study_targets, captions)
    # this run's findings, before the other runs' results join the sections
    findings = (
        read_findings(findings_path) if findings_path is not None else findings_frame(sections, results_dir)
    )
    if compare_with:
        add_comparison(sections, Path(results_dir), compare_with)
    page = render_page(sections, findings, config, defaults, out_path.parent, datetime.now(timezone.utc))
    with atomic_path(out_path) as tmp:
        tmp.write_text(page, encoding="utf-8")
    states = {s.info.name: ("disabled" if not s.enabled else "shown" if s.has_results else "no results")
              + ("; mongod part not run: no MongoDB server" if s.enabled and s.not_run is not None else "")
              for s in sections}
    problems = [f"{s.info.name}: {p}" for s in sections for p in s.problems]
    return ReportSummary(out_path, states, any(s.stand_in for s in sections), problems,
                         time.perf_counter() - started)
