"""Benchmark aid for benchmarks/first_run.py, active only when COSTLAB_JOB_TIMES names a directory (and this
directory is on PYTHONPATH): every Python process a Snakemake job runs records, at exit, its rule and
wildcards, when it started and ended, and its CPU seconds (user + system, all threads, and its waited-for
children) as one JSON file there. Processes that are not a job's script (Snakemake itself, make's
pre-check) record nothing."""

import os

if os.environ.get("COSTLAB_JOB_TIMES"):
    import atexit
    import json
    import sys
    import time

    _STARTED = time.time()

    def _record() -> None:
        job = getattr(sys.modules.get("__main__"), "snakemake", None)
        if job is None or not hasattr(job, "rule"):
            return
        times = os.times()
        try:
            wildcards = {k: str(v) for k, v in job.wildcards.items()}
        except AttributeError:
            wildcards = {}
        record = {
            "rule": job.rule,
            "wildcards": wildcards,
            "started": _STARTED,
            "ended": time.time(),
            "cpu_s": times.user + times.system + times.children_user + times.children_system,
        }
        directory = os.environ["COSTLAB_JOB_TIMES"]
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, f"{job.rule}-{os.getpid()}.json"), "w") as handle:
            json.dump(record, handle)

    atexit.register(_record)
