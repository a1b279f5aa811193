"""What the Snakefile does before any rule is read, and the plan the rule files read their names from.

rules/common.smk calls `prepare` (the config checked before any job; the checkout's and the cluster's
conditions) and `plan_run` (every study's Study.targets under the config, and the server backend,
probed only when a job needs it). Light imports only: every Snakemake invocation runs it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from snakemake.exceptions import WorkflowError

from costlab.cluster import check_submit_host_visible, mark_submit_host
from costlab.config import (
    RUN_ARGS_ENV,
    apply_command_line_config,
    check_config_files,
    run_arguments,
    validate,
)
from costlab.partials import sweep_results
from costlab.paths import shell_safe_python, workdir_problem
from costlab.registry import REGISTRY
from costlab.server.availability import available_backend
from costlab.targets import RunPlan


def prepare(workflow: Any, config: dict) -> None:
    """Before any rule is read: the checkout and working directory usable, the config files and the
    command line's values read as costlab reads them and validated (ConfigError naming the key and
    what is allowed: Snakemake stops before any job), and a cluster job's view of the results checked."""
    # A checkout path with a space: Snakemake puts the interpreter's path into script jobs' commands
    # unquoted; run them through a plain link to the same venv (costlab/paths.py says why).
    shell_safe_python()
    # A working directory other than the checkout (--directory, a read-only checkout): one line if it
    # cannot work.
    problem = workdir_problem(workflow.basedir)
    if problem:
        raise WorkflowError(problem)
    # Snakemake's YAML loader keeps the last of a key given twice: the same files, read with costlab's.
    check_config_files(workflow.config_settings.configfiles)
    # Snakemake hands nested --config values over as strings ({sizes_kb: [1, 64]} -> ['1', '64']);
    # give them the schema's types first, as `make all`'s pre-check does.
    apply_command_line_config(config, workflow.config_settings.config)
    validate(config)
    # Commands that messages print (rebuild an edited result) carry this run's config arguments.
    os.environ[RUN_ARGS_ENV] = run_arguments(
        workflow.config_settings.configfiles, workflow.config_settings.config
    )
    # A job on another node first checks that it sees the results directory its submitter marked
    # (a clear error naming the file, instead of Snakemake's wait for "filesystem latency").
    if workflow.remote_exec:
        check_submit_host_visible()


def plan_run(config: dict) -> RunPlan:
    """Every registered study's targets under the (validated) config, and the backend this run measures
    on (auto: Docker, then mongod; None: no server), probed the first time a job needs it."""
    return RunPlan(
        config, {name: study.targets(config) for name, study in REGISTRY.items()}, available_backend
    )


def on_start(workflow: Any, config: dict) -> None:
    """When a run starts: mark the results directory for a cluster's jobs, and sweep what jobs killed
    hard (kill -9, the OOM killer, a lost node) left: temporary files of results (costlab/io.py) and
    engine scratch homes (costlab/engine/runs.py) whose owner process is gone."""
    # imported when a run starts, not on every parse (a dry run never needs them)
    from costlab.engine.runs import sweep_orphan_homes  # noqa: PLC0415  heavy: polars, psutil; the rule files import this module

    if workflow.non_local_exec:
        mark_submit_host()
    sweep_results("results")
    scratch = Path(config["engine"]["workdir"] or tempfile.gettempdir())
    if scratch.is_dir():
        sweep_orphan_homes(scratch)
