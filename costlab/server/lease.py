"""Measurement leases: one job at a time on one dataset, even across runs, killed runs and hosts.

- docker / binary: an exclusive flock on `results/<study>/.leases/<dataset>.lease` (outside the
  data directory, which Snakemake deletes before rerunning its job, and outside data/, whose
  listing is the datasets). The kernel drops the lock when the holding process dies, however
  it dies.
- external: a lease document in the run's database (`costlab_leases`, one per dataset) with an
  expiry that a thread renews; a job killed hard leaves it to expire (LEASE_TTL_S).

A job that cannot take the lease fails at once with a message naming the holder.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pymongo
from pymongo.errors import DuplicateKeyError, OperationFailure

from costlab.procs import pid_alive, start_time
from costlab.server.availability import public_uri, server_uri

LEASE_TTL_S = 60.0
LEASE_COLLECTION = "costlab_leases"
RELEASE_TIMEOUT_S = 2.0


class LeaseHeld(RuntimeError):
    """Another job holds the lease on what this job would measure."""


def holder_record(job: str) -> dict:
    return {"job": job, "host": socket.gethostname(), "pid": os.getpid(),
            "pid_started": start_time(os.getpid()),
            "cwd": str(Path.cwd()), "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def holder_gone(holder: dict | None) -> bool:
    """Whether a lease's holder was a process on this host that no longer runs (its pid is gone, or runs
    another process: the start time differs). A holder on another host cannot be told: False."""

    if not isinstance(holder, dict) or holder.get("host") != socket.gethostname():
        return False
    try:
        pid = int(holder.get("pid"))
    except (TypeError, ValueError):
        return False
    if not pid_alive(pid):
        return True
    started = holder.get("pid_started")
    return started is not None and start_time(pid) not in (None, started)


def describe_holder(holder: dict | None) -> str:
    if not holder:
        return "an unknown process"
    return (f"job {holder.get('job')} (pid {holder.get('pid')} on {holder.get('host')}, "
            f"in {holder.get('cwd')}, since {holder.get('since')})")


def lease_path(data_dir: str | Path) -> Path:
    """results/<study>/data/<dataset> -> results/<study>/.leases/<dataset>.lease"""
    data_dir = Path(data_dir).absolute()
    return data_dir.parent.parent / ".leases" / f"{data_dir.name}.lease"


@contextmanager
def data_dir_lease(data_dir: str | Path, job: str) -> Iterator[dict]:
    """Hold an exclusive lock on data_dir for the block, or LeaseHeld naming the holder."""
    path = lease_path(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LeaseHeld(
                f"costlab: {data_dir} is being measured by {describe_holder(_read_holder(fd))}; "
                f"{job} refuses to run at the same time (wait for it, or stop that process)"
            ) from None
        with _holding(fd, job) as record:
            yield record
    finally:
        os.close(fd)


def _read_holder(fd: int) -> dict | None:
    """The holder record a locked lease file carries (None if unreadable)."""
    try:
        return json.loads(os.pread(fd, 65536, 0).decode() or "null")
    except ValueError:
        return None


@contextmanager
def _holding(fd: int, job: str) -> Iterator[dict]:
    """With the flock taken on fd: write this job's holder record, and on the way out clear it and unlock."""
    record = holder_record(job)
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(record).encode(), 0)
    try:
        yield record
    finally:
        os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)


class _Renewer(threading.Thread):
    """Extends the lease document's expiry every third of the TTL; notes when the lease was lost."""

    def __init__(self, collection, key: str, token: str, ttl_s: float):
        super().__init__(name=f"lease-{key}", daemon=True)
        self.collection, self.key, self.token, self.ttl_s = collection, key, token, ttl_s
        self.stop = threading.Event()
        self.lost: str | None = None

    def run(self) -> None:
        while not self.stop.wait(self.ttl_s / 3):
            try:
                with pymongo.timeout(RELEASE_TIMEOUT_S):   # never hold up a job that is ending
                    result = self.collection.update_one(
                        {"_id": self.key, "token": self.token},
                        {"$set": {"expires_at": datetime.now(timezone.utc) + timedelta(seconds=self.ttl_s)}})
            except Exception as err:  # a lost connection fails the job elsewhere; keep the reason
                self.lost = f"could not renew the lease ({type(err).__name__})"
                continue
            if result.matched_count == 0:
                self.lost = "the lease expired and was taken by another job"
                return


@contextmanager
def document_lease(db, key: str, job: str, ttl_s: float = LEASE_TTL_S) -> Iterator[dict]:
    """Hold the lease document `key` in db.costlab_leases for the block, or LeaseHeld naming the holder."""

    collection = db[LEASE_COLLECTION]
    token = uuid.uuid4().hex
    record = holder_record(job)
    now = datetime.now(timezone.utc)
    try:
        # Take it if absent (upsert) or expired; an unexpired lease of another job makes the
        # upsert collide with the existing _id.
        collection.update_one({"_id": key, "expires_at": {"$lt": now}},
                              {"$set": {"token": token, "holder": record,
                                        "expires_at": now + timedelta(seconds=ttl_s)}}, upsert=True)
    except DuplicateKeyError:
        current = collection.find_one({"_id": key}) or {}
        expires = current.get("expires_at")
        # A job killed with its Snakemake (kill -9, --unlock, a rerun) leaves its lease until it expires:
        # a holder on this host whose process is gone is taken over at once (compare-and-set on its token),
        # instead of being named as measuring.
        taken = holder_gone(current.get("holder")) and collection.update_one(
            {"_id": key, "token": current.get("token")},
            {"$set": {"token": token, "holder": {**record, "took_over_from": current.get("holder")},
                      "expires_at": now + timedelta(seconds=ttl_s)}}).matched_count == 1
        if taken:
            record = {**record, "took_over_from": current.get("holder")}
        else:
            raise LeaseHeld(f"costlab: {db.name} ({key}) is being measured by "
                            f"{describe_holder(current.get('holder'))}, "
                            f"lease until {expires} UTC; {job} refuses to run at the same time") from None
    renewer = _Renewer(collection, key, token, ttl_s)
    renewer.start()
    try:
        yield record
        if renewer.lost:
            raise LeaseHeld(f"costlab: {job} lost its lease on {db.name} ({key}): {renewer.lost}; "
                            "its measurement is not recorded")
    finally:
        renewer.stop.set()
        renewer.join(5)
        try:
            # Bounded: after an outage the job must not wait out server selection to let go.
            with pymongo.timeout(RELEASE_TIMEOUT_S):
                collection.delete_one({"_id": key, "token": token})
        except Exception:  # the server is gone: the lease expires by itself
            pass


# --- the server lease: one measuring job at a time per server, across Snakemake runs -----------
# `resources: mongod=1` holds inside one Snakemake process only; two invocations (disjoint targets,
# two checkouts) on one Docker engine, one host's mongod or one external deployment would measure
# at the same time. Every measuring job also holds this lease; a second one waits for it.

LEASE_DIR_ENV = "COSTLAB_LEASE_DIR"
SERVER_LEASE_DB = "costlab_deployment"
POLL_S = 0.5


def server_lease_key(server_config: dict, backend: str) -> str:
    """What 'the same server' is: the Docker engine, this host's mongod, the external deployment."""

    if backend == "docker":
        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    elif backend == "binary":
        where = socket.gethostname()
    else:
        where = public_uri(server_uri(server_config)) or ""
    return f"{backend}-{hashlib.sha256(where.encode()).hexdigest()[:12]}"


def lease_dir() -> Path:
    """Machine-wide (all checkouts, all users): $COSTLAB_LEASE_DIR or <tmp>/costlab-leases."""

    return Path(os.environ.get(LEASE_DIR_ENV) or Path(tempfile.gettempdir()) / "costlab-leases")


def _say_waiting(job: str, holder: dict | None, what: str) -> None:
    print(
        f"costlab: {job} waits for {describe_holder(holder)}, which is measuring on {what}",
        file=sys.stderr,
        flush=True,
    )


@contextmanager
def host_server_lease(key: str, job: str, wait_s: float, note: dict) -> Iterator[dict]:
    """Hold the flock of `key` in lease_dir() for the block, waiting up to wait_s; `note` gets what
    happened (waited for whom, how long; or why no lease could be had, so the overlap is on record)."""

    folder = lease_dir()
    try:
        folder.mkdir(mode=0o1777, parents=True, exist_ok=True)
        path = folder / f"{key}.lease"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as err:   # a read-only or foreign tmp: measure, and say it was not guarded
        note.update(
            key=key,
            held=False,
            reason=f"no lease file in {folder} ({err.strerror or err}): "
            "another run may have measured on this server at the same time",
        )
        yield note
        return
    started, said = time.monotonic(), False
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _read_holder(fd)
                if time.monotonic() - started >= wait_s:
                    raise LeaseHeld(
                        f"costlab: the server ({key}) is being measured by {describe_holder(holder)}; "
                        f"{job} waited {wait_s:g} s (server.lease_wait_s) and refuses to measure at "
                        "the same time"
                    ) from None
                if not said:
                    _say_waiting(job, holder, f"the same server ({key})")
                    said = True
                    note["waited_for"] = holder
                time.sleep(POLL_S)
        note.update(key=key, held=True, waited_s=round(time.monotonic() - started, 3))
        with _holding(fd, job):
            yield note
    finally:
        os.close(fd)


@contextmanager
def deployment_lease(client, key: str, job: str, wait_s: float, note: dict,
                     ttl_s: float = LEASE_TTL_S) -> Iterator[dict]:
    """The external deployment's lease document (database costlab_deployment), waiting up to wait_s."""

    started, said = time.monotonic(), False
    db = client[SERVER_LEASE_DB]
    held = ExitStack()
    while True:
        try:
            held.enter_context(document_lease(db, "server", job, ttl_s))
            break
        except LeaseHeld as err:
            if time.monotonic() - started >= wait_s:
                raise LeaseHeld(f"{err} (waited {wait_s:g} s, server.lease_wait_s)") from None
            if not said:
                holder = (db[LEASE_COLLECTION].find_one({"_id": "server"}) or {}).get("holder")
                _say_waiting(job, holder, f"the deployment ({key})")
                said, note["waited_for"] = True, holder
            time.sleep(POLL_S)
        except OperationFailure as err:   # no write access to costlab_deployment: on record, not guarded
            note.update(
                key=key,
                held=False,
                reason=f"no lease on the deployment ({type(err).__name__}: "
                f"{str(err)[:120]}): others may have measured at the same time",
            )
            yield note
            return
    note.update(key=key, held=True, waited_s=round(time.monotonic() - started, 3))
    with held:
        yield note
