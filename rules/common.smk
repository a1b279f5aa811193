# Config validation (before any job runs), shared helpers and the `mongod` resource.
from costlab.paths import shell_safe_python

# A checkout path with a space: Snakemake puts the interpreter's path into script jobs' commands
# unquoted; run them through a plain link to the same venv (costlab/paths.py says why).
shell_safe_python()
# A working directory other than the checkout (--directory, a read-only checkout): one line if it cannot work.
from snakemake.exceptions import WorkflowError

from costlab.paths import workdir_problem as _workdir_problem

if _workdir_problem(workflow.basedir):
    raise WorkflowError(_workdir_problem(workflow.basedir))
from costlab.config import apply_command_line_config, check_config_files, validate as validate_config

# Snakemake's YAML loader keeps the last of a key given twice: the same files, read with costlab's.
check_config_files(workflow.config_settings.configfiles)

# Snakemake hands nested --config values over as strings ({sizes_kb: [1, 64]} -> ['1', '64']);
# give them the schema's types first, as `make all`'s pre-check does.
apply_command_line_config(config, workflow.config_settings.config)
# Raises ConfigError naming the key and what is allowed; Snakemake stops before any job.
validate_config(config)
# Commands that messages print (rebuild an edited result) carry this run's config arguments.
import os as _os

from costlab.config import RUN_ARGS_ENV as _RUN_ARGS_ENV, run_arguments as _run_arguments

_os.environ[_RUN_ARGS_ENV] = _run_arguments(workflow.config_settings.configfiles, workflow.config_settings.config)

# For --use-conda users (with PYTHONPATH set to this checkout so scripts import costlab);
# the tested path is pip + venv (`make all`). Relative to rules/.
CONDA_ENV = "../environment.yml"

# Each study's .smk appends the files `all` should build when the study is enabled;
# STUDY_TARGETS keeps them per study for the report.
ALL_TARGETS = []
STUDY_TARGETS = {}


# The engine lab (docs/engine-lab.md): WiredTiger driven like mongod; needs no server.
ENGINE_ON = config["engine"]["enabled"]


# A rule's engine keys (the shared ones, its study's section, what the engine lab loads) come from
# costlab.engine.job_keys.engine_keys through the rule's params class (costlab/<study>/params.py).
# A new study's rule file may take its data params from here (docs/development.md).
from costlab.namespaces import data_params as _study_data_params


def study_enabled(study):
    return study in config["studies"]


# The backend this run measures on, decided now (auto: Docker, then mongod); None = no server:
# `all` then builds only the server-free targets and results/<study>/not_run.json per study.
from costlab.server.availability import available_backend as _available_backend

SERVER_BACKEND = _available_backend(config["server"])
NOT_RUN_STUDIES = []  # studies whose mongod part is skipped for want of a server


def server_json(profile):
    """The server setup record (rules/servers.smk) every measuring job on `profile` takes as input."""
    return f"results/servers/{profile}.json"


def _register(study, paths):
    ALL_TARGETS.extend(paths)
    STUDY_TARGETS.setdefault(study, []).extend(paths)


def add_server_free_targets(study, *paths):
    """Register files that need no MongoDB server (models, engine lab), if the study is enabled."""
    if study_enabled(study):
        _register(study, paths)


def add_targets(study, *paths):
    """Register files measured on a server (and what follows them), if the study is enabled.

    With no server they are left out and the study's not_run.json says so instead.
    """
    if not study_enabled(study):
        return
    if SERVER_BACKEND is not None:
        _register(study, paths)
    elif study not in NOT_RUN_STUDIES:
        NOT_RUN_STUDIES.append(study)
        _register(study, [f"results/{study}/not_run.json"])


# Measuring rules declare resources: mongod=1; profiles/default caps it at 1 so timings never overlap.
# profiles/slurm sets no such cap: there each measuring job has a node and a server of its own.
MONGOD = 1
# The server's untimed jobs (setup, loads, counters) and what they read start before the engine lab's:
# they take turns on one server (MONGOD), so the sooner that chain starts, the more of the engine lab runs
# beside it; the timed jobs run alone afterwards (RuleAsk.timed).
SERVER_CHAIN_FIRST = 60

# Cluster runs (docs/slurm.md): what one job of a rule asks for, scaled from the config.
from costlab.cluster import check_submit_host_visible as _check_submit_host_visible
from costlab.cluster import job_ask as _job_ask
from costlab.cluster import mark_submit_host as _mark_submit_host


def ask(rule):
    # a timed rule runs alone on this machine (RuleAsk.timed); on a cluster each measuring job has a node
    return _job_ask(rule, config, None if workflow.non_local_exec else getattr(workflow, "_cores", None))


# A job on another node first checks that it sees the results directory its submitter marked
# (a clear error naming the file, instead of Snakemake's wait for "filesystem latency").
if workflow.remote_exec:
    _check_submit_host_visible()


onstart:
    if workflow.non_local_exec:
        _mark_submit_host()
    _sweep_leftovers()


from costlab.digests import content_stamp as _content_stamp


def by_content(paths):
    """Files of yours (a layout, a sample, an element) as a rule's inputs by their content (costlab/digests.py
    content_stamp): each file with its modification time ignored (ancient) and the stamp its SHA-256 names."""
    paths = [paths] if isinstance(paths, str) else [str(p) for p in paths]
    return [*(ancient(p) for p in paths), *(_content_stamp(p) for p in paths)]


def kept(path):
    """A measuring job's output that Snakemake keeps while the job reruns and puts back if it fails
    (update()): a failed rerun no longer destroys the last good measurement. The rule must be one of its
    study's Study.kept_rules: costlab/jobs.py then records the failure and the page says which run it shows."""
    return update(path)


def _sweep_leftovers():
    """What a job killed hard (kill -9, the OOM killer, a lost node) left: temporary files of results
    (costlab/io.py) and engine scratch homes (costlab/engine/runs.py) whose owner process is gone."""
    import tempfile
    from pathlib import Path

    from costlab.engine.runs import sweep_orphan_homes
    from costlab.partials import sweep_results

    sweep_results("results")
    scratch = Path(config["engine"]["workdir"] or tempfile.gettempdir())
    if scratch.is_dir():
        sweep_orphan_homes(scratch)


onerror:
    # A measuring job's failed rerun: Snakemake put its previous outputs back (kept); date them before
    # their inputs so the next run measures again, and rebuild the page so it says what it shows.
    from costlab.report.after_failure import rebuild_after_failed_rerun

    rebuild_after_failed_rerun("results", config, STUDY_TARGETS)
