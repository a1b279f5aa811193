# The report: results/report.html, one self-contained offline page with every study's header
# (server, host, scale, config), figures, tables and published-vs-reproduced table.
# Included LAST in the Snakefile: STUDY_TARGETS holds what every enabled study registered.
from pathlib import Path

import costlab.report.params as _report_params

REPORT_INPUTS = list(dict.fromkeys(path for paths in STUDY_TARGETS.values() for path in paths))
ALL_TARGETS.append("results/report.html")


# Every verdict row of every enabled study, one table: what the page opens with and the console counts.
rule findings:
    input:
        REPORT_INPUTS,
    output:
        "results/findings.csv",
    params:
        **_report_params.FindingsParams.declare(config, STUDY_TARGETS),
    log:
        "results/logs/findings.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/findings_table.py"


rule report:
    input:
        REPORT_INPUTS,
        findings="results/findings.csv",
        run_manifest=RUN_MANIFEST,
        compared=COMPARE_INPUTS,  # compare.with trees: a change there rebuilds the page
    output:
        "results/report.html",
    params:
        **_report_params.ReportParams.declare(
            config, STUDY_TARGETS, COMPARE_TREES, Path(workflow.basedir) / "rules" / "captions",
            [s for s in STUDY_TARGETS if s not in NOT_RUN_STUDIES]),
    log:
        "results/logs/report.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report_html.py"
