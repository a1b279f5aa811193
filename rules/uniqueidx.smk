# Study uniqueidx: the article's unique-index walkthrough as a conformance check of the configured
# server. A step whose outcome differs is recorded as `fail` (the job still succeeds).
# The rule's params: costlab/uniqueidx/params.py (what reruns the job is what it reads).
import costlab.uniqueidx.params as _ui_params

UI = PLAN.names("uniqueidx")   # its tables and provenance (costlab/uniqueidx/__init__.py)


rule uniqueidx_conformance:
    input:
        server=server_json("standalone"),  # costlab.uniqueidx.check.PROFILE
    output:
        **UI.tables,
        provenance=UI.provenance,
    params:
        **_ui_params.ConformanceParams.declare(config),
    threads: ask("uniqueidx_conformance").threads
    resources:
        mongod=MONGOD,
        **ask("uniqueidx_conformance").resources,
    log:
        "results/logs/uniqueidx_conformance.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/uniqueidx_conformance.py"

