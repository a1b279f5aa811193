# The report: results/report.html, one self-contained offline page with every study's header
# (server, host, scale, config), figures, tables and published-vs-reproduced table.
# Its inputs and params are what every enabled study registered (PLAN.study_targets: Study.targets, with
# not_run.json for the measured parts when there is no server), worked out when a job asks for them.
from pathlib import Path

import costlab.report.params as _report_params


# Every verdict row of every enabled study, one table: what the page opens with and the console counts.
rule findings:
    input:
        lambda wildcards: PLAN.report_inputs(),
    output:
        "results/findings.csv",
    params:
        **_report_params.FindingsParams.declare_later(
            lambda: _report_params.FindingsParams.declare(config, PLAN.study_targets)),
    log:
        "results/logs/findings.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/findings_table.py"


rule report:
    input:
        lambda wildcards: PLAN.report_inputs(),
        findings="results/findings.csv",
        run_manifest="results/run.json",
        compared=COMPARE_INPUTS,  # compare.with trees: a change there rebuilds the page
    output:
        "results/report.html",
    params:
        **_report_params.ReportParams.declare_later(lambda: _report_params.ReportParams.declare(
            config, PLAN.study_targets, COMPARE_TREES, Path(workflow.basedir) / "rules" / "captions",
            PLAN.measured_studies())),
    log:
        "results/logs/report.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report_html.py"
