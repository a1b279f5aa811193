# Runs side by side: results/run.json records what this run was (config without credentials,
# server backend), so another machine's report can put it beside its own; `compare.with` names
# other results/ trees, checked now: a tree without a manifest (an older costlab's) stops the
# workflow before any job, naming what is missing. See docs/servers.md.
import costlab.report.params as _report_params
from costlab.report.runs import check_tree as _check_compare_tree, compare_inputs as _compare_inputs

COMPARE_TREES = [_check_compare_tree(tree) for tree in config["compare"]["with"]]
COMPARE_INPUTS = [path for tree in COMPARE_TREES for path in _compare_inputs(tree)]


rule run_manifest:
    output:
        "results/run.json",
    params:
        **_report_params.ManifestParams.declare_later(lambda: _report_params.ManifestParams.declare(config, PLAN.backend)),
    log:
        "results/logs/run_manifest.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/run_manifest.py"
