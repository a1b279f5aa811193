"""TEST DOUBLE of a Docker engine for the docker backend's seam tests. Never used by product code.

Only the transport is fake. The docker SDK 7.2.0's own ContainerCollection and Container models
(docker/models/containers.py) run on top of it, so the backend's arguments go through the SDK's
real translation (_create_container_args, HostConfig, utils.convert_volume_binds) and the
Container.status / .ports properties read the shape the Engine API's "inspect" returns
(docs.docker.com, Engine API, ContainerInspect / ContainerState: State {Status, Running, Paused,
Restarting, OOMKilled, Dead, Pid, ExitCode, Error, StartedAt, FinishedAt}; NetworkSettings.Ports
maps "27017/tcp" to [{"HostIp", "HostPort"}] while running and is empty once the container stopped).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from docker.errors import APIError, NotFound
from docker.models.containers import ContainerCollection

API_VERSION = "1.45"

# info() shapes. Docker: moby daemon/info.go fillSecurityOptions (name=apparmor, name=seccomp,profile=...,
# name=selinux, name=userns, name=rootless, name=cgroupns). Podman's Docker-compatible /info:
# containers/podman pkg/api/handlers/compat/info.go (getSecOpts; top-level Rootless, BuildahVersion).
# Podman's own info: libpod define.Info (host.security.rootless, host.security.selinuxEnabled).
DOCKER_ROOTFUL = {"ServerVersion": "27.3.1", "OSType": "linux", "Name": "lab",
                  "SecurityOptions": ["name=apparmor", "name=seccomp,profile=builtin", "name=cgroupns"]}
DOCKER_ROOTLESS = {"ServerVersion": "27.3.1", "OSType": "linux", "Name": "lab",
                   "SecurityOptions": ["name=seccomp,profile=builtin", "name=rootless", "name=cgroupns"]}
DOCKER_USERNS_REMAP = {"ServerVersion": "27.3.1", "OSType": "linux", "Name": "lab",
                       "SecurityOptions": ["name=apparmor", "name=seccomp,profile=builtin", "name=userns"]}
DOCKER_SELINUX = {"ServerVersion": "26.1.3", "OSType": "linux", "Name": "fedora-lab",
                  "SecurityOptions": ["name=seccomp,profile=builtin", "name=selinux", "name=cgroupns"]}
PODMAN_COMPAT_ROOTLESS_SELINUX = {"ServerVersion": "5.2.2", "OSType": "linux", "Name": "fedora-lab",
                                  "SecurityOptions": ["name=seccomp,profile=default", "name=rootless",
                                                      "name=selinux"],
                                  "BuildahVersion": "1.37.2", "Rootless": True, "CgroupVersion": "2"}
PODMAN_LIBPOD = {
    "host": {
        "arch": "amd64",
        "buildahVersion": "1.37.2",
        "security": {
            "apparmorEnabled": False,
            "capabilities": "CAP_CHOWN",
            "rootless": True,
            "seccompEnabled": True,
            "seccompProfilePath": "",
            "selinuxEnabled": True,
        },
    },
    "version": {"APIVersion": "5.2.2", "Version": "5.2.2"},
}


@dataclass
class Behaviour:
    """What the fake container does when started."""
    host_port: int | None = None       # running, 27017/tcp published here (None: exits instead)
    exit_code: int = 100
    oom_killed: bool = False
    logs: str = ""
    start_error: str | None = None     # the engine refuses to start it (APIError 500)


@dataclass
class _Container:
    cid: str
    name: str
    create_kwargs: dict
    status: str = "created"
    exit_code: int = 0
    oom_killed: bool = False
    removed: bool = False
    stop_timeouts: list = field(default_factory=list)


class FakeEngineAPI:
    """The low-level APIClient calls the SDK's models make, answered with the Engine API's shapes."""

    _version = API_VERSION

    def __init__(self, info: dict, behaviour: Behaviour, timeline: list):
        self._info = info
        self.behaviour = behaviour
        self.timeline = timeline       # ("engine", call) entries, shared with the test's other observers
        self.created: list[_Container] = []
        self._ids = itertools.count(1)

    def _get(self, cid: str) -> _Container:
        for c in self.created:
            if c.cid == cid and not c.removed:
                return c
        raise NotFound(f"No such container: {cid}")

    def create_container(self, image, **kwargs):
        cid = f"{next(self._ids):064x}"
        self.created.append(_Container(cid, kwargs.get("name") or cid[:12], dict(kwargs, image=image)))
        self.timeline.append(("engine", "create"))
        return {"Id": cid, "Warnings": []}

    def start(self, container, *args, **kwargs):
        c = self._get(container)
        self.timeline.append(("engine", "start"))
        if self.behaviour.start_error:
            raise APIError("500 Server Error: Internal Server Error", explanation=self.behaviour.start_error)
        if self.behaviour.host_port is not None:
            c.status = "running"
        else:
            c.status, c.exit_code, c.oom_killed = (
                "exited",
                self.behaviour.exit_code,
                self.behaviour.oom_killed,
            )

    def inspect_container(self, container):
        c = self._get(container)
        running = c.status == "running"
        ports = ({"27017/tcp": [{"HostIp": "127.0.0.1", "HostPort": str(self.behaviour.host_port)}]}
                 if running else {})
        kw = c.create_kwargs
        return {
            "Id": c.cid, "Name": "/" + c.name, "Created": "2026-12-01T16:00:00.000000000Z",
            "Path": (kw.get("entrypoint") or ["docker-entrypoint.sh"])[0], "Args": kw.get("command") or [],
            "State": {"Status": c.status, "Running": running, "Paused": False, "Restarting": False,
                      "OOMKilled": c.oom_killed, "Dead": False, "Pid": 4242 if running else 0,
                      "ExitCode": 0 if running else c.exit_code, "Error": "",
                      "StartedAt": "2026-12-01T16:00:00.100000000Z",
                      "FinishedAt": "0001-01-01T00:00:00Z" if running else "2026-12-01T16:00:00.900000000Z"},
            "Image": "sha256:" + "ab" * 32,
            "Config": {"User": kw.get("user", ""), "Image": kw["image"], "Labels": kw.get("labels") or {},
                       "Entrypoint": kw.get("entrypoint"), "Cmd": kw.get("command")},
            "HostConfig": dict(kw.get("host_config") or {}),
            "NetworkSettings": {"Ports": ports},
        }

    def containers(self, all=False, filters=None, **kwargs):
        label = (filters or {}).get("label")
        return [{"Id": c.cid} for c in self.created
                if not c.removed and (label is None or label in c.create_kwargs.get("labels", {}))]

    def logs(self, container, **kwargs):
        self._get(container)
        self.timeline.append(("engine", "logs"))
        return self.behaviour.logs.encode()

    def stop(self, container, timeout=None):
        c = self._get(container)
        c.stop_timeouts.append(timeout)
        self.timeline.append(("engine", "stop"))
        if c.status == "running":
            c.status, c.exit_code = "exited", 0

    def remove_container(self, container, v=False, link=False, force=False):
        self._get(container).removed = True
        self.timeline.append(("engine", "remove"))


class FakeDockerClient:
    """docker.DockerClient's surface the backend uses: containers (the SDK's real collection), info, ping,
    close."""

    def __init__(self, info: dict, behaviour: Behaviour, timeline: list | None = None):
        self.timeline = timeline if timeline is not None else []
        self.api = FakeEngineAPI(info, behaviour, self.timeline)
        self.containers = ContainerCollection(client=self)
        self.closed = False

    def info(self):
        return self.api._info

    def ping(self):
        return True

    def close(self):
        self.closed = True
