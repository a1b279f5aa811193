# The report: results/report.html, one self-contained offline page with every study's header
# (server, host, scale, config), figures, tables and published-vs-reproduced table.
# Included LAST in the Snakefile: STUDY_TARGETS holds what every enabled study registered.
from pathlib import Path

from costlab.config import config_hash as _config_hash

REPORT_INPUTS = list(dict.fromkeys(path for paths in STUDY_TARGETS.values() for path in paths))
ALL_TARGETS.append("results/report.html")


# Every verdict row of every enabled study, one table: what the page opens with and the console counts.
rule findings:
    input:
        REPORT_INPUTS,
    output:
        "results/findings.csv",
    params:
        study_targets={study: list(paths) for study, paths in STUDY_TARGETS.items()},
        studies=config["studies"],
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
        # What each study registered decides what its section shows; a config change rebuilds the page.
        study_targets={study: list(paths) for study, paths in STUDY_TARGETS.items()},
        studies=config["studies"],
        compare_with=[str(tree) for tree in COMPARE_TREES],
        config_hash=_config_hash(config),
        captions_dir=str(Path(workflow.basedir) / "rules" / "captions"),
        # studies measured on a server in this run: a not_run.json left from a run without one is stale
        measured_studies=[s for s in STUDY_TARGETS if s not in NOT_RUN_STUDIES],
    log:
        "results/logs/report.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/report_html.py"
