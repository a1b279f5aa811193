"""The docker backend: one labelled container per job, published on 127.0.0.1 only.

run_container is exercised end to end on a real Docker Engine by `make test-docker`
(tests/test_docker_engine.py); the decisions are plain data and unit-tested: engine_facts (what the engine's
info() says about user ids and SELinux),
container_spec (the containers.create arguments), start_report (why a container stopped).
"""
from __future__ import annotations

import os
import sys
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

import docker
import portpicker
from docker.errors import APIError, DockerException, ImageNotFound
from pymongo import MongoClient
from requests.exceptions import ConnectionError as RequestsConnectionError
from requests.exceptions import RequestException, Timeout

from costlab.procs import pid_alive, start_watchdog
from costlab.server.errors import ServerStartError, ServerUnavailable
from costlab.server.images import ensure_image
from costlab.server.profiles import Profile
from costlab.server.readiness import ensure_primary, reconnect_as_primary, wait_until_ready
from costlab.server.shutdown import checkpoint_before_stop, data_dir_bytes, stop_grace_seconds
from costlab.server.startlog import start_log_excerpt

LABEL = "costlab"
CONTAINER_PORT = "27017/tcp"
IMAGE_UID = 999          # the official mongo image's `mongodb` user (its Dockerfile: useradd --uid 999)
START_LOG_LINES = 5000   # container log lines read for a start error
NETWORKS = ("bridge", "host")   # server.network
# Seconds the engine has to answer, per kind of call (the HTTP read timeout of the docker SDK's client):
PING_TIMEOUT_S = 5       # "does an engine answer": the API version handshake and ping
CALL_TIMEOUT_S = 300     # create, start, inspect, logs, remove, image look-ups: a slow disk, a storage
                         # driver that copies, Docker Desktop's VM or a busy host take far more than 5 s
# stop(timeout=grace) gets CALL_TIMEOUT_S *plus* the grace period (the SDK adds them): never cut short.


def _no_engine(err: Exception) -> ServerUnavailable:
    return ServerUnavailable(f"no Docker engine answers ({err.__class__.__name__}: {err}); start one, "
                             "or set server.backend: binary or external")


def engine_client(timeout_s: float = PING_TIMEOUT_S, call_timeout_s: float = CALL_TIMEOUT_S):
    """A docker SDK client for the job's calls (call_timeout_s each), once the engine answered ping
    within timeout_s; else ServerUnavailable saying why."""

    try:
        probe = docker.from_env(timeout=timeout_s)
    except (DockerException, RequestException) as err:
        raise _no_engine(err) from None
    try:
        probe.ping()
    except (DockerException, RequestException) as err:
        raise _no_engine(err) from None
    finally:
        probe.close()
    try:
        return docker.from_env(timeout=call_timeout_s)
    except (DockerException, RequestException) as err:
        raise _no_engine(err) from None


@contextmanager
def engine_call(call: str, container: str, timeout_s: float | None = None) -> Iterator[None]:
    """An engine call that times out, or loses the engine, fails in one line naming the call and the
    container."""

    timeout_s = CALL_TIMEOUT_S if timeout_s is None else timeout_s
    try:
        yield
    except Timeout:
        raise ServerStartError(
            f"the Docker engine did not answer `{call}` of container {container} within "
            f"{timeout_s:g} s (a slow disk or storage driver, or a busy host); rerun when the "
            f"engine is less busy (a container left behind is removed by the next run)"
        ) from None
    except RequestsConnectionError as err:
        raise ServerStartError(f"the Docker engine went away during `{call}` of container {container}: "
                               f"{str(err).splitlines()[0][:200]}") from None


@dataclass(frozen=True)
class EngineFacts:
    """What the engine says about how container user ids map to the host, and about SELinux."""
    product: str = "docker"        # docker | podman
    rootless: bool = False         # container root is the user who runs the engine
    userns_remap: bool = False     # rootful daemon with userns-remap: container uids are shifted on the host
    selinux: bool = False          # bind mounts need relabelling (`z`) to be usable
    security_options: tuple[str, ...] = ()

    def describe(self) -> str:
        modes = [m for m, on in (("rootless", self.rootless), ("userns-remap", self.userns_remap),
                                 ("SELinux", self.selinux)) if on]
        return f"{self.product} ({', '.join(modes) or 'rootful'})"


def _security_option_names(options) -> set[str]:
    """Names in info()['SecurityOptions']: 'name=seccomp,profile=default' -> 'seccomp' (API >= 1.26);
    older engines list bare names ('apparmor', 'seccomp')."""
    names = set()
    for option in options or []:
        first = str(option).split(",", 1)[0]
        names.add(first.split("=", 1)[1] if first.startswith("name=") else first)
    return names


def engine_facts(info: Mapping) -> EngineFacts:
    """Facts from the engine's info(): Docker's /info, Podman's Docker-compatible /info, or Podman's own.

    Docker (moby daemon/info.go, fillSecurityOptions): SecurityOptions holds name=selinux,
    name=userns (the daemon remaps ids), name=rootless. Podman's compatible /info
    (pkg/api/handlers/compat/info.go) adds name=rootless / name=selinux there and top-level
    Rootless and BuildahVersion; Podman's own info (libpod) has host.security.rootless and
    host.security.selinuxEnabled.
    """
    options = info.get("SecurityOptions") or []
    names = _security_option_names(options)
    host = info.get("host") if isinstance(info.get("host"), Mapping) else {}
    libpod_security = host.get("security") if isinstance(host.get("security"), Mapping) else {}
    podman = "BuildahVersion" in info or "Rootless" in info or bool(host.get("buildahVersion")) \
        or bool(libpod_security)
    return EngineFacts(
        product="podman" if podman else "docker",
        rootless="rootless" in names
        or info.get("Rootless") is True
        or libpod_security.get("rootless") is True,
        userns_remap="userns" in names,
        selinux="selinux" in names or libpod_security.get("selinuxEnabled") is True,
        security_options=tuple(str(o) for o in options),
    )


def container_labels(owner_pid: int, **more: str) -> dict[str, str]:
    """The labels every costlab container carries: the owner's pid is what remove_leftovers keeps
    a live job's containers by (a container without one is a killed run's leftover)."""
    return {LABEL: "1", f"{LABEL}.owner_pid": str(owner_pid), **{f"{LABEL}.{k}": v for k, v in more.items()}}


def _container_root_is_caller(engine: EngineFacts, uid: int) -> bool:
    """Whether uid 0 in the container is the user running costlab on the host."""
    return engine.rootless or uid == 0


def container_spec(profile: Profile, image: str, data_dir: Path | None, uid: int, gid: int,
                   run_id: str, owner_pid: int, engine: EngineFacts | None = None,
                   network: str = "bridge", host_port: int | None = None) -> dict:
    """Keyword arguments for docker's containers.create/run: everything the backend decides, as data.

    mongod runs as the host user who runs costlab, so the data directory stays theirs:
    - rootful engine, ordinary user: `user: uid:gid` (the image's entrypoint runs mongod as given);
    - rootless engine (Docker or Podman), or costlab run as root: container root *is* that user, so
      mongod runs as 0:0 and the image's entrypoint is bypassed — as root it would chown /data/db
      to its uid 999 and drop to it (docker-library/mongo docker-entrypoint.sh), leaving files
      the host user cannot read (rootless: a subordinate uid);
    - userns-remap daemon: `userns_mode: host` for this container, so ids are not shifted;
    - SELinux: the bind mount gets `z` so the container may use it.
    Networks: `bridge` publishes 27017 on a free 127.0.0.1 port (mongod listens on all interfaces
    inside the container); `host` shares the host's network (no docker-proxy in the timings) and
    mongod listens on 127.0.0.1:host_port only.
    """
    if network not in NETWORKS:
        raise ValueError(f"server.network is {network!r}; allowed: {', '.join(NETWORKS)}")
    engine = engine or EngineFacts()
    if network == "host":
        if host_port is None:
            raise ValueError("server.network host needs a host port for mongod")
        listen = ["--bind_ip", "127.0.0.1", "--port", str(host_port)]
    else:
        listen = ["--bind_ip_all"]
    spec: dict = {
        "image": image,
        "command": [*listen, *profile.mongod_args()],
        "name": f"costlab-{profile.name}-{run_id}",
        "detach": True,
        "labels": container_labels(owner_pid, profile=profile.name),
        "user": f"{uid}:{gid}",
        "volumes": {},
    }
    if network == "host":
        spec["network_mode"] = "host"
    else:
        spec["ports"] = {CONTAINER_PORT: ("127.0.0.1", None)}
    if _container_root_is_caller(engine, uid):
        spec["user"] = "0:0"
        spec["entrypoint"] = ["mongod"]
    if engine.userns_remap and not engine.rootless:
        spec["userns_mode"] = "host"
    if data_dir is not None:
        mode = "rw,z" if engine.selinux else "rw"
        spec["volumes"] = {str(Path(data_dir).resolve()): {"bind": "/data/db", "mode": mode}}
    if profile.memory_limit_bytes:
        spec["mem_limit"] = profile.memory_limit_bytes
        spec["memswap_limit"] = profile.memory_limit_bytes  # no swap: the limit is real
    if profile.cpus:
        spec["nano_cpus"] = int(profile.cpus * 1e9)
    return spec


def applied_options(
    profile: Profile, image: str, spec: dict | None = None, engine: EngineFacts | None = None
) -> dict:
    applied = {
        "image": image,
        "wiredTigerCacheSizeGB": profile.cache_size_gb
        if profile.cache_size_gb is not None
        else "server default",
        "memory_limit_bytes": profile.memory_limit_bytes or "none",
        "cpus": profile.cpus or "none",
        "replica_set": profile.replica_set or "none (standalone)",
    }
    if spec is not None:
        applied["container_user"] = spec["user"]
        applied["entrypoint"] = (
            (f"mongod (image entrypoint bypassed: it would chown the data directory to uid {IMAGE_UID})")
            if "entrypoint" in spec
            else "image default"
        )
        applied["userns_mode"] = spec.get("userns_mode", "engine default")
        volumes = spec.get("volumes") or {}
        applied["data_mount_mode"] = next(iter(volumes.values()))["mode"] if volumes else "none"
        applied["network"] = ("host (mongod on 127.0.0.1 only)" if spec.get("network_mode") == "host"
                              else "bridge (27017 published on 127.0.0.1 only)")
    if engine is not None:
        applied["engine"] = engine.describe()
    return applied


def check_data_dir_access(data_dir: Path) -> None:
    """Stop before starting when mongod (running as this user) could not use the data directory.

    A directory written by an earlier run as root through the image's entrypoint (owned by uid
    999) is the usual cause; mongod would fail with "Permission denied" deep in its log.
    """
    blocked: list[str] = []

    def note(path: str) -> None:
        try:
            owner = os.stat(path).st_uid
        except OSError:
            owner = "?"
        blocked.append(f"{path} (owner uid {owner})")

    every = os.R_OK | os.W_OK | os.X_OK
    if not os.access(data_dir, every):
        note(str(data_dir))
    else:
        for root, dirs, files in os.walk(data_dir, onerror=lambda err: note(err.filename)):
            for name in sorted(dirs):
                if not os.access(os.path.join(root, name), every):
                    note(os.path.join(root, name))
                    dirs.remove(name)    # its contents are out of reach anyway
            for name in sorted(files):
                if not os.access(os.path.join(root, name), os.R_OK | os.W_OK):
                    note(os.path.join(root, name))
    if blocked:
        shown = ", ".join(blocked[:5]) + (f" and {len(blocked) - 5} more" if len(blocked) > 5 else "")
        raise ServerUnavailable(
            f"the data directory {data_dir} holds files uid {os.getuid()} cannot read and write: {shown}. "
            f"mongod runs as you, so it could not open them. Give them back to you "
            f"(sudo chown -R {os.getuid()}:{os.getgid()} {data_dir}) or delete {data_dir} and rerun its load "
            "step"
        )


def remove_leftovers(engine) -> list[str]:
    """Remove costlab containers whose owning process is gone (an earlier run killed hard)."""
    removed = []
    for container in engine.containers.list(all=True, filters={"label": LABEL}):
        owner = int(container.labels.get(f"{LABEL}.owner_pid", "0") or 0)
        if owner and owner != os.getpid() and pid_alive(owner):
            continue
        container.remove(force=True, v=True)
        removed.append(container.name)
    return removed


def _hints(
    state: Mapping, log_text: str, engine: EngineFacts, spec: Mapping, data_dir: Path | None
) -> list[str]:
    """What to change, from the container's state, its log and the engine's facts."""
    hints = []
    lowered = log_text.lower()
    if state.get("OOMKilled"):
        hints.append(
            f"the container hit its memory limit ({spec.get('mem_limit', 'none')} bytes): use a profile "
            "with a larger limit or a smaller wiredTigerCacheSizeGB"
        )
    if state.get("ExitCode") == 132 or "requires a cpu with avx" in lowered:
        hints.append(
            "the CPU lacks AVX, which MongoDB 5.0+ needs: use another machine, or server.image: mongo:4.4"
        )
    if (
        "permission denied" in lowered
        or "read-only directory" in lowered
        or "operation not permitted" in lowered
    ):
        where = f" {data_dir}" if data_dir is not None else ""
        hint = (f"mongod (container user {spec.get('user')}) could not use the data directory{where} on a "
                f"{engine.describe()} engine; ")
        if engine.selinux:
            hint += (
                "it was mounted with :z for SELinux — if the engine could not relabel it (system directories "
                "cannot be), move results/ under your project or home directory; "
            )
        if engine.userns_remap and not engine.rootless:
            hint += (
                "the daemon remaps user ids (userns-remap) and costlab asked for userns_mode=host — if the "
                "daemon refuses that, use server.backend: binary; "
            )
        if engine.rootless:
            hint += "with a rootless engine container root is you: the directory must be yours; "
        hint += "or set server.backend: binary"
        hints.append(hint)
    return hints


def start_report(container, engine: EngineFacts, spec: Mapping, data_dir: Path | None) -> str:
    """Why a container is not serving: its state, the cause from its log, and what to change.

    Reads the logs while the container still exists (cleanup removes it, and its logs with it).
    """

    attrs = getattr(container, "attrs", {}) or {}
    state = attrs.get("State") if isinstance(attrs.get("State"), Mapping) else {}
    facts = [f"status {state.get('Status', getattr(container, 'status', '?'))}"]
    if "ExitCode" in state:
        facts.append(f"exit code {state['ExitCode']}")
    if state.get("OOMKilled"):
        facts.append("killed for exceeding its memory limit (OOMKilled)")
    if state.get("Error"):
        facts.append(f"engine error: {state['Error']}")
    try:
        log_text = container.logs(stdout=True, stderr=True, tail=START_LOG_LINES).decode(errors="replace")
    except Exception as err:   # the engine may already have lost the container; say so, keep the state
        log_text = f"(could not read the container's logs: {err.__class__.__name__}: {err})"
    report = [
        f"container {getattr(container, 'name', '?')} ({', '.join(facts)})",
        start_log_excerpt(log_text),
    ]
    report += [f"what to change: {hint}" for hint in _hints(state, log_text, engine, spec, data_dir)]
    return "\n".join(report)


def host_port(container, engine: EngineFacts | None = None, spec: Mapping | None = None,
              data_dir: Path | None = None) -> int:
    """The host port of 27017/tcp, read only from a running container.

    A container that stopped has no port bindings (NetworkSettings.Ports is empty), so its state
    is checked first and a stopped one raises ServerStartError with its logs.
    """
    container.reload()
    if container.status != "running":
        raise ServerStartError("the container stopped before it published its port; "
                               + start_report(container, engine or EngineFacts(), spec or {}, data_dir))
    if spec and spec.get("network_mode") == "host":   # mongod listens on the port the spec gave it
        command = list(spec["command"])
        return int(command[command.index("--port") + 1])
    for binding in (container.ports or {}).get(CONTAINER_PORT) or []:
        if binding.get("HostPort"):
            return int(binding["HostPort"])
    raise ServerStartError(
        f"the container is running but publishes no host port for {CONTAINER_PORT} "
        f"(NetworkSettings.Ports: {container.ports!r}; an engine without a bridge network, "
        "dockerd --bridge=none, publishes nothing: set server.network: host); "
        + start_report(container, engine or EngineFacts(), spec or {}, data_dir)
    )


def _create_and_start(engine_client_, spec: dict, engine: EngineFacts, data_dir: Path | None,
                      pull: str = "missing"):
    """containers.create (a missing image got under server.pull, as the setup step does), then start.

    Unlike containers.run, a container whose start fails is kept long enough to report why, then removed.
    """

    name, timeout_s = spec["name"], call_timeout(engine_client_)
    try:
        try:
            with engine_call("create", name, timeout_s):
                container = engine_client_.containers.create(**spec)
        except ImageNotFound:
            # the setup step found the image; it went away since (docker image prune, another engine)
            ensure_image(engine_client_, spec["image"], "never" if pull == "never" else "missing")
            with engine_call("create", name, timeout_s):
                container = engine_client_.containers.create(**spec)
    except APIError as err:
        raise ServerStartError(
            f"the engine refused to create the container {name}: {err.explanation or err}; "
            f"engine {engine.describe()}, options {applied_options_line(spec)}"
        ) from None
    try:
        with engine_call("start", name, timeout_s):
            container.start()
    except (APIError, ServerStartError) as err:
        try:
            report = start_report(container, engine, spec, data_dir)
        except Exception as report_err:   # the engine may not answer either: the removal still runs
            report = f"(no report: {report_err.__class__.__name__}: {report_err})"
        finally:
            with engine_call("remove", name, timeout_s):
                container.remove(force=True, v=True)
        why = err.explanation or err if isinstance(err, APIError) else err
        raise ServerStartError(f"the engine could not start the container {name}: {why}\n{report}") from None
    return container


def call_timeout(engine_client_) -> float:
    """The read timeout of the client's calls (CALL_TIMEOUT_S for one engine_client opened)."""
    return float(getattr(getattr(engine_client_, "api", None), "timeout", None) or CALL_TIMEOUT_S)


def stop_and_remove(engine_client_, container, name: str, grace_s: float) -> None:
    """Stop (mongod gets grace_s to shut down cleanly; the call waits that long plus its own timeout), then
    remove."""
    try:
        with engine_call("stop", name, call_timeout(engine_client_) + grace_s):
            container.stop(timeout=grace_s)
    finally:
        with engine_call("remove", name, call_timeout(engine_client_)):
            container.remove(force=True, v=True)


def removal_command(container_name: str) -> list[str]:
    """The command that force-removes a container (run by the watchdog after a hard kill)."""
    code = ("import docker, sys\n"
            "try:\n    docker.from_env().containers.get(sys.argv[1]).remove(force=True, v=True)\n"
            "except docker.errors.NotFound:\n    pass\n")
    return [sys.executable, "-c", code, container_name]


def applied_options_line(spec: Mapping) -> str:
    volumes = spec.get("volumes") or {}
    mount = next(iter(volumes.values()))["mode"] if volumes else "none"
    return f"user {spec.get('user')}, userns_mode {spec.get('userns_mode', 'default')}, mount mode {mount}"


@contextmanager
def run_container(profile: Profile, data_dir: Path | None, image: str, timeout_s: float,
                  pull: str = "missing", network: str = "bridge") -> Iterator[tuple[MongoClient, str, dict]]:
    engine_client_ = engine_client()
    try:
        engine = engine_facts(engine_client_.info())
        remove_leftovers(engine_client_)
        if data_dir is not None:
            Path(data_dir).mkdir(parents=True, exist_ok=True)
            check_data_dir_access(Path(data_dir))

        spec = container_spec(
            profile,
            image,
            data_dir,
            os.getuid(),
            os.getgid(),
            uuid.uuid4().hex[:8],
            os.getpid(),
            engine=engine,
            network=network,
            host_port=portpicker.pick_unused_port() if network == "host" else None,
        )
        name = spec["name"]
        container = _create_and_start(engine_client_, spec, engine, data_dir, pull)
        # The container is not our child: a watchdog removes it if this job dies without cleaning up.
        watchdog = start_watchdog(removal_command(name))
        client = None
        ready = False
        try:
            with engine_call("inspect", name, call_timeout(engine_client_)):
                port = host_port(container, engine, spec, data_dir)
            uri = f"mongodb://127.0.0.1:{port}/?directConnection=true"
            client = MongoClient(uri, serverSelectionTimeoutMS=2000)

            def running() -> bool:
                with engine_call("inspect", name, call_timeout(engine_client_)):
                    container.reload()
                return container.status in ("created", "running")

            def report() -> str:
                with engine_call("logs", name, call_timeout(engine_client_)):
                    return start_report(container, engine, spec, data_dir)

            wait_until_ready(client, timeout_s, running, report)
            ready = True
            if profile.replica_set:
                # The member's address as the server sees itself, inside the container.
                member = f"127.0.0.1:{port}" if network == "host" else "localhost:27017"
                ensure_primary(client, profile.replica_set, member, timeout_s)
                client = reconnect_as_primary(client, uri)
            yield client, uri, applied_options(profile, image, spec, engine) | {
                "container": name, "image_id": container.attrs.get("Image")}
        finally:
            if client is not None:
                if ready:
                    checkpoint_before_stop(client)   # little left for the shutdown checkpoint to write
                client.close()
            try:
                stop_and_remove(engine_client_, container, name, stop_grace_seconds(data_dir_bytes(data_dir)))
            finally:
                watchdog.terminate()
                watchdog.wait()
    finally:
        engine_client_.close()
