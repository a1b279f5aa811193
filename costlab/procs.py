"""Child processes die with their job, however the job dies (kill -9 and the OOM killer included).

On Linux the kernel does it: PR_SET_PDEATHSIG makes it signal the child when its parent exits.
Elsewhere (or if prctl is unavailable) a daemon thread polls the parent pid. Either way a child
whose parent is already gone when it starts exits at once.

Standard library only.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterator

PR_SET_PDEATHSIG = 1
WATCH_INTERVAL_S = 0.5


def _prctl_pdeathsig(sig: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(parent_pid: int, sig: int = signal.SIGKILL) -> str:
    """Call first thing in a child process: it gets `sig` when `parent_pid` (its parent) dies.

    Returns how ("pdeathsig" or "watchdog"). If the parent is already gone, exits now.
    """
    how = "pdeathsig" if _prctl_pdeathsig(sig) else "watchdog"
    if how == "watchdog":
        def watch() -> None:
            while os.getppid() == parent_pid:
                time.sleep(WATCH_INTERVAL_S)
            os.kill(os.getpid(), sig)

        threading.Thread(target=watch, name="die-with-parent", daemon=True).start()
    if os.getppid() != parent_pid:   # the parent died before the signal was armed
        os._exit(1)
    return how


def start_watchdog(command: list[str], parent_pid: int | None = None) -> subprocess.Popen:
    """A helper process that runs `command` once `parent_pid` (default: this process) has died.

    For what is not our child and so gets no signal: a Docker container. Stop the watchdog
    (terminate()) when the resource was released normally.
    """
    parent_pid = os.getpid() if parent_pid is None else parent_pid
    return subprocess.Popen([sys.executable, "-m", "costlab.procs", str(parent_pid), "--", *command],
                            stdin=subprocess.DEVNULL, start_new_session=True)


def _watchdog_main(argv: list[str]) -> int:
    parent_pid, command = int(argv[0]), argv[argv.index("--") + 1:]
    fired = threading.Event()
    # The parent's death wakes us through SIGUSR1 (Linux) or the poll below (elsewhere);
    # SIGTERM is how the parent says "released normally: do nothing".
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGUSR1, lambda *_: fired.set())
    _prctl_pdeathsig(signal.SIGUSR1)
    while not fired.is_set() and os.getppid() == parent_pid and pid_alive(parent_pid):
        fired.wait(WATCH_INTERVAL_S)
    return subprocess.run(command, stdin=subprocess.DEVNULL, timeout=120).returncode


def pid_alive(pid: int) -> bool:
    """True while a process with this pid exists (one owned by another user counts)."""
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


if __name__ == "__main__":
    sys.exit(_watchdog_main(sys.argv[1:]))


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """Turn SIGTERM into SystemExit for the block, so `finally` blocks run (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    previous = signal.getsignal(signal.SIGTERM)

    def handler(signum, frame):
        if callable(previous):    # a job's own handler (costlab/jobs.py) raises and records why
            previous(signum, frame)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), None if it is gone.

    A pid with another start time is another process: pids are reused."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None
