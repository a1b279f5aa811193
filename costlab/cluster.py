"""What each rule asks a cluster for, scaled from the config, and the shared-filesystem check.

Rule files declare `threads: ask(rule).threads` and `resources: **ask(rule).resources`, so a
Slurm run (profiles/slurm) submits each job with the cores, memory and time limit it needs and
the user guesses nothing. A measuring job (it starts its own server) asks for a whole node
(`slurm_extra: --exclusive`): its timings must not share a CPU, a disk or a cache with another
job. Its `threads` are its client's processes (what a local run schedules by); `cpus_per_task`
adds the CPUs of its own mongod, for the Slurm job step. Server-free jobs are packed by Slurm
like any small job. A deployment given by URI (server.backend external) is one server for all
jobs: measuring jobs then also take `external_server=1`, which profiles/slurm caps at 1.

Each study declares what its rules ask (`Study.measuring_rules` and `other_rules` in
costlab/<study>/__init__.py, collected by costlab.registry): time limits come from the amount of
work the config asks for divided by an assumed throughput (the study's constants: assumptions
chosen low so a limit is rarely hit, not measurements), plus a fixed start-up allowance, times
SAFETY. Server-free steps that stream their input (appversions' events and model) are the
exception: what they ask for comes from measurements of them (MEASURED_STREAMS): memory flat at
any event count, time linear in it. A limit that is too short on your cluster:
`--set-resources RULE:runtime=MINUTES`.

Stdlib only (plus the studies' light declarations): every Snakemake invocation imports this to plan.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from costlab.config import load_config
from costlab.registry import MEASURING_RULES as MEASURING_ASKS
from costlab.registry import OTHER_RULES as OTHER_ASKS
from costlab.registry import REGISTRY
from costlab.study import SERVER_FREE_MB, MeasuredStream, RuleAsk

# --- assumptions (see the module docstring); each study's own throughput floors are in its Study ---
JOB_OVERHEAD_S = 300           # a measuring job: start a server (pull an image), initiate a set, stop
SERVER_FREE_OVERHEAD_S = 60    # any other job: start Python, read its inputs
SAFETY = 2.0                   # time limit = SAFETY x expected time
MIN_RUNTIME_MIN = 15           # below this, schedulers gain nothing and start-up noise dominates
SERVER_THREADS = 2             # CPUs kept for the job's own mongod next to the client
SERVER_MB = 8192               # memory kept for the job's own mongod (the node is exclusive anyway)
STREAM_MEMORY_SAFETY = 1.5     # a streamed step asks 1.5 x its measured peak (at least SERVER_FREE_MB)
EXCLUSIVE = "--exclusive"

# Rules that start (or connect to) a server: each runs alone on a node (slurm_extra --exclusive).
MEASURING_RULES = frozenset(MEASURING_ASKS)
# Server-free steps that stream their input, asking from measurements of them (Study.other_rules).
MEASURED_STREAMS: dict[str, MeasuredStream] = {
    rule: ask.stream for rule, ask in OTHER_ASKS.items() if ask.stream is not None
}
NO_ASK = RuleAsk(work_s=lambda config: 0.0)


@dataclass(frozen=True)
class JobAsk:
    """What one job of a rule asks the scheduler for."""
    rule: str
    threads: int              # the client's processes (local runs schedule by these)
    cpus: int                 # threads + the job's own server (sbatch/srun --cpus-per-task)
    mem_mb: int
    expected_s: float          # the work estimate the time limit is derived from
    exclusive: bool            # a whole node (measuring jobs)
    external_server: int = 0   # 1: a measuring job on the one deployment server.uri names

    @property
    def runtime(self) -> int:
        """Time limit in minutes (Snakemake's `runtime` resource; sbatch -t)."""
        minutes = math.ceil(self.expected_s * SAFETY / 60 / 5) * 5
        return max(MIN_RUNTIME_MIN, minutes)

    @property
    def resources(self) -> dict[str, int | str]:
        """Snakemake resources: mem_mb and runtime always; for a measuring job a whole node and
        external_server (profiles/slurm caps it at 1: jobs that share one deployment take turns)."""
        found: dict[str, int | str] = {"mem_mb": self.mem_mb, "runtime": self.runtime}
        if self.exclusive:
            found["slurm_extra"] = EXCLUSIVE
            found["cpus_per_task"] = self.cpus
            found["external_server"] = self.external_server
        return found


def _rule_ask(rule: str) -> RuleAsk:
    return MEASURING_ASKS.get(rule) or OTHER_ASKS.get(rule) or NO_ASK


def _client_mb(ask: RuleAsk, config: dict) -> int:
    if ask.stream is not None:
        return max(SERVER_FREE_MB, math.ceil(ask.stream.peak_mb * STREAM_MEMORY_SAFETY))
    asked = ask.client_mb(config)
    return SERVER_FREE_MB if asked is None else int(asked)


def job_ask(rule: str, config: dict, local_cores: int | None = None) -> JobAsk:
    """Threads, memory and time limit of one job of `rule` at this config's scale (its study's RuleAsk).

    `local_cores`: the cores of a run on this machine (None on a cluster, where a measuring job has a
    node of its own): a timed rule asks for all of them, so no other job runs beside its timing."""
    ask = _rule_ask(rule)
    measuring = rule in MEASURING_RULES
    threads = int(ask.threads(config))
    if local_cores and ask.timed:
        threads = max(threads, int(local_cores))
    cpus = threads + (SERVER_THREADS if measuring else 0)
    mem_mb = _client_mb(ask, config) + (SERVER_MB if measuring else 0)
    expected = float(ask.work_s(config)) + (JOB_OVERHEAD_S if measuring else SERVER_FREE_OVERHEAD_S)
    shared = int(measuring and config.get("server", {}).get("backend") == "external")
    return JobAsk(rule=rule, threads=threads, cpus=cpus, mem_mb=mem_mb, expected_s=expected,
                  exclusive=measuring, external_server=shared)


def measuring_job_counts(config: dict) -> dict[str, int]:
    """How many jobs of each measuring rule `all` runs for this config (enabled studies only)."""
    enabled = set(config["studies"])
    counts: dict[str, int] = {}
    for name, study in REGISTRY.items():
        if name not in enabled:
            continue
        for rule, ask in study.measuring_rules.items():
            jobs = int(ask.jobs(config)) if ask.jobs is not None else 0
            if jobs:
                counts[rule] = jobs
    return counts


@dataclass(frozen=True)
class NodeHours:
    rows: list[dict] = field(default_factory=list)   # one per measuring rule

    @property
    def expected(self) -> float:
        return sum(r["expected_node_h"] for r in self.rows)

    @property
    def limit(self) -> float:
        return sum(r["limit_node_h"] for r in self.rows)


def node_hours(config: dict) -> NodeHours:
    """Exclusive-node hours of the measuring jobs: jobs x expected time (and x the time limit)."""
    rows = []
    for rule, jobs in measuring_job_counts(config).items():
        ask = job_ask(rule, config)
        rows.append({"rule": rule, "jobs": jobs, "cpus": ask.cpus, "mem_mb": ask.mem_mb,
                     "expected_h": ask.expected_s / 3600, "runtime_min": ask.runtime,
                     "expected_node_h": jobs * ask.expected_s / 3600,
                     "limit_node_h": jobs * ask.runtime / 60})
    return NodeHours(rows)


# --- shared filesystem ---
# The submitting Snakemake writes SUBMIT_MARK (onstart) and exports its token; a job on another
# node checks it sees that very file before it looks for its inputs. Snakemake's own wait for
# missing inputs blames "filesystem latency"; this says what is wrong.
SUBMIT_MARK = Path("results") / ".costlab-submit.json"
TOKEN_ENV = "COSTLAB_SUBMIT_TOKEN"


class SharedFilesystemError(RuntimeError):
    """A job on another node cannot see the submitting host's results directory."""


def mark_submit_host(workdir: str | Path = ".") -> str:
    """Write SUBMIT_MARK under workdir with a fresh token; export the token to the jobs (sbatch
    --export=ALL)."""
    token = uuid.uuid4().hex
    path = Path(workdir) / SUBMIT_MARK
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"token": token, "host": socket.gethostname(), "workdir": str(Path(workdir).resolve())}
    tmp = path.with_name(path.name + f".tmp-{os.getpid()}")
    tmp.write_text(json.dumps(record) + "\n")
    tmp.replace(path)
    os.environ[TOKEN_ENV] = token
    return token


def check_submit_host_visible(workdir: str | Path = ".", token: str | None = None) -> None:
    """On a job's node: raise SharedFilesystemError unless SUBMIT_MARK holds the submitter's token.

    token None takes it from the environment; no token at all (a job not submitted by a
    marking Snakemake) checks nothing.
    """
    token = token if token is not None else os.environ.get(TOKEN_ENV)
    if not token:
        return
    path = Path(os.path.abspath(Path(workdir) / SUBMIT_MARK))  # as this job sees it, symlinks kept
    here = socket.gethostname()
    advice = ("costlab on a cluster needs the working directory, results/ included, on a filesystem "
              "every node mounts at the same path (see docs/slurm.md)")
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        raise SharedFilesystemError(
            f"this job on node {here} cannot see {path}, which the submitting Snakemake wrote: "
            f"its inputs under results/ are not visible here; {advice}") from None
    except (OSError, ValueError) as err:
        raise SharedFilesystemError(f"this job on node {here} cannot read {path} ({err}); {advice}") from None
    if record.get("token") != token:
        raise SharedFilesystemError(
            f"this job on node {here} sees another run's {path} (written on {record.get('host')} "
            f"in {record.get('workdir')}), not the one its submitting Snakemake wrote: results/ here is a "
            f"different directory; {advice}")


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="What the measuring jobs ask a cluster for, and the node-hours."
    )
    parser.add_argument(
        "--configfile", nargs="*", default=[], help="config files on top of config/config.yaml"
    )
    args = parser.parse_args(argv)
    config = load_config(*args.configfile)
    hours = node_hours(config)
    print(f"{'rule':24} {'jobs':>4} {'cpus':>7} {'mem_mb':>7} {'expected h':>10} {'limit min':>9} "
          f"{'node-h':>8} {'limit node-h':>12}")
    for r in hours.rows:
        print(f"{r['rule']:24} {r['jobs']:>4} {r['cpus']:>7} {r['mem_mb']:>7} {r['expected_h']:>10.2f} "
              f"{r['runtime_min']:>9} {r['expected_node_h']:>8.1f} {r['limit_node_h']:>12.1f}")
    print(f"{'total':24} {sum(r['jobs'] for r in hours.rows):>4} {'':>7} {'':>7} {'':>10} {'':>9} "
          f"{hours.expected:>8.1f} {hours.limit:>12.1f}")
    print("\nserver-free streamed steps (1 CPU each; from measurements of them, MEASURED_STREAMS):")
    for rule, stream in MEASURED_STREAMS.items():
        ask = job_ask(rule, config)
        print(f"{rule:24} {ask.mem_mb:>7} MB ({STREAM_MEMORY_SAFETY} x {stream.peak_mb} MB peak)  "
              f"{ask.expected_s / 60:>6.1f} min expected ({stream.cpu_s_per_million} CPU s per million "
              f"rows + {SERVER_FREE_OVERHEAD_S} s), limit {ask.runtime} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
