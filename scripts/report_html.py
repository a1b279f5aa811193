"""Snakemake entry point: write results/report.html from what the enabled studies registered."""
from costlab.report.page import build_report
from costlab.report.params import ReportParams
from costlab.server.setup import remove_stale_not_run

params = ReportParams.from_params(snakemake.params)  # noqa: F821 (Snakemake global)
stale = remove_stale_not_run("results", params.measured_studies)
summary = build_report("results", snakemake.output[0], params.config, study_targets=params.study_targets,  # noqa: F821
                       captions_dir=params.captions_dir, compare_with=params.compare_with,
                       findings_path=snakemake.input.findings)  # noqa: F821
with open(snakemake.log[0], "w") as log:  # noqa: F821
    states = ", ".join(f"{study}: {state}" for study, state in summary.studies.items())
    log.write(
        f"wrote {summary.path} in {summary.seconds:.2f} s; stand-in results: {summary.stand_in}; {states}\n"
    )
    for path in stale:
        log.write(f"removed {path}: this run measured the study on a server\n")
    for problem in summary.problems:
        log.write(f"warning: {problem}\n")
