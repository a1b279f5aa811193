# Runs side by side: results/run.json records what this run was (config without credentials,
# server backend), so another machine's report can put it beside its own; `compare.with` names
# other results/ trees, checked now: a tree without a manifest (an older costlab's) stops the
# workflow before any job, naming what is missing. See docs/servers.md.
from costlab.report.runs import check_tree as _check_compare_tree
from costlab.report.runs import compare_inputs as _compare_inputs
import costlab.report.params as _report_params

RUN_MANIFEST = "results/run.json"
COMPARE_TREES = [_check_compare_tree(tree) for tree in config["compare"]["with"]]
COMPARE_INPUTS = [path for tree in COMPARE_TREES for path in _compare_inputs(tree)]
ALL_TARGETS.append(RUN_MANIFEST)


rule run_manifest:
    output:
        RUN_MANIFEST,
    params:
        **_report_params.ManifestParams.declare(config, SERVER_BACKEND),
    log:
        "results/logs/run_manifest.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/run_manifest.py"
