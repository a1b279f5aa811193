"""Workflow overhead: no-op `snakemake all` <= 2 s and `snakemake -n all` <= 3 s, every study enabled.

- dry run: `snakemake -n all` in an empty results directory (Snakemake plans the whole smoke DAG);
- no-op: `snakemake all` once every output exists. The smoke-config DAG is built against the
  stand-in into a scratch directory (--directory, as tests/conftest.py run_snakemake does; not
  timed), then `snakemake all` is timed: it must find nothing to do. The built directory and the
  stand-in's data (on disk, beside it) are kept in $COSTLAB_BENCH_WORKFLOW_DIR (default
  /tmp/costlab-bench-workflow) so the next run only rebuilds what changed: the first build takes
  3-8 minutes on 2 cores, later ones seconds. --fresh starts from nothing.

Both are wall times of the whole command (interpreter start, Snakefile parse, DAG, file checks),
best of 3; the CPU seconds of the snakemake process are printed beside them.

    python benchmarks/bench_workflow.py [--fresh]
"""
from __future__ import annotations

import os  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402

import common

from tests.conftest import run_snakemake  # noqa: E402  (the tests' way to run the workflow into a scratch dir)


def timed_run(workdir: Path, uri: str, extra: tuple[str, ...] = ()) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, stdout+stderr) of one snakemake invocation."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = run_snakemake(workdir, ["all"], uri, extra_args=extra)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(
            f"snakemake {' '.join(extra)} all failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout + proc.stderr


def best(workdir: Path, uri: str, extra: tuple[str, ...] = (), repeat: int = 3) -> tuple[float, float, str]:
    runs = [timed_run(workdir, uri, extra) for _ in range(repeat)]
    wall, cpu, text = min(runs, key=lambda run: run[0])
    return wall, cpu, text


STAND_IN_PORT = 27961  # fixed, so the server URI (a param of some rules) stays the same between runs


def workflow_dir(fresh: bool) -> Path:
    path = Path(os.environ.get("COSTLAB_BENCH_WORKFLOW_DIR", "/tmp/costlab-bench-workflow"))
    if fresh and path.exists():
        shutil.rmtree(path)
    (path / "built").mkdir(parents=True, exist_ok=True)
    return path


@contextmanager
def stand_in(storage: Path):
    """The stand-in on its fixed port if free (else any port: a few rules then rerun), data on disk."""
    storage.mkdir(exist_ok=True)
    server = common.bench_server(str(storage), STAND_IN_PORT)
    try:
        uri = server.__enter__()
    except OSError as exc:  # port taken (e.g. TIME_WAIT after the previous run)
        print(f"  (port {STAND_IN_PORT} busy: {exc}; using a free port)")
        server = common.bench_server(str(storage), 0)
        uri = server.__enter__()
    try:
        yield uri
    finally:
        server.__exit__(None, None, None)


def main(fresh: bool = False) -> None:
    common.header(f"Workflow overhead, every study enabled, config/smoke.yaml ({common.machine()})")
    cmd = "python benchmarks/bench_workflow.py"
    base = workflow_dir(fresh)
    with (
        tempfile.TemporaryDirectory(prefix="costlab-bench-dryrun-") as empty,
        stand_in(base / "stand-in") as uri,
    ):
        dry_wall, dry_cpu, dry_text = best(Path(empty), uri, ("-n",))
        planned = next((ln for ln in dry_text.splitlines() if ln.strip().startswith("total")), "")
        common.result("snakemake -n all, nothing built yet (s wall)", dry_wall, "s", 3, at_least=False,
                      note=f"{dry_cpu:.1f} s CPU; jobs planned: {planned.split()[-1] if planned else '?'}",
                      command=cmd)

        built = base / "built"
        start = time.perf_counter()
        timed_run(built, uri)
        print(
            f"  (brought {built} up to date in {time.perf_counter() - start:.0f} s; not part of any figure)"
        )
        noop_wall, noop_cpu, noop_text = best(built, uri)
        nothing = "Nothing to be done" in noop_text
        common.result("snakemake all, everything built: no-op (s wall)", noop_wall, "s", 2, at_least=False,
                      note=f"{noop_cpu:.1f} s CPU" + ("" if nothing else "; NOT A NO-OP: it ran jobs"),
                      command=cmd)
        built_dry_wall, built_dry_cpu, _ = best(built, uri, ("-n",))
        common.result("snakemake -n all, everything built (s wall)", built_dry_wall, "s", 3, at_least=False,
                      note=f"{built_dry_cpu:.1f} s CPU", command=cmd)


if __name__ == "__main__":
    main(fresh="--fresh" in sys.argv[1:])
