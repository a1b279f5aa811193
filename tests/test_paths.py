"""A checkout under a path with a space or non-ASCII letters: script jobs still run (costlab/paths.py).

Snakemake builds `{py_exec} {fname:q}` with the interpreter unquoted; with the venv at
`…/x y/co/.venv` every script job exited 127 (bash: `…/x: No such file or directory`).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from costlab import paths

SNAKEFILE = """
from costlab.paths import shell_safe_python
shell_safe_python()

rule a:
    output: "out é.txt"
    script: "scripts/write.py"
"""


def _spaced_venv(tmp_path: Path) -> Path:
    """This venv seen from a directory whose name has a space and a non-ASCII letter."""
    root = tmp_path / "x y é"
    root.mkdir()
    (root / "venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return root / "venv"


def test_the_interpreter_is_given_a_path_bash_needs_no_quotes_for(tmp_path, monkeypatch):
    venv = _spaced_venv(tmp_path)
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(sys, "executable", str(venv / "bin" / "python"))
    safe = paths.shell_safe_python()
    assert safe and not paths.needs_quoting(safe) and sys.executable == safe
    # the link is the same venv: unquoted through bash, it imports costlab
    out = subprocess.run(["bash", "-c", f"{safe} -c 'import costlab, sys; print(sys.prefix)'"],
                         capture_output=True, text=True, check=True)
    assert Path(out.stdout.strip()).resolve() == Path(sys.prefix).resolve() or out.stdout.strip() == str(
        Path(safe).parent.parent
    )
    assert paths.shell_safe_python() is None  # now plain: nothing more to do
    assert paths.needs_quoting("/home/a b/.venv/bin/python") and not paths.needs_quoting(
        "/home/é/.venv/bin/python"
    )


def test_outside_its_environment_the_cause_in_snakemake_is_named(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/opt/my python/bin/python3")
    with pytest.raises(paths.PathProblem, match="PythonScript.execute_script"):
        paths.shell_safe_python()


@pytest.mark.skipif(os.environ.get("COSTLAB_TEST_PATHS") != "1",
                    reason="opt-in (about 5 s, a Snakemake run): make test-paths")
def test_a_script_job_runs_from_a_checkout_path_with_a_space(tmp_path):
    venv = _spaced_venv(tmp_path)
    work = venv.parent / "co"
    (work / "scripts").mkdir(parents=True)
    (work / "Snakefile").write_text(SNAKEFILE)
    (work / "scripts" / "write.py").write_text('open(snakemake.output[0], "w").write("ok\\n")\n')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "snakemake", "-c1", "--quiet"], cwd=work,
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]       # was: exit 127 from bash
    assert (work / "out é.txt").read_text() == "ok\n"


def test_make_falls_back_to_a_cache_dir_inside_the_checkout_when_home_is_read_only():
    from costlab.config import ROOT

    def cache_home(home: str) -> str:
        env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"} | {"HOME": home}
        dump = subprocess.run(["make", "-n", "-p", "-C", str(ROOT), "lint"], capture_output=True, text=True,
                              env=env, timeout=30).stdout
        return next(line.split(":=", 1)[1].strip() for line in dump.splitlines()
                    if line.startswith("XDG_CACHE_HOME :="))

    # /proc/1/fdinfo takes no new directory, not even from root: Snakemake's SourceCache failed there
    assert cache_home("/proc/1/fdinfo") == f"{ROOT}/.snakemake/cache-home"
    assert cache_home(os.environ.get("HOME", "/root")).endswith("/.cache")


def test_a_working_directory_other_than_the_checkout_is_refused_in_one_line_without_resources(tmp_path):
    from costlab.config import ROOT

    assert paths.workdir_problem(ROOT, ROOT) is None
    problem = paths.workdir_problem(ROOT, tmp_path)
    assert problem.startswith(f"costlab: the working directory {tmp_path.resolve()} has no resources/")
    assert f"ln -s {ROOT / 'resources'} {tmp_path.resolve() / 'resources'}" in problem and "\n" not in problem
    (tmp_path / "resources").symlink_to(ROOT / "resources")
    assert paths.workdir_problem(ROOT, tmp_path) is None          # a read-only checkout run from here works
    # a directory nothing can be written to (not even root: procfs) is named, with --directory as the fix
    assert "cannot be written" in paths.workdir_problem(ROOT, "/proc/1/fdinfo")


def test_the_precheck_says_it_before_snakemake(tmp_path, capsys):
    from costlab.server.check import main

    assert main(["all", "--directory", str(tmp_path)]) == 2
    assert "has no resources/" in capsys.readouterr().err


@pytest.mark.skipif(os.environ.get("COSTLAB_TEST_PATHS") != "1",
                    reason="opt-in (a read-only bind mount, root, about 10 s): make test-paths")
def test_a_read_only_checkout_runs_with_directory_elsewhere(tmp_path):
    from costlab.config import ROOT

    checkout, work = tmp_path / "ro", tmp_path / "work"
    checkout.mkdir()
    work.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(ROOT), str(checkout)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {mounted.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(checkout)], check=True)
        assert not os.access(checkout, os.W_OK)
        (work / "resources").symlink_to(checkout / "resources")
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "-s",
                str(checkout / "Snakefile"),
                "--directory",
                str(work),
                "-c1",
                "results/appversions/model/stats.csv",
                "--config",
                "server={backend: none}",
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert (work / "results/appversions/model/stats.csv").is_file()
    finally:
        subprocess.run(["umount", str(checkout)])
