"""A throwaway single-node Slurm cluster on this machine, for the opt-in test (make test-slurm).

slurmctld and slurmd run in the foreground (-D) with every state, spool, log and pid file in a
scratch directory; munged runs as the munge user on its own socket and key there too, so nothing
in /etc or /run is touched. Accounting is off, so Snakemake polls job states with squeue
(--slurm-status-command squeue) and submits without an account (--slurm-no-account).
Needs root (slurmd launches jobs) and Debian's slurm-wlm and munge packages.
"""
from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import portpicker

PARTITION = "costlab"
# Declared CPUs of the one node. More than this machine has (SlurmdParameters=config_overrides):
# a measuring job asks for its client's processes plus its server's; on a real cluster nodes have them.
NODE_CPUS = 8


def missing_tools() -> list[str]:
    return [tool for tool in ("slurmctld", "slurmd", "munged", "sbatch", "srun", "squeue", "sinfo")
            if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists()]


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _memory_mb() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20


def slurm_conf(base: Path, host: str, munge_socket: Path, ctld_port: int, slurmd_port: int) -> str:
    return "\n".join([
        "ClusterName=costlabtest",
        f"SlurmctldHost={host}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={munge_socket}",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={ctld_port}",
        f"SlurmdPort={slurmd_port}",
        f"StateSaveLocation={base / 'state'}",
        f"SlurmdSpoolDir={base / 'spool'}",
        f"SlurmctldPidFile={base / 'slurmctld.pid'}",
        f"SlurmdPidFile={base / 'slurmd.pid'}",
        f"SlurmctldLogFile={base / 'slurmctld.log'}",
        f"SlurmdLogFile={base / 'slurmd.log'}",
        "SlurmctldDebug=info",
        "SlurmdDebug=info",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        # The main scheduler only: its "sched: Allocate JobId=N ... #CPUs=C" lines say what each job
        # got (backfill starts a job without the count).
        "SchedulerType=sched/builtin",
        "SlurmdParameters=config_overrides",
        "ReturnToService=2",
        "MpiDefault=none",
        f"NodeName={host} CPUs={NODE_CPUS} RealMemory={max(1024, _memory_mb() - 1024)} State=UNKNOWN",
        f"PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


@contextmanager
def single_node_cluster(startup_timeout_s: float = 60) -> Iterator[dict]:
    """Start munged, slurmctld and slurmd; yield {env, base, slurmctld_log, partition}; stop them all."""
    base = Path(tempfile.mkdtemp(prefix="costlab-slurm-"))
    base.chmod(0o755)  # munged (munge user) must reach its directory
    munge = pwd.getpwnam("munge")
    munge_dir = base / "munge"
    munge_dir.mkdir()
    munge_dir.chmod(0o755)  # munged: its socket directory must be reachable by every client
    key = munge_dir / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    for path in (munge_dir, key):
        os.chown(path, munge.pw_uid, munge.pw_gid)
    munge_socket = munge_dir / "munge.socket"
    for name in ("state", "spool"):
        (base / name).mkdir()
    host = socket.gethostname()
    conf = base / "slurm.conf"
    conf.write_text(slurm_conf(base, host, munge_socket, portpicker.pick_unused_port(),
                               portpicker.pick_unused_port()))
    # The jobstep plugin runs each job under srun with every SLURM_* variable but a few removed,
    # SLURM_CONF included; a real cluster's srun finds /etc/slurm/slurm.conf, this one finds its
    # scratch config through an srun wrapper first on PATH.
    bin_dir = base / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    srun.write_text(f"#!/bin/sh\nSLURM_CONF={conf} exec {_tool('srun')} \"$@\"\n")
    srun.chmod(0o755)
    env = os.environ | {"SLURM_CONF": str(conf), "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    processes: list[subprocess.Popen] = []
    try:
        subprocess.run(["runuser", "-u", "munge", "--", _tool("munged"), f"--socket={munge_socket}",
                        f"--key-file={key}", f"--pid-file={munge_dir / 'munged.pid'}",
                        f"--log-file={munge_dir / 'munged.log'}", f"--seed-file={munge_dir / 'munged.seed'}"],
                       check=True, capture_output=True, text=True, timeout=30)
        for daemon in ("slurmctld", "slurmd"):
            log = open(base / f"{daemon}.out", "w")
            processes.append(subprocess.Popen([_tool(daemon), "-D"], env=env, stdout=log,
                                              stderr=subprocess.STDOUT))
        deadline = time.monotonic() + startup_timeout_s
        state = ""
        while time.monotonic() < deadline:
            for proc, daemon in zip(processes, ("slurmctld", "slurmd")):
                if proc.poll() is not None:
                    raise RuntimeError(f"{daemon} exited with {proc.returncode}: "
                                       f"{(base / f'{daemon}.out').read_text()[-2000:]}")
            result = subprocess.run(
                ["sinfo", "-h", "-N", "-o", "%T"], env=env, capture_output=True, text=True
            )
            state = result.stdout.strip()
            if result.returncode == 0 and state == "idle":
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"the single-node cluster did not reach idle in {startup_timeout_s} s "
                               f"(sinfo: {state!r}); see {base}/slurmctld.log and slurmd.log")
        yield {"env": env, "base": base, "slurmctld_log": base / "slurmctld.log", "partition": PARTITION,
               "host": host}
    finally:
        if processes:  # jobs first: a slurmstepd whose slurmd is gone lingers
            subprocess.run(["scancel", "--partition", PARTITION], env=env, capture_output=True, timeout=30)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                queue = subprocess.run(["squeue", "-h"], env=env, capture_output=True, text=True, timeout=30)
                if queue.returncode != 0 or not queue.stdout.strip():
                    break
                time.sleep(0.5)
        for proc in reversed(processes):
            proc.terminate()
        for proc in reversed(processes):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        pid_file = munge_dir / "munged.pid"
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text().strip()), 15)
            except (ProcessLookupError, ValueError):
                pass
