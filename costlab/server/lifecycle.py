"""Server lifecycle, run by a job: start (or connect to) a MongoDB server for one job, however it is
provided, and always clean up (the package's face, costlab.server, names these).

Not imported when the workflow is parsed (pymongo at the top): the rule files import the light modules of
costlab.server (availability, profiles, params), which load the package's __init__ and not this.
"""
from __future__ import annotations

import tempfile
import uuid
from contextlib import ExitStack, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import pymongo
from pymongo import MongoClient
from pymongo.errors import ConnectionFailure, OperationFailure

from costlab import namespaces
from costlab.config import run_facts, study_of_provenance_path
from costlab.credentials import ENV_URI, connection_uri, redact_text, redact_uri
from costlab.jobs import RunFacts
from costlab.procs import sigterm_raises
from costlab.server.availability import available_backend, configured_mongod
from costlab.server.binary import run_binary
from costlab.server.connection import ConnectionLost, lost_message
from costlab.server.docker_backend import run_container
from costlab.server.errors import (
    NO_SERVER_FIX,
    NO_SERVER_MESSAGE,
    ServerUnavailable,
    authentication_failed,
    external_failure,
)
from costlab.server.lease import (
    data_dir_lease,
    deployment_lease,
    document_lease,
    host_server_lease,
    server_lease_key,
)
from costlab.server.markers import clear_marker, expected_load_id, verify_marker, write_marker
from costlab.server.profiles import Profile, get_profile
from costlab.server.provenance import collect_provenance, write_json_atomic
from costlab.server.running import RunningServer


def resolve_backend(server_config: dict) -> str:
    """The backend `auto` stands for here, or ServerUnavailable with the one-line fix."""

    backend = available_backend(server_config)
    if backend is None:
        if server_config.get("backend") == "none":
            raise ServerUnavailable("costlab: server.backend is none: this run measures nothing on a MongoDB "
                                    "server; to measure, " + NO_SERVER_FIX)
        raise ServerUnavailable(NO_SERVER_MESSAGE)
    return backend


@contextmanager
def _external(server_config: dict, profile: Profile) -> Iterator[tuple[MongoClient, str, dict]]:
    uri = connection_uri(server_config)
    if not uri:
        raise ServerUnavailable(f"server.backend is external but neither server.uri nor {ENV_URI} is set")

    from costlab.server.connection import client_options  # noqa: PLC0415  read at call time: tests replace costlab.server.connection.client_options

    startup_s = float(server_config.get("startup_timeout_s", 60))
    # Start-up may take startup_timeout_s; once up, losing the server fails an operation within
    # operation_timeout_s (the job's client), not after the start-up timeout again.
    try:
        with MongoClient(uri, serverSelectionTimeoutMS=int(startup_s * 1000)) as first:
            first.admin.command("ping")
    except (ConnectionFailure, OperationFailure) as err:
        if isinstance(err, OperationFailure) and not authentication_failed(err):
            raise
        raise ServerUnavailable(external_failure(redact_uri(uri), err, startup_s,
                                                 redact_text(str(err).splitlines()[0][:200] if str(err)
                                                             else "", server_config))) from None
    client = MongoClient(uri, **client_options(server_config))
    try:
        client.admin.command("ping")
        as_configured = "as configured by the deployment"
        applied = {"wiredTigerCacheSizeGB": as_configured, "memory_limit_bytes": as_configured,
                   "cpus": as_configured, "replica_set": as_configured, "requested_profile": profile.name}
        yield client, uri, applied
    finally:
        # close() ends the client's sessions on the server: after an outage, bounded, not a
        # server-selection timeout more.
        with pymongo.timeout(2):
            client.close()


@contextmanager
def start_server(server_config: dict, profile: str | Profile, data_dir: str | Path | None = None
                 ) -> Iterator[RunningServer]:
    """Start (or connect to) a server for `profile`; stop and remove it on exit, error or SIGTERM.

    data_dir is the server's data directory for the docker and binary backends (created if
    missing, reused if it holds data); None means a throwaway directory. The external backend
    ignores it: the data lives in the deployment.
    """
    profile = profile if isinstance(profile, Profile) else get_profile(profile)
    backend = resolve_backend(server_config)
    timeout_s = float(server_config.get("startup_timeout_s", 60))
    data_path = Path(data_dir) if data_dir is not None else None
    with sigterm_raises(), _maybe_tempdir(data_path, backend) as effective_dir, ExitStack() as running:
        if backend == "docker":
            def open_backend():
                return run_container(
                    profile,
                    effective_dir,
                    server_config.get("image") or "mongo:8.0",
                    timeout_s,
                    pull=server_config.get("pull") or "missing",
                    network=server_config.get("network") or "bridge",
                )
        elif backend == "binary":
            mongod = configured_mongod(server_config)
            if mongod is None:
                raise ServerUnavailable("server.backend is binary but no mongod is on PATH; "
                                        "install MongoDB or set server.mongod to its path")

            def open_backend():
                return run_binary(profile, effective_dir, mongod, timeout_s)
        elif backend == "external":
            def open_backend():
                return _external(server_config, profile)
        else:
            raise ServerUnavailable(
                f"unknown server.backend {backend!r}; allowed: auto, docker, binary, external"
            )

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
    with tempfile.TemporaryDirectory(prefix="costlab-mongod-") as tmp:
        yield Path(tmp)


@contextmanager
def measuring_job(run: RunFacts | dict, profile: str | Profile, provenance_path: str | Path,
                  data_dir: str | Path | None = None, job: str | None = None,
                  extra: dict | None = None, study: str | None = None, dataset: str | None = None,
                  loads: bool = False, rebuild: str | None = None, data: dict | None = None
                  ) -> Iterator[RunningServer]:
    """A server for one measuring job; on success writes provenance_path (never on failure).

    `run` is the run's facts (costlab.jobs.RunFacts: the server section and the run's hashes), or a
    whole config (tests and callers outside the workflow).
    With `study`, server.database is this run's database of the study (recorded in provenance),
    named from `data`, the study's data params as its rule declares them (costlab.namespaces;
    taken from the config when `run` is one).
    With `dataset` too, the job holds the measurement lease of that dataset (costlab.server.lease)
    and either loads it (`loads=True`: the server's marker is removed first and rewritten with
    server.load_id on success) or measures it (the marker must carry the load id of
    data_dir/dataset.json; `rebuild` is the command the error suggests, by default
    `snakemake --forcerun <data_dir>`).
    A data directory is leased even without a study, so two jobs never share one.
    """

    job = job or Path(provenance_path).stem
    extra = {} if extra is None else extra
    run, data = _run_and_data(run, study, data, provenance_path)
    namespace = namespaces.describe_data(run.server, study, data) if study else None
    if namespace:
        extra["namespace"] = namespace
    # the data directory's own load rule rebuilds it (its output): the command the error suggests
    rebuild = rebuild or (f"snakemake --forcerun {data_dir}" if data_dir is not None
                          else f"snakemake --forcerun <the load rule of {dataset}>")
    load_id = uuid.uuid4().hex if loads else None
    if dataset and not loads and data_dir is not None:
        wanted = expected_load_id(data_dir, rebuild)   # before starting a server: fail fast
    server_config = run.server
    backend = resolve_backend(server_config)
    wait_s = float(server_config.get("lease_wait_s", 900))
    lease_key = server_lease_key(server_config, backend)
    extra["server_lease"] = server_lease = {"key": lease_key}
    with ExitStack() as stack:
        if data_dir is not None:
            stack.enter_context(data_dir_lease(data_dir, job))
        if backend != "external":   # before a container or mongod starts: waiting holds no server
            stack.enter_context(host_server_lease(lease_key, job, wait_s, server_lease))
        server = stack.enter_context(start_server(server_config, profile, data_dir))
        if namespace:
            server.database = namespace["database"]
            db = server.client[server.database]
            if server.backend == "external":
                stack.enter_context(document_lease(db, dataset or "*", job))
            if dataset and loads:
                server.load_id = load_id
                clear_marker(db, dataset)
            elif dataset and data_dir is not None:
                extra["dataset_marker"] = verify_marker(db, dataset, wanted, server.uri, rebuild)
        if backend == "external":   # after the dataset's own lease, which refuses at once
            stack.enter_context(deployment_lease(server.client, lease_key, job, wait_s, server_lease))
        started_at = datetime.now(timezone.utc)   # the measurement starts once the server is ours
        try:
            yield server
        except ConnectionFailure as err:
            where = server.uri + (
                f" (container {server.applied['container']})" if server.applied.get("container") else ""
            )
            raise ConnectionLost(lost_message(where, job, err)) from None
        if namespace and dataset and loads:
            extra["dataset_marker"] = write_marker(server.client[server.database], dataset, load_id, job,
                                                   namespace["data_params"])
        ended_at = datetime.now(timezone.utc)
        record = collect_provenance(server, run, started_at, ended_at, job=job, extra=extra or None,
                                    study=study or run.study)
        write_json_atomic(Path(provenance_path), record)


def _run_and_data(run: RunFacts | dict, study: str | None, data: dict | None,
                  provenance_path: str | Path) -> tuple[RunFacts, dict]:
    """measuring_job's run facts and the study's data params, from a config or as given."""

    if not isinstance(run, RunFacts):
        config = run
        if study and data is None:
            data = namespaces.data_params(config, study)
        run = run_facts(config, study or study_of_provenance_path(provenance_path, config))
    if study and data is None:
        if namespaces.STUDY_DATA_KEYS.get(study):
            raise TypeError(f"measuring_job for {study}: pass the rule's data params "
                            f"({', '.join(namespaces.STUDY_DATA_KEYS[study])}); they name its database")
        data = {}
    return run, data or {}
