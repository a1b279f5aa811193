"""TEST AID: a private Docker Engine and a local stand-in image, for the docker tests (make test-docker).

private_engine() starts Debian's `dockerd` (docker.io) as root on a socket in a scratch directory:
its data root, exec root, pid file and config file are all there, so the system's
/var/run/docker.sock, /etc/docker and /var/lib/docker are never used. `--bridge=none
--iptables=false --ip6tables=false`: the daemon creates no bridge and touches no firewall; the
tests run their containers on the host network bound to 127.0.0.1 (server.network: host).
Stopping it stops every container it ran and removes the scratch directory.

standin_image() gives that engine an image built here with no registry: a Debian minbase rootfs
(debootstrap from the apt sources' mirror), a venv with SecantusDB installed from wheels
downloaded on the host, a `mongod` look-alike that takes mongod's options and execs the stand-in
(`mongod --version` says it is a stand-in), imported with `docker import`. Its name
(costlab-test-standin/mongod) and label (costlab.test-aid) say it is a test aid; it is never
pushed and never tagged over an image that is not one. The rootfs tar is cached under
$XDG_CACHE_HOME/costlab/docker-test-image/, keyed by everything that went into it, so the next
session imports it instead of building it again.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

IMAGE_REPOSITORY = "costlab-test-standin/mongod"
TEST_AID_LABEL = "costlab.test-aid"
TEST_AID_TEXT = "SecantusDB stand-in behind a mongod look-alike; a costlab test aid, not MongoDB"
SUITE = "bookworm"
INCLUDE = ("python3", "python3-venv")
STANDIN_REQUIREMENT = "secantusdb==0.7.0b3"    # the pin of requirements.txt
BUILDER_VERSION = "1"                          # bump when the build steps below change
ENGINE_START_TIMEOUT_S = 60
TOOLS = ("dockerd", "containerd", "runc", "debootstrap")

# The `mongod` look-alike inside the image: mongod's options in, the stand-in out.
MONGOD_LOOKALIKE = r'''#!/opt/standin/bin/python
"""TEST AID, not a MongoDB: a `mongod` look-alike that runs the SecantusDB stand-in (costlab tests)."""
import argparse, os, sys
from importlib.metadata import version

if "--version" in sys.argv[1:]:
    print(f"db version v{version('secantusdb')}-standin")
    print("stand-in: SecantusDB behind a mongod look-alike (costlab test aid), not a MongoDB server")
    sys.exit(0)
parser = argparse.ArgumentParser()
parser.add_argument("--port", default="27017")
parser.add_argument("--dbpath", default="/data/db")
parser.add_argument("--bind_ip", default="127.0.0.1")
parser.add_argument("--bind_ip_all", action="store_true")
parser.add_argument("--wiredTigerCacheSizeGB")
parser.add_argument("--replSet")
parser.add_argument("--logpath")
args = parser.parse_args()
host = "0.0.0.0" if args.bind_ip_all else args.bind_ip.split(",")[0]
if os.environ.get("COSTLAB_STANDIN_FAIL"):   # lets a test see a server that exits at start
    print("{\"s\":\"F\",\"c\":\"CONTROL\",\"msg\":\"stand-in failing on purpose (COSTLAB_STANDIN_FAIL)\"}", flush=True)
    sys.exit(14)
if os.environ.get("COSTLAB_STANDIN_HOG_MB"):  # ... or one that needs more memory than it is given
    hog = [bytearray(2**20) for _ in range(int(os.environ["COSTLAB_STANDIN_HOG_MB"]))]
exe = "/opt/standin/bin/secantusd-py"
os.execv(exe, [exe, "--host", host, "--port", args.port,
               "--storage-path", os.path.join(args.dbpath, "secantus"), "--log-level", "WARNING"])
'''  # noqa: E501 (code in a string, kept as it runs)

# Like the official image's docker-entrypoint.sh in the one way the backend relies on: options alone run
# mongod.
ENTRYPOINT = """#!/bin/sh
case "$1" in -*) set -- mongod "$@" ;; esac
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


# ---------------------------------------------------------------- the stand-in image

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


def download_wheels(dest: Path) -> list[Path]:
    """The stand-in and its dependencies as wheels for this Python (the image's python3 is Debian's 3.11
    too)."""
    dest.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary", ":all:",
                    "--python-version", "3.11", "--platform", "manylinux2014_x86_64",
                    "--platform", "manylinux_2_28_x86_64", "--platform", "linux_x86_64",
                    "-d", str(dest), STANDIN_REQUIREMENT], check=True)
    return sorted(dest.glob("*.whl"))


def image_key(mirror: str, wheels: list[Path]) -> str:
    """A hash of everything that goes into the image."""
    digest = hashlib.sha256()
    inputs = {"builder": BUILDER_VERSION, "suite": SUITE, "mirror": mirror, "include": INCLUDE,
              "lookalike": MONGOD_LOOKALIKE, "entrypoint": ENTRYPOINT,
              "wheels": [(w.name, hashlib.sha256(w.read_bytes()).hexdigest()) for w in wheels]}
    digest.update(json.dumps(inputs, sort_keys=True).encode())
    return digest.hexdigest()[:16]


# The build's commands run with this environment only: the host's pip settings (its find-links, index and
# certificate paths) mean nothing inside the rootfs.
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
            f"{cmd[0]} exited {proc.returncode} building the stand-in image: " + " | ".join(tail)
        )


def build_rootfs_tar(tar_path: Path, mirror: str, wheels: list[Path], work: Path) -> None:
    """debootstrap minbase + venv with the stand-in + the look-alike, as a tar (written atomically)."""
    rootfs = work / "rootfs"
    log = work / "build.log"
    _run(
        [
            _tool("debootstrap"),
            "--variant=minbase",
            f"--include={','.join(INCLUDE)}",
            SUITE,
            str(rootfs),
            mirror,
        ],
        log,
    )
    wheel_dir = rootfs / "tmp" / "wheels"
    wheel_dir.mkdir(parents=True)
    for wheel in wheels:
        shutil.copy2(wheel, wheel_dir)
    _run(["chroot", str(rootfs), "python3", "-m", "venv", "/opt/standin"], log)
    _run(["chroot", str(rootfs), "/opt/standin/bin/pip", "install", "--quiet", "--no-index",
          "--find-links", "/tmp/wheels", STANDIN_REQUIREMENT], log)
    shutil.rmtree(wheel_dir)
    for bulky in ("usr/share/doc", "usr/share/man", "usr/share/locale", "var/cache/apt", "var/lib/apt/lists"):
        shutil.rmtree(rootfs / bulky, ignore_errors=True)
    for name, text in (
        ("usr/local/bin/mongod", MONGOD_LOOKALIKE),
        ("usr/local/bin/docker-entrypoint.sh", ENTRYPOINT),
    ):
        path = rootfs / name
        path.write_text(text)
        path.chmod(0o755)
    (rootfs / "data" / "db").mkdir(parents=True, exist_ok=True)
    (rootfs / "data" / "db").chmod(0o1777)
    partial = tar_path.with_suffix(".partial")
    _run(["tar", "--numeric-owner", "-C", str(rootfs), "-cf", str(partial), "."], log)
    partial.rename(tar_path)


def standin_image(engine: Engine, log=print) -> str:
    """The test image's name on `engine`: imported from the cached rootfs tar, built first if there is
    none."""
    with tempfile.TemporaryDirectory(prefix="cl-img-") as tmp:
        work = Path(tmp)
        mirror = debian_mirror()
        wheels = download_wheels(work / "wheels")
        key = image_key(mirror, wheels)
        name = f"{IMAGE_REPOSITORY}:{key}"
        cached = cache_dir() / f"rootfs-{key}.tar"
        if not cached.exists():
            cached.parent.mkdir(parents=True, exist_ok=True)
            started = time.monotonic()
            build_rootfs_tar(cached, mirror, wheels, work)
            log(f"built the stand-in test image's rootfs in {time.monotonic() - started:.0f} s -> {cached}")
        client = engine.client()
        try:
            _refuse_to_tag_over(client, name)
            started = time.monotonic()
            client.api.import_image_from_file(
                str(cached), repository=IMAGE_REPOSITORY, tag=key,
                changes=['ENTRYPOINT ["docker-entrypoint.sh"]', 'CMD ["mongod"]',
                         "ENV PATH=/usr/local/bin:/usr/bin:/bin",
                         f'LABEL {TEST_AID_LABEL}="{TEST_AID_TEXT}"'])
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
