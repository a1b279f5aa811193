# The server setup step: which server each profile resolves to (results/servers/<profile>.json).
# Every measuring rule takes its profile's file as an input, so another server (image, binary,
# URI, profile options) reruns the measurements and what follows them, and nothing server-free.
# The params are the server's identity with credentials removed: they decide when it reruns,
# and Snakemake stores them under .snakemake/. See docs/servers.md.
# The rule's params: costlab/server/params.py (what reruns the job is what it reads).
# The backend is PLAN.backend: probed here first when a target needs a server, so a model's target never probes.
import costlab.server.params as _server_params
from costlab.registry import wildcard_regex as _study_regex
from costlab.server.availability import require_server as _require_server
from costlab.server.profiles import PROFILES as _SERVER_PROFILES


rule server_setup:
    input:
        # With no server, a target that needs one stops the planning here, before any job runs.
        lambda wildcards: _require_server(PLAN.backend, config["server"], workflow.dag_settings.targets,
                                          wildcards.server_profile),
    output:
        "results/servers/{server_profile}.json",
    wildcard_constraints:
        server_profile="|".join(_SERVER_PROFILES),
    params:
        **_server_params.SetupParams.declare_later(lambda: _server_params.SetupParams.declare(config, PLAN.backend)),
    priority: SERVER_CHAIN_FIRST
    log:
        "results/logs/server_setup_{server_profile}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/server_setup.py"


# With no server, each enabled study's mongod part is recorded as not run (read by the report
# and the end-of-run summary): {"part": "mongod", "reason": ..., "fix": ...}.


rule mongod_not_run:
    output:
        "results/{study}/not_run.json",
    wildcard_constraints:
        study=_study_regex(),
    log:
        "results/logs/not_run_{study}.log",
    conda:
        CONDA_ENV
    script:
        "../scripts/not_run.py"
