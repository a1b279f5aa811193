"""Snakemake entry point: results/findings.csv, every verdict row of every enabled study
(costlab.report.findings)."""

from pathlib import Path

from costlab.report.collect import collect_sections
from costlab.report.findings import findings_frame, verdict_counts, write_findings
from costlab.report.params import FindingsParams

params = FindingsParams.from_params(snakemake.params)  # noqa: F821
sections = collect_sections(Path("results"), {"studies": params.studies}, params.study_targets, None)
findings = findings_frame(sections, "results")
write_findings(findings, snakemake.output[0])  # noqa: F821
counts = ", ".join(f"{n} {verdict}" for verdict, n in verdict_counts(findings).items())
Path(snakemake.log[0]).write_text(f"{findings.height} findings: {counts or 'none'}\n")  # noqa: F821
