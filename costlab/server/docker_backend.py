"""The docker backend: one labelled container per job, published on 127.0.0.1 only.

Only a real Docker engine exercises run_container; container_spec is plain data and unit-tested.
"""
from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from pymongo import MongoClient

from costlab.server.errors import ServerUnavailable
from costlab.server.profiles import Profile
from costlab.server.readiness import ensure_primary, wait_until_ready

LABEL = "costlab"
CONTAINER_PORT = "27017/tcp"


def engine_client(timeout_s: float = 5):
    """A docker SDK client whose engine answered ping, or ServerUnavailable saying why."""
    import docker
    from docker.errors import DockerException

    try:
        client = docker.from_env(timeout=timeout_s)
        client.ping()
        return client
    except DockerException as err:
        raise ServerUnavailable(f"no Docker engine answers ({err.__class__.__name__}: {err}); start one, "
                                "or set server.backend: binary or external") from None


def container_spec(profile: Profile, image: str, data_dir: Path | None, uid: int, gid: int,
                   run_id: str, owner_pid: int) -> dict:
    """Keyword arguments for docker's containers.run: everything the backend decides, as data."""
    spec: dict = {
        "image": image,
        # Inside the container mongod must listen on all interfaces for the port to be published;
        # the host side is bound to 127.0.0.1 only.
        "command": ["--bind_ip_all", *profile.mongod_args()],
        "name": f"costlab-{profile.name}-{run_id}",
        "detach": True,
        "ports": {CONTAINER_PORT: ("127.0.0.1", None)},
        "user": f"{uid}:{gid}",
        "labels": {LABEL: "1", f"{LABEL}.profile": profile.name, f"{LABEL}.owner_pid": str(owner_pid)},
        "volumes": {},
    }
    if data_dir is not None:
        spec["volumes"] = {str(Path(data_dir).resolve()): {"bind": "/data/db", "mode": "rw"}}
    if profile.memory_limit_bytes:
        spec["mem_limit"] = profile.memory_limit_bytes
        spec["memswap_limit"] = profile.memory_limit_bytes  # no swap: the limit is real
    return spec


def applied_options(profile: Profile, image: str) -> dict:
    return {
        "image": image,
        "wiredTigerCacheSizeGB": profile.cache_size_gb if profile.cache_size_gb is not None else "server default",
        "memory_limit_bytes": profile.memory_limit_bytes or "none",
        "replica_set": profile.replica_set or "none (standalone)",
    }


def remove_leftovers(engine) -> list[str]:
    """Remove costlab containers whose owning process is gone (an earlier run killed hard)."""
    removed = []
    for container in engine.containers.list(all=True, filters={"label": LABEL}):
        owner = int(container.labels.get(f"{LABEL}.owner_pid", "0") or 0)
        if owner and owner != os.getpid() and _pid_alive(owner):
            continue
        container.remove(force=True, v=True)
        removed.append(container.name)
    return removed


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def host_port(container) -> int:
    container.reload()
    return int(container.ports[CONTAINER_PORT][0]["HostPort"])


@contextmanager
def run_container(profile: Profile, data_dir: Path | None, image: str,
                  timeout_s: float) -> Iterator[tuple[MongoClient, str, dict]]:
    engine = engine_client()
    remove_leftovers(engine)
    if data_dir is not None:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
    spec = container_spec(profile, image, data_dir, os.getuid(), os.getgid(), uuid.uuid4().hex[:8], os.getpid())
    container = engine.containers.run(**spec)
    client = None
    try:
        port = host_port(container)
        uri = f"mongodb://127.0.0.1:{port}/?directConnection=true"
        client = MongoClient(uri, serverSelectionTimeoutMS=2000)

        def running() -> bool:
            container.reload()
            return container.status in ("created", "running")

        wait_until_ready(client, timeout_s, running,
                         lambda: container.logs(tail=20).decode(errors="replace"))
        if profile.replica_set:
            # The member's address as the server sees itself, inside the container.
            ensure_primary(client, profile.replica_set, "localhost:27017", timeout_s)
        yield client, uri, applied_options(profile, image) | {"container": container.name}
    finally:
        if client is not None:
            client.close()
        try:
            container.stop(timeout=30)
        finally:
            container.remove(force=True, v=True)
