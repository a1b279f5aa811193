"""Two checkouts' plans, job by job: the same jobs, outputs, inputs and params, or each difference.

    python benchmarks/compare_plans.py BEFORE AFTER [SCENARIO ...]

BEFORE and AFTER are checkouts (a `git worktree`, or `git archive <commit> | tar -x -C DIR`). Each scenario
(a config: the defaults, config/smoke.yaml, config/full.yaml, the engine lab off; each with the server
`auto` finds here and with none) is planned in each checkout through Snakemake's API, `all` on an empty
working directory, in a fresh interpreter importing that checkout's costlab. A job is its rule, its
wildcards, its outputs, its inputs (in order) and its params; a change of params or of the input list
reruns a job, so those are compared as well as the (rule, output) set. Exit status 1 on any difference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WORKFLOW_FILES = ("Snakefile", "rules", "scripts", "config", "resources", "profiles")
SCENARIOS: dict[str, tuple[list[str], dict]] = {
    "defaults": ([], {}),
    "defaults, no server": ([], {"server": {"backend": "none"}}),
    "smoke": (["config/smoke.yaml"], {}),
    "smoke, no server": (["config/smoke.yaml"], {"server": {"backend": "none"}}),
    "engine off": ([], {"engine": {"enabled": False}}),
    "engine off, no server": ([], {"engine": {"enabled": False}, "server": {"backend": "none"}}),
    "full": (["config/full.yaml"], {}),
    "full, no server": (["config/full.yaml"], {"server": {"backend": "none"}}),
    "smoke, authors and repeats": (
        ["config/smoke.yaml"],
        {
            "appversions": {"repeats": 2, "loadtest": {"authors_driver": True}},
            "docsize": {"repeats": 2},
            "flatnested": {"repeats": 2},
            "arraygrowth": {"fallback": {"enabled": False}},
        },
    ),
}

PROBE = """
import json, sys
from pathlib import Path
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, ResourceSettings
import costlab

configfiles, config, workdir = json.loads(sys.argv[1]), json.loads(sys.argv[2]), Path(sys.argv[3])
jobs = []
with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
    workflow_api = api.workflow(
        resource_settings=ResourceSettings(cores=2, resources={"mongod": 1}), snakefile=Path("Snakefile"),
        config_settings=ConfigSettings(configfiles=[Path(f) for f in configfiles], config=config),
        workdir=workdir)
    workflow_api.dag(dag_settings=DAGSettings(targets={"all"}))
    workflow = workflow_api._workflow
    # what `snakemake --summary` does: the DAG of the targets, built and not run
    workflow._prepare_dag(forceall=False, ignore_incomplete=True, lock_warn_only=True)
    workflow._build_dag()
    for job in workflow.dag.jobs:
        jobs.append({"rule": job.rule.name, "wildcards": dict(job.wildcards.items()),
                     "output": sorted(map(str, job.output)), "input": list(map(str, job.input)),
                     "params": repr(dict(job.params.items()))})
sys.stdout.write("PLAN " + json.dumps({"costlab": costlab.__file__, "jobs": jobs}) + "\\n")
"""


def plan(checkout: Path, configfiles: list[str], config: dict, workdir: Path) -> dict:
    """The plan of `all` in `checkout` (its files linked into the empty `workdir`: the same directory for
    both checkouts, since the run's databases and the captions' path are named from it)."""
    for name in WORKFLOW_FILES:
        (workdir / name).symlink_to(checkout / name)
    env = os.environ | {"PYTHONPATH": str(checkout), "XDG_CACHE_HOME": str(workdir / ".cache")}
    try:
        proc = subprocess.run(
            [sys.executable, "-c", PROBE, json.dumps(configfiles), json.dumps(config), str(workdir)],
            cwd=workdir, capture_output=True, text=True, env=env, timeout=900)
    finally:
        for name in WORKFLOW_FILES:
            (workdir / name).unlink()
    lines = [line for line in proc.stdout.splitlines() if line.startswith("PLAN ")]
    if not lines:
        raise RuntimeError(
            f"{checkout}: no plan (rc {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        )
    found = json.loads(lines[-1].removeprefix("PLAN "))
    if not found["costlab"].startswith(str(checkout)):
        raise RuntimeError(f"{checkout}: the probe imported another costlab: {found['costlab']}")
    return found


def key(job: dict) -> tuple:
    return job["rule"], tuple(job["output"])


def compare(before: list[dict], after: list[dict]) -> list[str]:
    differences = []
    old, new = {key(j): j for j in before}, {key(j): j for j in after}
    for gone in sorted(set(old) - set(new)):
        differences.append(f"only before: {gone}")
    for added in sorted(set(new) - set(old)):
        differences.append(f"only after: {added}")
    for both in sorted(set(old) & set(new)):
        for field in ("wildcards", "input", "params"):
            if old[both][field] != new[both][field]:
                differences.append(
                    f"{both[0]} {both[1][:1]}: {field} {old[both][field]!r} -> {new[both][field]!r}"
                )
    return differences


def main(argv: list[str]) -> int:
    before, after, *chosen = argv
    failed = False
    for name in chosen or SCENARIOS:
        configfiles, config = SCENARIOS[name]
        with tempfile.TemporaryDirectory() as tmp:
            old, new = (plan(Path(c).resolve(), configfiles, config, Path(tmp))["jobs"]
                        for c in (before, after))
        differences = compare(old, new)
        rules = len({j["rule"] for j in new})
        print(
            f"{name}: {len(old)} jobs before, {len(new)} after ({rules} rules): "
            + (
                "identical (rule, output, wildcards, inputs, params)"
                if not differences
                else f"{len(differences)} differences"
            )
        )
        for line in differences[:40]:
            print("   ", line)
        failed |= bool(differences)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
