"""The binary backend: a mongod process on this machine, bound to 127.0.0.1 on a free port."""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import portpicker
from pymongo import MongoClient

from costlab.server.availability import find_mongod  # noqa: F401 (one place decides which mongod)
from costlab.server.limits import ProcessLimits, process_limits
from costlab.server.profiles import Profile
from costlab.server.provenance import mongod_source
from costlab.server.readiness import ensure_primary, reconnect_as_primary, wait_until_ready
from costlab.server.shutdown import checkpoint_before_stop, data_dir_bytes, stop_grace_seconds
from costlab.server.startlog import read_log, start_log_excerpt

STOP_GRACE_S = 30


def mongod_command(mongod: str, profile: Profile, port: int, data_dir: Path, log_path: Path) -> list[str]:
    return [mongod, "--port", str(port), "--bind_ip", "127.0.0.1", "--dbpath", str(data_dir),
            "--logpath", str(log_path), *profile.mongod_args()]


def applied_options(profile: Profile, limits: ProcessLimits | None = None, mongod: str | None = None) -> dict:
    """What the profile asked and what this process got (limits: the kernel's, where it let us)."""
    applied = {
        "wiredTigerCacheSizeGB": profile.cache_size_gb
        if profile.cache_size_gb is not None
        else "server default",
        "memory_limit_bytes": "not applied (binary backend)" if profile.memory_limit_bytes else "none",
        "cpus": "not applied (binary backend)" if profile.cpus else "none",
        "replica_set": profile.replica_set or "none (standalone)",
    }
    if limits is not None:
        applied.update(limits.applied)
    if mongod is not None:
        applied["mongod_source"] = mongod_source(mongod)
    return applied


def _die_with_parent() -> None:
    """In the child: ask Linux to SIGTERM mongod if this Python process dies without cleaning up."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _child_setup(limits: ProcessLimits) -> Callable[[], None]:
    def setup() -> None:
        _die_with_parent()
        limits.preexec()
    return setup


def start_log(log_path: Path, console_path: Path) -> str:
    """mongod's log (errors with context, then the end) and what it printed before its logger started."""

    text = f"{log_path}:\n{start_log_excerpt(read_log(log_path))}"
    console = read_log(console_path).strip()
    if console and not console.startswith("(no log at"):
        # Option errors ("Error parsing command line") go to stderr, not to --logpath.
        text += f"\n{console_path}:\n{start_log_excerpt(console)}"
    return text


def stop_process(proc: subprocess.Popen, grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM (mongod shuts down cleanly on it), then SIGKILL after grace_s."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def run_binary(
    profile: Profile, data_dir: Path, mongod: str, timeout_s: float
) -> Iterator[tuple[MongoClient, str, dict]]:
    data_dir.mkdir(parents=True, exist_ok=True)
    port = portpicker.pick_unused_port()
    log_path = data_dir / "mongod.log"
    console_path = data_dir / "mongod.console.log"
    cmd = mongod_command(mongod, profile, port, data_dir, log_path)
    limits = process_limits(profile.memory_limit_bytes, profile.cpus, f"costlab-mongod-{os.getpid()}-{port}")
    with open(console_path, "ab") as console:
        try:
            proc = subprocess.Popen(cmd, stdout=console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    preexec_fn=_child_setup(limits))
        except BaseException:
            limits.release()
            raise
    client = None
    ready = False
    try:
        uri = f"mongodb://127.0.0.1:{port}/?directConnection=true"
        client = MongoClient(uri, serverSelectionTimeoutMS=2000)
        wait_until_ready(client, timeout_s, lambda: proc.poll() is None,
                         lambda: start_log(log_path, console_path))
        ready = True
        if profile.replica_set:
            ensure_primary(client, profile.replica_set, f"127.0.0.1:{port}", timeout_s)
            client = reconnect_as_primary(client, uri)
        applied = applied_options(profile, limits, mongod) | {"pid": proc.pid, "command": cmd}
        yield client, uri, applied
    finally:
        if client is not None:
            if ready and proc.poll() is None:
                checkpoint_before_stop(client)   # little left for the shutdown checkpoint to write
            client.close()
        stop_process(proc, stop_grace_seconds(data_dir_bytes(data_dir)))
        limits.release()
