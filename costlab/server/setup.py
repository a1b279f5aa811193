"""The server setup step: which server a profile resolves to, written to results/servers/<profile>.json.

Every measuring rule takes that file as an input, so another server (image, binary, URI,
profile options) reruns exactly the measurements and what follows them. The record says:
- docker: the image (pulled with progress under server.pull), its id, repo digests (none for a local build),
  whether it came from a pull, and `mongod --version` inside it;
- binary: the mongod's path and its `mongod --version`;
- external: buildInfo's version, the topology (standalone, replica set, sharded) and the storage engine.
A password is never written: URIs go through the project's one redaction (provenance.redact_uri).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from docker.errors import DockerException
from pymongo import MongoClient
from pymongo.errors import PyMongoError
from requests.exceptions import RequestException

import costlab
from costlab.credentials import ENV_URI, connection_uri, redact_text
from costlab.server.availability import (
    configured_mongod,
    no_server_sentences,
    public_uri,
    server_identity,
    server_uri,
)
from costlab.server.docker_backend import container_labels
from costlab.server.errors import (
    NO_SERVER_FIX,
    NO_SERVER_MESSAGE,
    NO_SERVER_REASON,
    ServerStartError,
    ServerUnavailable,
    external_failure,
)
from costlab.server.images import (  # noqa: F401 (PULL_POLICIES, PullProgress, pull_image, split_image: re-exported)
    PULL_POLICIES,
    PullProgress,
    engine_reason,
    ensure_image,
    pull_image,
    split_image,
)
from costlab.server.provenance import mongod_source, server_kind, write_json_atomic

Log = Callable[[str], None]
VERSION_RE = re.compile(r"db version v?(\S+)")


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- mongod --version

def parse_mongod_version(output: str) -> dict:
    """{'version', 'git_version', 'build_info'} from `mongod --version` output (ValueError if none)."""
    match = VERSION_RE.search(output)
    if not match:
        first = output.strip().splitlines()[:1]
        raise ValueError(
            "`mongod --version` printed no 'db version' line (first line: "
            f"{first[0] if first else '(nothing)'!r})"
        )
    parsed: dict[str, Any] = {"version": match.group(1), "git_version": None, "build_info": None}
    start = output.find("Build Info:")
    if start >= 0:
        try:
            info = json.loads(output[start + len("Build Info:"):].strip())
            parsed["build_info"] = info
            parsed["git_version"] = info.get("gitVersion")
        except ValueError:
            pass
    return parsed


# ---------------------------------------------------------------- docker

def version_container_spec(image: str) -> dict:
    """Keyword arguments for containers.run: `mongod --version` in the image, detached (version_output
    waits for it, reads its output and removes it with its volumes).

    Its labels say who owns it, as every costlab container's do: without an owner, a measuring job
    starting at the same moment took it for a killed run's leftover and removed it mid-run.
    """

    return {
        "image": image,
        "command": ["mongod", "--version"],
        "detach": True,
        "network_disabled": True,
        "labels": container_labels(os.getpid(), purpose="version"),
    }


VERSION_TIMEOUT_S = 120   # `mongod --version` in a throwaway container: seconds on a busy host


def version_output(engine, image: str) -> tuple[int, str]:
    """(exit code, output) of `mongod --version` in a throwaway container of `image`.

    The container is removed with its anonymous volumes (`v`): the official image declares VOLUME
    /data/db /data/configdb, and the SDK's `containers.run(remove=True)` removes the container alone,
    leaving two volumes on the engine per setup step.
    """
    container = engine.containers.run(**version_container_spec(image))
    try:
        code = int(container.wait(timeout=VERSION_TIMEOUT_S).get("StatusCode", -1))
        output = container.logs(stdout=True, stderr=True)
    finally:
        container.remove(force=True, v=True)
    return code, output.decode(errors="replace") if isinstance(output, bytes) else str(output)


STAND_IN_VERSION_WORD = "stand-in"   # what a test image's `mongod --version` says (tests/docker_engine.py)


def docker_record(engine, image: str, log: Log = _stderr, pull: str = "missing") -> dict:
    """The setup step's record of a docker image: id, digests (none for a local build), whether pulled,
    version."""

    found, pulled = ensure_image(engine, image, pull, log)
    try:
        code, text = version_output(engine, image)
    except (DockerException, RequestException) as err:
        raise ServerUnavailable(
            f"`mongod --version` in image {image} ({found.id}) failed: {engine_reason(err)}; "
            "is it a MongoDB image? Set server.image to one"
        ) from None
    if code != 0:
        said = next((line.strip() for line in text.splitlines() if line.strip()), "nothing")
        raise ServerUnavailable(
            f"`mongod --version` in image {image} ({found.id}) exited {code}: {said[:200]}; "
            "is it a MongoDB image? Set server.image to one"
        )
    parsed = parse_mongod_version(text)
    digests = list(found.attrs.get("RepoDigests") or [])
    return {
        "image": image,
        "image_id": found.id,
        "repo_digests": digests,
        "digest_note": None if digests else "no registry digest: a local image (built or loaded here)",
        "pulled": pulled,
        "pull_policy": pull,
        "version": parsed["version"],
        "git_version": parsed["git_version"],
        "server_kind": "stand-in" if STAND_IN_VERSION_WORD in text.lower() else "mongod",
    }


# ---------------------------------------------------------------- binary

def binary_record(mongod: str | None, timeout_s: float = 60) -> dict:
    if mongod is None:
        raise ServerUnavailable("server.backend is binary but no mongod is on PATH; "
                                "install MongoDB or set server.mongod to its path")
    path = str(Path(mongod).resolve())
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.SubprocessError) as err:
        raise ServerUnavailable(f"{path} --version failed: {err}") from None
    if proc.returncode != 0:
        raise ServerUnavailable(
            f"{path} --version exited {proc.returncode}: {(proc.stderr or proc.stdout).strip()[:300]}"
        )
    parsed = parse_mongod_version(proc.stdout + proc.stderr)
    return {"mongod": path, "version": parsed["version"], "git_version": parsed["git_version"],
            "server_kind": "mongod", "source": mongod_source(path)}


# ---------------------------------------------------------------- external

def topology(hello: dict) -> str:
    """standalone | replica set <name> | sharded (mongos), from the hello reply."""
    if hello.get("msg") == "isdbgrid":
        return "sharded"
    if hello.get("setName"):
        return f"replica set {hello['setName']}"
    return "standalone"


def external_record(server_config: dict) -> dict:
    uri = server_uri(server_config)
    if not uri:
        raise ServerUnavailable(f"server.backend is external but neither server.uri nor {ENV_URI} is set")
    timeout_ms = int(float(server_config.get("startup_timeout_s", 60)) * 1000)
    try:
        # connection_uri adds COSTLAB_MONGODB_PASSWORD; only public_uri(uri) is ever written
        with MongoClient(connection_uri(server_config), serverSelectionTimeoutMS=timeout_ms,
                         connectTimeoutMS=timeout_ms) as client:
            build = client.admin.command("buildInfo")
            hello = client.admin.command("hello")
            status = client.admin.command("serverStatus")
    except (PyMongoError, ValueError) as err:
        reason = redact_text(str(err).splitlines()[0] if str(err) else "", server_config)[:200]

        raise ServerUnavailable(external_failure(public_uri(uri), err, timeout_ms / 1000, reason)) from None
    return {"uri": public_uri(uri), "version": build.get("version"), "git_version": build.get("gitVersion"),
            "topology": topology(hello), "storage_engine": (status.get("storageEngine") or {}).get("name"),
            "server_kind": server_kind(status)}


# ---------------------------------------------------------------- the step

def setup_record(server_config: dict, backend: str | None, profile_name: str, log: Log = _stderr,
                 docker_engine=None) -> dict:
    """What the step writes for one profile (docker_engine: an SDK client, else one from the environment)."""
    if backend == "docker":
        image = server_config.get("image") or "mongo:8.0"
        pull = server_config.get("pull") or "missing"
        if docker_engine is None:
            from costlab.server.docker_backend import engine_client  # noqa: PLC0415  read at call time: tests replace costlab.server.docker_backend.engine_client
            # the client we open we close (#18: no client left holding the engine's socket)
            with closing(engine_client()) as opened:
                found = docker_record(opened, image, log, pull=pull)
        else:
            found = docker_record(docker_engine, image, log, pull=pull)
    elif backend == "binary":
        found = binary_record(configured_mongod(server_config))
    elif backend == "external":
        found = external_record(server_config)
    elif backend is None:
        raise ServerUnavailable(NO_SERVER_MESSAGE)
    else:
        raise ServerUnavailable(f"unknown server backend {backend!r}; allowed: docker, binary, external")
    return {"profile": profile_name, "backend": backend,
            "identity": server_identity(server_config, backend, profile_name),
            "server": found, "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "costlab_version": costlab.__version__}


def write_setup(path: str | Path, server_config: dict, backend: str | None, profile_name: str,
                log: Log = _stderr) -> dict:
    """Resolve the server and write its record atomically (nothing is written when it fails)."""

    record = setup_record(server_config, backend, profile_name, log)
    write_json_atomic(Path(path), record)
    # the stand-in answers as a MongoDB version: say what it is where the user first sees it
    kind = (
        " (SecantusDB stand-in: not a MongoDB measurement)"
        if record["server"].get("server_kind") == "stand-in"
        else ""
    )
    log(f"server for profile {profile_name}: {backend} {record['server'].get('version')}{kind} -> {path}")
    return record



def run_setup_step(path: str | Path, server_config: dict, backend: str | None, profile_name: str,
                   log_path: str | Path, echo: Log = _stderr) -> int:
    """The server_setup rule's body: 0 with the record written, else 1 with the reason in one line.

    A missing or unreachable server is the user's situation, not a bug: the job log and the console
    get the one line that says what to do, not a Python traceback (the log used to stay empty).
    """
    lines: list[str] = []

    def log(line: str) -> None:
        echo(line)
        lines.append(line)

    try:
        write_setup(path, server_config, backend, profile_name, log)
        return 0
    except (ServerUnavailable, ServerStartError) as err:
        why = str(err)
        if backend is None:  # one line: Snakemake shows the log under the job's error
            why = " ".join(no_server_sentences(f"{path} needs", profile_name, server_config))
        lines.append(why)  # not echoed: Snakemake prints the job's log under its error, once is enough
        return 1
    finally:
        Path(log_path).write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------- no server

def not_run_record() -> dict:
    """results/<study>/not_run.json when no server can be had (a contract: the end-of-run summary reads
    it)."""
    return {"part": "mongod", "reason": NO_SERVER_REASON, "fix": NO_SERVER_FIX}


def remove_stale_not_run(results_dir: str | Path, measured_studies: list[str]) -> list[Path]:
    """Delete results/<study>/not_run.json of studies this run measured (a server appeared since)."""
    removed = []
    for study in measured_studies:
        path = Path(results_dir) / study / "not_run.json"
        if path.exists():
            path.unlink()
            removed.append(path)
    return removed


def write_not_run(path: str | Path) -> dict:
    record = not_run_record()
    write_json_atomic(Path(path), record)
    return record
