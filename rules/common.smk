# Config validation (before any job runs), the plan every rules file reads, shared helpers, the `mongod` resource.
from costlab.cluster import job_ask as _job_ask
from costlab.digests import content_stamp as _content_stamp
from costlab.snakefile import on_start as _on_start, plan_run as _plan_run, prepare as _prepare

_prepare(workflow, config)
# Each study's targets and the names its rules file reads (Study.targets); whether there is a server is
# probed once, the first time a job needs to know (`all`, the report, a server setup): never for a model.
PLAN = _plan_run(config)

# For --use-conda users (with PYTHONPATH set to this checkout so scripts import costlab);
# the tested path is pip + venv (`make all`). Relative to rules/.
CONDA_ENV = "../environment.yml"
# Measuring rules declare resources: mongod=1; profiles/default caps it at 1 so timings never overlap.
# profiles/slurm sets no such cap: there each measuring job has a node and a server of its own.
MONGOD = 1
# The server's untimed jobs (setup, loads, counters) and what they read start before the engine lab's:
# they take turns on one server (MONGOD), so the sooner that chain starts, the more of the engine lab runs
# beside it; the timed jobs run alone afterwards (RuleAsk.timed).
SERVER_CHAIN_FIRST = 60


def server_json(profile):
    """The server setup record (rules/servers.smk) every measuring job on `profile` takes as input."""
    return f"results/servers/{profile}.json"


def ask(rule):
    """What one job of `rule` asks for (docs/slurm.md), scaled from the config: a timed rule runs alone on
    this machine (RuleAsk.timed); on a cluster each measuring job has a node."""
    return _job_ask(rule, config, None if workflow.non_local_exec else getattr(workflow, "_cores", None))


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


onstart:
    _on_start(workflow, config)


onerror:
    # A measuring job's failed rerun: Snakemake put its previous outputs back (kept); date them before
    # their inputs so the next run measures again, and rebuild the page so it says what it shows.
    from costlab.report.after_failure import rebuild_after_failed_rerun

    rebuild_after_failed_rerun("results", config, PLAN.study_targets)
