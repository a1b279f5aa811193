"""What each rule asks a cluster for, scaled from the config, and the shared-filesystem check.

Rule files declare `threads: ask(rule).threads` and `resources: **ask(rule).resources`, so a
Slurm run (profiles/slurm) submits each job with the cores, memory and time limit it needs and
the user guesses nothing. A measuring job (it starts its own server) asks for a whole node
(`slurm_extra: --exclusive`): its timings must not share a CPU, a disk or a cache with another
job. Its `threads` are its client's processes (what a local run schedules by); `cpus_per_task`
adds the CPUs of its own mongod, for the Slurm job step. Server-free jobs are packed by Slurm
like any small job. A deployment given by URI (server.backend external) is one server for all
jobs: measuring jobs then also take `external_server=1`, which profiles/slurm caps at 1.

Time limits come from the amount of work the config asks for divided by an assumed
throughput (the constants below: assumptions chosen low so a limit is rarely hit, not
measurements), plus a fixed start-up allowance, times SAFETY. The two server-free event steps
(`appversions_events`, `appversions_model`) are the exception: they stream the events chunk by
chunk, and what they ask for comes from measurements of them (MEASURED_STREAMS): memory flat at
any event count, time linear in it. A limit that is too short on
your cluster: `--set-resources RULE:runtime=MINUTES`.

Stdlib only (plus the light name modules): every Snakemake invocation imports this to plan.
"""
from __future__ import annotations

import json
import math
import os
import socket
import uuid
from dataclasses import dataclass, field
from pathlib import Path

# --- assumptions (throughput floors; see the module docstring) ---
JOB_OVERHEAD_S = 300           # a measuring job: start a server (pull an image), initiate a set, stop
SAFETY = 2.0                   # time limit = SAFETY x expected time
MIN_RUNTIME_MIN = 15           # below this, schedulers gain nothing and start-up noise dominates
SERVER_THREADS = 2             # CPUs kept for the job's own mongod next to the client
SERVER_MB = 8192               # memory kept for the job's own mongod (the node is exclusive anyway)
SERVER_FREE_MB = 2000          # a server-free job that holds no event table
EVENT_ROW_BYTES = 200          # one event in memory (64-hex key ~72 B, date 8 B, status) with a working copy
EVENTS_ROWS_PER_S = 500_000    # events generated / read / checked per second, server-free
LOAD_EVENTS_PER_S = 10_000     # appversions Bulk Upsert events per second into a fresh server
LOAD_BYTES_PER_S = 20e6        # docsize / flatnested insert_many bytes per second
READ_BYTES_PER_S = 50e6        # docsize query bytes read per second (out of cache: from disk)
WRITE_OPS_PER_S = 100          # arraygrowth single-document updates per second (arrays grow large)
FIELDS_PER_S = 5e6             # flatnested fields walked per second by a collection scan
CHECK_S = 60                   # uniqueidx: a few dozen commands
ENGINE_S = 1800                # an engine-lab sweep (WiredTiger in-process): not timed here, a generous guess

# Rules that start (or connect to) a server: each runs alone on a node (slurm_extra --exclusive).
MEASURING_RULES = frozenset({
    "docsize_load", "docsize_measure",
    "appversions_load", "appversions_correctness", "appversions_loadtest", "appversions_loadtest_authors",
    "arraygrowth_run", "arraygrowth_fallback",
    "flatnested_load", "flatnested_measure",
    "uniqueidx_conformance",
})
# The two load-test drivers (scheduled and the authors' closed loop) ask alike.
LOADTEST_RULES = frozenset({"appversions_loadtest", "appversions_loadtest_authors"})


@dataclass(frozen=True)
class MeasuredStream:
    """A server-free step that streams the events: its measured cost per event and its peak memory."""
    cpu_s_per_million: float   # CPU seconds (user + system, all threads) per million events
    peak_mb: int               # peak RSS, the same at every event count measured
    measured: str              # where the figures come from


# Measured on the development machine (2 cores shared with other sessions, 2026-12-02; issue 26):
# the largest figure per million events at 32 M, 128 M (`python benchmarks/bench_model_scale.py 2 32
# 128`) and 500.39 M events (config/full.yaml's `snakemake results/appversions/model/stats.csv`
# under /usr/bin/time -v), and the largest peak RSS at any of them (docs/slurm.md has the table).
# events: 0.128 / 0.120 / 0.117 CPU s per M, peak 417 / 435 / 448 MB; model: 0.494 / 0.463 /
# 0.573 CPU s per M, peak 526 / 594 / 707 MB (the model's peak grows a little with the users).
MEASURED_STREAMS = {
    "appversions_events": MeasuredStream(
        cpu_s_per_million=0.13,
        peak_mb=450,
        measured="bench_model_scale.py 2 32 128 and the full.yaml run, 2026-12-02",
    ),
    "appversions_model": MeasuredStream(
        cpu_s_per_million=0.58,
        peak_mb=710,
        measured="bench_model_scale.py 2 32 128 and the full.yaml run, 2026-12-02",
    ),
}
STREAM_MEMORY_SAFETY = 1.5     # memory asked = 1.5 x the measured peak (at least SERVER_FREE_MB)
# Rules that still read the whole event table into memory (the key strings built for every event).
EVENT_TABLE_RULES = frozenset({"appversions_correctness"})
# Server-free engine-lab rules: WiredTiger opened in the job's own process, with its own cache.
ENGINE_RULES = frozenset({"docsize_engine", "arraygrowth_engine", "appversions_engine_version"})
EXCLUSIVE = "--exclusive"
APPVERSIONS_YEARS = 10        # the events span 2010-01-01..2020-01-01
LOADTEST_NEW_EVENTS_YEARS = 1  # the load test sends 2020's events


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


def _events(config: dict, years: int = APPVERSIONS_YEARS) -> int:
    return int(config["appversions"]["events_per_year"]) * years


def _docsize_max_bytes(config: dict) -> float:
    study = config["docsize"]
    return int(study["docs_per_collection"]) * max(int(s) for s in study["sizes_kb"]) * 1024


def _work_s(rule: str, config: dict) -> float:
    """Seconds of work one job of `rule` does at the configured scale (the largest job of the rule)."""
    if rule == "docsize_load":
        return _docsize_max_bytes(config) / LOAD_BYTES_PER_S
    if rule == "docsize_measure":
        study = config["docsize"]
        queries = max(int(r["warmups"]) + int(r["queries"]) for r in study["runs"].values())
        per_query = int(study["window_minutes"]) * max(int(s) for s in study["sizes_kb"]) * 1024
        # x2: the spread-customer variant queries as many orders again
        return 2 * queries * per_query / READ_BYTES_PER_S
    if rule == "appversions_load":
        return _events(config) / LOAD_EVENTS_PER_S
    if rule == "appversions_correctness":
        return _events(config) / EVENTS_ROWS_PER_S
    if rule in LOADTEST_RULES:
        lt = config["appversions"]["loadtest"]
        schedule = float(lt["warmup_seconds"]) + float(lt["phase_seconds"]) * len(lt["upsert_rates"])
        if rule == "appversions_loadtest_authors":
            schedule += float(lt.get("idle_seconds") or 0)   # the authors' idle period after the test
        return schedule + _events(config, LOADTEST_NEW_EVENTS_YEARS) / EVENTS_ROWS_PER_S
    if rule == "arraygrowth_run":
        return sum(int(n) for n in config["arraygrowth"]["ns"]) / WRITE_OPS_PER_S
    if rule == "arraygrowth_fallback":
        fb = config["arraygrowth"]["fallback"]
        return len(fb["variants"]) * int(fb["updates"]) / WRITE_OPS_PER_S
    if rule == "flatnested_load":
        fn = config["flatnested"]
        # a generous 100 bytes per field
        return int(fn["documents"]) * max(int(f) for f in fn["flat_fields"]) * 100 / LOAD_BYTES_PER_S
    if rule == "flatnested_measure":
        fn = config["flatnested"]
        walks = int(fn["runs"]) + int(fn["warmup_runs"])
        return walks * int(fn["documents"]) * max(int(f) for f in fn["flat_fields"]) / FIELDS_PER_S
    if rule == "uniqueidx_conformance":
        return CHECK_S
    if rule in MEASURED_STREAMS:
        return _events(config) / 1e6 * MEASURED_STREAMS[rule].cpu_s_per_million
    if rule in ENGINE_RULES:
        return ENGINE_S
    return 0.0


def _client_threads(rule: str, config: dict) -> int:
    """Processes the job's own client runs at once (the server's CPUs are added for measuring jobs)."""
    av = config["appversions"]
    if rule == "appversions_load":
        return int(av["load_workers"])
    if rule in LOADTEST_RULES:
        return int(av["loadtest"]["upsert_workers"]) + int(av["loadtest"]["report_workers"])
    return 1


def _client_mb(rule: str, config: dict) -> int:
    if rule in MEASURED_STREAMS:
        return max(SERVER_FREE_MB, math.ceil(MEASURED_STREAMS[rule].peak_mb * STREAM_MEMORY_SAFETY))
    if rule in EVENT_TABLE_RULES:
        return max(SERVER_FREE_MB, math.ceil(_events(config) * EVENT_ROW_BYTES / 2**20))
    if rule == "appversions_load":
        # each worker holds one chunk of a million events
        return int(config["appversions"]["load_workers"]) * math.ceil(1_000_000 * EVENT_ROW_BYTES / 2**20)
    if rule in LOADTEST_RULES:
        return max(
            SERVER_FREE_MB, math.ceil(_events(config, LOADTEST_NEW_EVENTS_YEARS) * EVENT_ROW_BYTES / 2**20)
        )
    if rule == "docsize_engine":
        # the engine's WiredTiger cache lives in the job's process
        from costlab.engine.limits import large_cache_mb

        engine_docsize = config.get("engine", {}).get("docsize", {})
        return SERVER_FREE_MB + large_cache_mb(int(engine_docsize.get("docs_per_collection", 10_000)),
                                               list(config.get("docsize", {}).get("sizes_kb", [64])),
                                               engine_docsize.get("default_cache_mb"))
    return SERVER_FREE_MB


def job_ask(rule: str, config: dict) -> JobAsk:
    """Threads, memory and time limit of one job of `rule` at this config's scale."""
    measuring = rule in MEASURING_RULES
    threads = _client_threads(rule, config)
    cpus = threads + (SERVER_THREADS if measuring else 0)
    mem_mb = _client_mb(rule, config) + (SERVER_MB if measuring else 0)
    expected = _work_s(rule, config) + (JOB_OVERHEAD_S if measuring else 60)
    shared = int(measuring and config.get("server", {}).get("backend") == "external")
    return JobAsk(
        rule=rule,
        threads=threads,
        cpus=cpus,
        mem_mb=mem_mb,
        expected_s=expected,
        exclusive=measuring,
        external_server=shared,
    )


def measuring_job_counts(config: dict) -> dict[str, int]:
    """How many jobs of each measuring rule `all` runs for this config (enabled studies only)."""
    from costlab.docsize.datasets import datasets as docsize_datasets
    from costlab.docsize.names import RUNS as DOCSIZE_RUNS

    studies = set(config["studies"])
    counts: dict[str, int] = {}
    if "docsize" in studies:
        n = len(docsize_datasets(config["docsize"]))
        counts |= {"docsize_load": n, "docsize_measure": n * len(DOCSIZE_RUNS)}
    if "appversions" in studies:
        av = config["appversions"]
        loaded = list(av.get("load_versions") or av["versions"])
        tested = list(av["loadtest"].get("versions") or loaded)
        counts |= {"appversions_load": len(loaded), "appversions_correctness": len(loaded),
                   "appversions_loadtest": len(tested)}
        if av["loadtest"].get("authors_driver"):
            counts["appversions_loadtest_authors"] = len(tested)
    if "arraygrowth" in studies:
        ag = config["arraygrowth"]
        counts["arraygrowth_run"] = len(ag["profiles"]) * len(ag["workloads"])
        if ag["fallback"]["enabled"]:
            counts["arraygrowth_fallback"] = len(ag["profiles"])
    if "flatnested" in studies:
        shapes = 2 * len(config["flatnested"]["flat_fields"])
        counts |= {"flatnested_load": shapes, "flatnested_measure": shapes}
    if "uniqueidx" in studies:
        counts["uniqueidx_conformance"] = 1
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
    import argparse

    from costlab.config import load_config

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
    print(
        "\nserver-free event steps (1 CPU each; from measurements of the streamed steps, MEASURED_STREAMS):"
    )
    for rule, stream in MEASURED_STREAMS.items():
        ask = job_ask(rule, config)
        print(f"{rule:24} {ask.mem_mb:>7} MB ({STREAM_MEMORY_SAFETY} x {stream.peak_mb} MB peak)  "
              f"{ask.expected_s / 60:>6.1f} min expected ({_events(config) / 1e6:,.0f} M events x "
              f"{stream.cpu_s_per_million} CPU s per M + 60 s), limit {ask.runtime} min")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
