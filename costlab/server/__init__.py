"""Server lifecycle: get a MongoDB server for one job, however it is provided, and always clean up.

    with start_server(config["server"], "standalone", data_dir) as server:
        server.client.db.coll.find_one()

measuring_job() does the same and also writes the job's provenance JSON when the job succeeds.
"""
from __future__ import annotations

import signal
import threading
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from pymongo import MongoClient

from costlab.server.errors import NO_SERVER_MESSAGE, ServerStartError, ServerUnavailable
from costlab.server.profiles import PROFILES, Profile, get_profile

__all__ = ["RunningServer", "start_server", "measuring_job", "resolve_backend", "ServerUnavailable",
           "ServerStartError", "PROFILES", "Profile", "get_profile"]


@dataclass
class RunningServer:
    client: MongoClient         # connected, ready (and primary, for a replica-set profile)
    uri: str                    # connection string with any password removed
    backend: str                # docker | binary | external
    profile: Profile
    applied: dict = field(default_factory=dict)  # the options actually applied, for provenance
    data_dir: Path | None = None
    restarts: int = 0           # how many times restart() stopped and restarted the server
    _restart: Callable[[], tuple[MongoClient, str, dict]] | None = field(default=None, repr=False)

    def restart(self) -> bool:
        """Stop the server and start it again on the same data directory: an empty WiredTiger cache.

        Returns False, and changes nothing, when the backend cannot restart it (external: the
        deployment is the user's); the caller records that the cache could not be reset. After a
        restart `client` is a new, ready connection (the old one is closed).
        """
        if self._restart is None:
            return False
        self.client, uri, self.applied = self._restart()
        from costlab.server.provenance import redact_uri
        self.uri = redact_uri(uri)
        self.restarts += 1
        return True


def resolve_backend(server_config: dict) -> str:
    """The backend `auto` stands for here, or ServerUnavailable with the one-line fix."""
    backend = server_config.get("backend", "auto")
    if backend != "auto":
        return backend
    from costlab.server import binary, docker_backend
    try:
        # Only asking whether an engine answers: close the client (and its connection pool) now.
        docker_backend.engine_client(timeout_s=3).close()
        return "docker"
    except ServerUnavailable:
        pass
    if binary.find_mongod(server_config.get("mongod")):
        return "binary"
    raise ServerUnavailable(NO_SERVER_MESSAGE)


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """Turn SIGTERM into SystemExit so `finally` blocks stop the server (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _external(server_config: dict, profile: Profile) -> Iterator[tuple[MongoClient, str, dict]]:
    from costlab.credentials import ENV_URI, connection_uri

    uri = connection_uri(server_config)
    if not uri:
        raise ServerUnavailable(f"server.backend is external but neither server.uri nor {ENV_URI} is set")
    client = MongoClient(uri, serverSelectionTimeoutMS=int(server_config.get("startup_timeout_s", 60) * 1000))
    try:
        client.admin.command("ping")
        as_configured = "as configured by the deployment"
        applied = {"wiredTigerCacheSizeGB": as_configured, "memory_limit_bytes": as_configured,
                   "replica_set": as_configured, "requested_profile": profile.name}
        yield client, uri, applied
    finally:
        client.close()


@contextmanager
def start_server(server_config: dict, profile: str | Profile, data_dir: str | Path | None = None
                 ) -> Iterator[RunningServer]:
    """Start (or connect to) a server for `profile`; stop and remove it on exit, error or SIGTERM.

    data_dir is the server's data directory for the docker and binary backends (created if
    missing, reused if it holds data); None means a throwaway directory. The external backend
    ignores it: the data lives in the deployment.
    """
    from costlab.server.provenance import redact_uri

    profile = profile if isinstance(profile, Profile) else get_profile(profile)
    backend = resolve_backend(server_config)
    timeout_s = float(server_config.get("startup_timeout_s", 60))
    data_path = Path(data_dir) if data_dir is not None else None
    with _sigterm_raises(), _maybe_tempdir(data_path, backend) as effective_dir, ExitStack() as running:
        if backend == "docker":
            from costlab.server.docker_backend import run_container

            def open_backend():
                return run_container(profile, effective_dir, server_config.get("image") or "mongo:8.0", timeout_s)
        elif backend == "binary":
            from costlab.server.binary import find_mongod, run_binary
            mongod = find_mongod(server_config.get("mongod"))
            if mongod is None:
                raise ServerUnavailable("server.backend is binary but no mongod is on PATH; "
                                        "install MongoDB or set server.mongod to its path")

            def open_backend():
                return run_binary(profile, effective_dir, mongod, timeout_s)
        elif backend == "external":
            def open_backend():
                return _external(server_config, profile)
        else:
            raise ServerUnavailable(f"unknown server.backend {backend!r}; allowed: auto, docker, binary, external")

        def restart() -> tuple[MongoClient, str, dict]:
            running.close()  # stops and removes the current server before the next one opens the data dir
            return running.enter_context(open_backend())

        client, uri, applied = running.enter_context(open_backend())
        yield RunningServer(client=client, uri=redact_uri(uri), backend=backend, profile=profile,
                            applied=applied, data_dir=data_path,
                            _restart=None if backend == "external" else restart)


@contextmanager
def _maybe_tempdir(data_dir: Path | None, backend: str) -> Iterator[Path | None]:
    if data_dir is not None or backend == "external":
        yield data_dir
        return
    import tempfile
    with tempfile.TemporaryDirectory(prefix="costlab-mongod-") as tmp:
        yield Path(tmp)


@contextmanager
def measuring_job(config: dict, profile: str | Profile, provenance_path: str | Path,
                  data_dir: str | Path | None = None, job: str | None = None,
                  extra: dict | None = None) -> Iterator[RunningServer]:
    """A server for one measuring job; on success writes provenance_path (never on failure)."""
    from costlab.server.provenance import collect_provenance, write_json_atomic

    started_at = datetime.now(timezone.utc)
    with start_server(config.get("server", {}), profile, data_dir) as server:
        yield server
        ended_at = datetime.now(timezone.utc)
        from costlab.config import study_of_provenance_path
        record = collect_provenance(server, config, started_at, ended_at,
                                    job=job or Path(provenance_path).stem, extra=extra,
                                    study=study_of_provenance_path(provenance_path, config))
        write_json_atomic(Path(provenance_path), record)
