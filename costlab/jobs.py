"""What every Snakemake job of costlab does on its way out, however it ends.

Snakemake runs each `script:` as its own Python process. Importing costlab there (every script
does, first thing) calls `install` with the job's `snakemake` object, so that in every job,
server-free ones included:

- SIGTERM (what `timeout`, a Slurm time limit and `kill` send) and SIGINT (Ctrl-C) raise in the
  main thread, so `finally` blocks run: `costlab.io.atomic_path` removes its temporary file,
  scratch homes are removed, servers stopped. Before, SIGTERM ended a server-free job where it
  stood and left e.g. a 5.6 GB `.events.parquet.<random>.tmp` behind;
- a job that fails, or is stopped by a signal, says so in its log (`results/logs/…`, the first
  `log:` file of its rule): the error on one line, then the traceback. Scripts write their log
  only when they succeed, so a failed job used to leave none, or an empty one.

Typed params (issue #31, part 5): what a job reads is what its rule declares. Each rule with params
declares them from one frozen dataclass, a `JobParams` (costlab/<study>/params.py):

    rule appversions_load:                              # the rule file
        params:
            **LoadParams.declare(config),
    params = LoadParams.from_params(snakemake.params)  # the script; the job function takes `params`

Snakemake reruns a job when its params change, so what reruns a job and what the job reads are one
set; tests/test_job_params.py checks every rule's params against its script's class, and that no
script reads snakemake.config except through `costlab.config.run_facts` (RunFacts says why those are
not params).

Standard library only: the rule files import it.
"""

from __future__ import annotations

import atexit
import dataclasses
import errno
import json
import os
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

from costlab.credentials import redact_text

_STATE: dict[str, Any] = {}

# Measuring jobs whose outputs are update()-flagged in rules/*.smk (rules/common.smk `kept`; each study's
# Study.kept_rules, costlab.registry.KEPT_RULES): Snakemake then keeps the previous outputs while the job
# runs and puts them back when it fails. A failed rerun of one records it here, so the page can say the
# study shows the previous run.
RERUN_FAILED_DIR = ".rerun_failed"


def snakemake_job() -> Any | None:
    """The `snakemake` object of the Snakemake script job this process runs, or None."""
    main = sys.modules.get("__main__")
    job = getattr(main, "snakemake", None)
    if job is None or not type(job).__module__.startswith("snakemake") or not hasattr(job, "log"):
        return None
    return job


def _stop(signum: int, frame: Any) -> None:
    if os.getpid() != _STATE.get("pid"):  # a forked worker: its own handlers (costlab/procs.py) decide
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    _STATE["signal"] = signum
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def _log_path(job: Any) -> Path | None:
    logs = list(getattr(job, "log", None) or [])
    return Path(logs[0]) if logs else None


def write_failure(log: Path, rule: str, started: float, what: str, detail: str = "") -> None:
    """Put `what` (and the traceback) into the job's log: after what this job wrote there, or in place of
    an older run's log (a log written before this job started is not this job's)."""
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        ours = log.exists() and log.stat().st_mtime >= started
        with open(log, "a" if ours else "w") as handle:
            handle.write(f"costlab: job {rule} {what} at {time.strftime('%Y-%m-%d %H:%M:%S %Z')}\n{detail}")
    except OSError:
        pass  # a log that cannot be written must not hide the job's own error


def _study_dir(output: str) -> Path | None:
    parts = Path(output).parts
    return Path(*parts[:2]) if len(parts) > 2 and parts[0] == "results" else None


def _marker(job: Any) -> Path | None:
    outputs = [str(o) for o in (getattr(job, "output", None) or [])]
    study = _study_dir(outputs[0]) if outputs else None
    return study / RERUN_FAILED_DIR / f"{Path(outputs[0]).name}.json" if study else None


def _record_failure(what: str) -> None:
    """For a measuring job with kept outputs: say this rerun failed (Snakemake puts the old outputs back)."""
    job, marker = _STATE.get("job"), _STATE.get("marker")
    if marker is None or not _STATE.get("kept"):
        return

    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(
            json.dumps(
                {
                    "rule": _STATE["rule"],
                    "failed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "why": what,
                    "outputs": [str(o) for o in job.output],
                },
                indent=1,
            )
            + "\n"
        )
    except OSError:
        pass


def _excepthook(kind: type[BaseException], error: BaseException, tb: Any) -> None:
    if os.getpid() == _STATE.get("pid") and _STATE.get("log") and not issubclass(kind, KeyboardInterrupt):
        server = _STATE["server"]
        line = redact_text(
            f"{kind.__name__}: {error}".splitlines()[0] if str(error) else kind.__name__, server
        )
        detail = redact_text("".join(traceback.format_exception(kind, error, tb)), server)
        write_failure(_STATE["log"], _STATE["rule"], _STATE["started"], f"failed: {line[:500]}", detail)
        _record_failure(line[:500])
        _STATE["written"] = True
        message = str(error)
        if message.startswith("costlab:") and "\n" not in message.strip():
            # costlab's own errors are one line that says what happened (disk full writing <path>, a lost
            # server, an edited input): that line on the console, the traceback in the log
            print(f"{message} (details: {_STATE['log']})", file=sys.stderr)
            return
        # any other failure: one console line, what failed and the fix; the traceback is in the log
        print(f"costlab: job {_STATE['rule']} failed: {line[:500]}; {fix_for(error)} "
              f"(traceback: {_STATE['log']})", file=sys.stderr)
        return
    _STATE["previous_hook"](kind, error, tb)


def fix_for(error: BaseException) -> str:
    """What to do about a job's failure, in a few words (the failure's own line says what happened)."""

    message = str(error)
    if "not implemented in the engine lab" in message:
        return ("the fix: use the operators docs/engine-lab.md lists in your layout, or leave the version "
                "out of the engine lab; `make dryrun` checks a layout before any job")
    if isinstance(error, MemoryError):
        return "the fix: lower the study's scale in your config (engine.<study>) or give the job more memory"
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return "the fix: free disk space where the job writes (results/, TMPDIR) and rerun"
    if isinstance(error, PermissionError):
        return f"the fix: make {error.filename or 'the path'} writable and rerun"
    if isinstance(error, (ImportError, SyntaxError)):
        return "the fix: reinstall the venv (make clean-venv all) and rerun"
    return ("the fix: correct what it names (a config value: `make dryrun` checks it before any job) and "
            "rerun the same command; finished jobs are kept")


def _at_exit() -> None:
    if os.getpid() != _STATE.get("pid"):
        return
    signum = _STATE.get("signal")
    if signum and _STATE.get("log") and not _STATE.get("written"):
        write_failure(
            _STATE["log"],
            _STATE["rule"],
            _STATE["started"],
            f"stopped by {signal.Signals(signum).name}; its temporary files were removed and nothing "
            "partial was kept\n",
        )
        _record_failure(f"stopped by {signal.Signals(signum).name}")
    elif not _STATE.get("written") and _STATE.get("marker") is not None and sys.exc_info()[0] is None:
        # ended without an error: if every output was written by this job, it is no longer a failed rerun
        job = _STATE["job"]
        if all(
            Path(str(o)).exists() and Path(str(o)).stat().st_mtime >= _STATE["started"] for o in job.output
        ):
            _STATE["marker"].unlink(missing_ok=True)


def install(job: Any, kept_rules: frozenset[str] = frozenset()) -> None:
    """Arm the signal handlers and the failure log for the job `job` (once per process, main thread only);
    a job of one of `kept_rules` (costlab.registry.KEPT_RULES) also records a failed rerun."""
    if _STATE.get("pid") == os.getpid() or threading.current_thread() is not threading.main_thread():
        return
    config = getattr(job, "config", None)
    server = (config.get("server") if isinstance(config, dict) else None) or {}
    rule = str(getattr(job, "rule", "?"))
    _STATE.update(job=job, marker=_marker(job), kept=rule in kept_rules)
    _STATE.update(
        pid=os.getpid(),
        log=_log_path(job),
        rule=rule,
        server=server,
        started=time.time() - 1,
        previous_hook=sys.excepthook,
    )
    for signum in (signal.SIGTERM, signal.SIGINT):
        if signal.getsignal(signum) is not signal.SIG_IGN:  # a job started with it ignored keeps ignoring it
            signal.signal(signum, _stop)
    sys.excepthook = _excepthook
    atexit.register(_at_exit)


def install_if_job(kept_rules: frozenset[str] = frozenset()) -> None:
    """Called when costlab is imported: `install` when this process is a Snakemake script job."""
    job = snakemake_job()
    if job is not None:
        install(job, kept_rules)


def failed_reruns(study_dir: str | Path) -> list[dict[str, Any]]:
    """The failed reruns recorded under results/<study>/ whose previous outputs are back in place."""

    found = []
    for marker in sorted(Path(study_dir, RERUN_FAILED_DIR).glob("*.json")):
        try:
            record = json.loads(marker.read_text())
        except (OSError, ValueError):
            continue
        outputs = record.get("outputs") if isinstance(record, dict) else None
        if outputs and all(Path(o).exists() for o in outputs):
            found.append(record)
    return found


def run_of(record: dict[str, Any]) -> str:
    """When the kept outputs were measured: their provenance's started_at, else the file's time."""

    for output in record.get("outputs") or []:
        if "/provenance/" in output:
            try:
                started = json.loads(Path(output).read_text()).get("started_at")
            except (OSError, ValueError, AttributeError):
                started = None
            if started:
                return str(started)
    return "an earlier run"


def rerun_failed_notes(study_dir: str | Path) -> list[str]:
    """The page's line per failed rerun: 'last rerun failed; showing the run of <time>'."""
    return [
        f"last rerun of {record.get('rule')} failed ({record.get('failed_at')}: "
        f"{str(record.get('why'))[:200]}); "
        f"showing the run of {run_of(record)}"
        for record in failed_reruns(study_dir)
    ]


def after_failed_run(results: str | Path = "results") -> list[Path]:
    """Snakemake's onerror: outputs it put back after a failed rerun are dated before their inputs, so the
    next run measures again (Snakemake records the failed job's params as if it had succeeded, and would
    call the old outputs up to date). Returns the outputs of every failed rerun shown
    (costlab.report.after_failure rebuilds the page with them)."""
    redated = []
    for study_dir in Path(results).iterdir() if Path(results).is_dir() else ():
        for record in failed_reruns(study_dir):
            for output in record.get("outputs") or []:
                path = Path(output)
                if path.stat().st_mtime > 1:
                    os.utime(path, (1, 1))
                redated.append(path)
    return redated


# --- typed job params -----------------------------------------------------------------------------

P = TypeVar("P", bound="JobParams")


class JobParams:
    """Base of the per-rule parameter dataclasses: `declare` is the rule's `params:`, `from_params` the
    job's view of them (every field, nothing else)."""

    @classmethod
    def declare(cls, config: Mapping[str, Any]) -> dict[str, Any]:
        """The rule's params: names are this class's fields, values come from the validated config."""
        raise NotImplementedError(f"{cls.__name__}.declare")

    @classmethod
    def declare_later(cls, declared: Callable[[], Mapping[str, Any]]) -> dict[str, Callable[[Any], Any]]:
        """The rule's params when their values wait on what a job's planning decides (the server backend,
        probed only when a job needs it): the same names, each a function Snakemake calls for the job,
        giving what `declared()` (the rule's `declare(...)` call) gives it, a wildcards function applied."""
        once: list[Mapping[str, Any]] = []   # declared() once per rule: its values do not vary by job

        def param(name: str) -> Callable[[Any], Any]:
            def value(wildcards: Any) -> Any:
                if not once:
                    once.append(declared())
                given = once[0][name]
                return given(wildcards) if callable(given) else given
            return value
        return {f.name: param(f.name) for f in dataclasses.fields(cls)}   # type: ignore[arg-type]

    @classmethod
    def from_params(cls: type[P], params: Any) -> P:
        """The typed params from snakemake.params (or any mapping of name to value)."""
        given = dict(params.items())
        names = [f.name for f in dataclasses.fields(cls)]   # type: ignore[arg-type]
        missing, extra = [n for n in names if n not in given], sorted(set(given) - set(names))
        if missing or extra:
            raise TypeError(f"{cls.__name__} takes the params {', '.join(names)}; the rule gave "
                            f"{', '.join(sorted(given)) or 'none'} (missing: {', '.join(missing) or 'none'}; "
                            f"unexpected: {', '.join(extra) or 'none'})")
        return cls(**given)

    @classmethod
    def from_config(cls: type[P], config: Mapping[str, Any]) -> P:
        """What the job gets when its rule runs on `config` (tests and callers outside the workflow)."""
        return cls.from_params(cls.declare(config))


@dataclass(frozen=True)
class RunFacts:
    """What a job knows of the run beyond its params: the server to connect to and the run's hashes
    for its provenance.

    Deliberately not params: the server a profile resolves to is already a rerun trigger (the
    rule's input results/servers/<profile>.json), its credentials must never be stored under
    .snakemake/, and a timeout or a lease wait changes nothing measured; the hashes record which
    run and which study settings produced a file (the report's "rerun" warning reads them), they
    are not inputs of the work. Built from the whole config by costlab.config.run_facts, the one way a
    script reads snakemake.config (tests/test_job_params.py).
    """

    study: str | None
    server: Mapping[str, Any] = field(repr=False)   # may hold a URI's password: never printed
    config_hash: str = ""
    study_config_hash: str | None = None    # the study's keys and the server's (costlab.config)
    engine_config_hash: str | None = None   # the study's keys and the engine's (engine-lab jobs)
    # the keys that concern the study as JSON text, for the job's provenance record only (`study_config`:
    # costlab.config.study_settings; compare.with reads them there); a job reads its params, never this
    recorded_config: str = field(default="", repr=False)
