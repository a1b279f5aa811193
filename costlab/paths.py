"""Paths the workflow's commands must survive: a checkout (and so its .venv) under a directory
whose name has a space or a shell character; a read-only checkout run with --directory elsewhere.

Snakemake runs every `script:` job as `{py_exec} {fname:q}` through bash, quoting the script but
not the interpreter (snakemake/script/__init__.py, PythonScript.execute_script; py_exec is
sys.executable): with the venv at `/home/a b/co/.venv`, bash runs `/home/a` and every script job
exits 127. The Snakefile calls `shell_safe_python()` first: it points sys.executable at a link
to the same venv under a plain path, so the command Snakemake builds needs no quoting.
"""
from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from pathlib import Path

# What bash takes as part of a word unquoted (no space, quote, glob, $, ;, & …); non-ASCII is fine.
PLAIN = re.compile(r"[\w@%+=:,./-]+")
SNAKEMAKE_CAUSE = (
    "Snakemake runs script: jobs as `{py_exec} {fname:q}` with the interpreter's path unquoted "
    "(snakemake/script/__init__.py, PythonScript.execute_script)"
)


class PathProblem(RuntimeError):
    """The interpreter's path needs quoting and no plain link to it could be made."""


# What Snakemake reads as part of a pattern in a rule's input: {wildcard}, <pathvar> (a sample path with
# `<b>` failed with "Undefined pathvar"); a path of yours holding one is refused before any job.
SNAKEMAKE_PATTERN_CHARS = "{}<>"


def snakemake_path_problem(path: str) -> str | None:
    """Why Snakemake cannot carry `path` (a file of yours a rule takes as input), in a line, or None."""
    found = sorted({c for c in path if c in SNAKEMAKE_PATTERN_CHARS})
    if found:
        return (f"{path!r} holds {' '.join(found)}, which Snakemake reads as a pattern in a rule's input "
                f"({{wildcard}}, <pathvar>): rename the file or its folder without {' '.join(found)}")
    if "\n" in path or "\0" in path:
        return f"{path!r} holds a line break or NUL: rename the file"
    return None


def needs_quoting(path: str) -> bool:
    return PLAIN.fullmatch(path) is None


def _venv_link(prefix: Path) -> Path:
    """<tmp>/costlab-python-<hash of the venv's path>: one per venv, shared by every run of it."""
    digest = hashlib.sha256(str(prefix).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"costlab-python-{digest}"


def shell_safe_python() -> str | None:
    """Make sys.executable a path bash needs no quotes for (a link to this venv); the new path,
    None when it already was one, or PathProblem saying why not (with Snakemake's cause)."""
    executable = sys.executable
    if not needs_quoting(executable):
        return None
    prefix = Path(sys.prefix)
    try:
        inside = Path(executable).relative_to(prefix)
    except ValueError:
        raise PathProblem(
            f"costlab: the Python at {executable!r} has a space or shell character in its path and "
            f"is not inside its environment {sys.prefix!r}; {SNAKEMAKE_CAUSE}: make the venv at a "
            "plain path (no spaces)"
        ) from None
    link = _venv_link(prefix)
    try:
        if not link.is_symlink() or Path(os.readlink(link)) != prefix:
            tmp = link.with_name(f"{link.name}.{os.getpid()}")
            tmp.unlink(missing_ok=True)
            tmp.symlink_to(prefix, target_is_directory=True)
            os.replace(tmp, link)
    except OSError as err:
        raise PathProblem(
            f"costlab: {SNAKEMAKE_CAUSE}, so a checkout path with spaces ({str(prefix)!r}) needs a "
            f"plain link to the venv, and {link} could not be made ({err.strerror or err}); move the "
            "checkout to a path without spaces"
        ) from None
    safe = str(link / inside)
    if needs_quoting(safe):
        raise PathProblem(
            f"costlab: {SNAKEMAKE_CAUSE}; the temporary directory {link.parent} has a space too: "
            "set TMPDIR to a plain path, or move the checkout to a path without spaces"
        )
    sys.executable = safe
    return safe


def workdir_problem(checkout: str | Path, workdir: str | Path | None = None) -> str | None:
    """Why Snakemake cannot run the checkout's workflow in `workdir` (default: the current
    directory), in one line with the fix, or None.

    Snakemake writes .snakemake/ and results/ into the working directory; the rules name the
    published numbers by relative paths (resources/published/…), so a working directory other
    than the checkout needs a link to the checkout's resources/ (tests/conftest.py makes the same).
    """
    checkout, workdir = Path(checkout).resolve(), Path(workdir or Path.cwd()).resolve()
    if not os.access(workdir, os.W_OK):
        return (
            f"costlab: the working directory {workdir} cannot be written (Snakemake writes .snakemake/ and "
            "results/ there); run elsewhere: snakemake --directory DIR (make all SNAKEMAKE_ARGS='--directory "
            "DIR'), "
            f"with a link to the checkout's published numbers: ln -s {checkout / 'resources'} DIR/resources"
        )
    if workdir != checkout and not (workdir / "resources").is_dir():
        return (
            f"costlab: the working directory {workdir} has no resources/ (the published numbers the rules "
            f"read by relative path): link them: ln -s {checkout / 'resources'} {workdir / 'resources'}"
        )
    return None


CHECKOUT = Path(__file__).resolve().parent.parent   # costlab's files (the examples it ships)


def user_file_path(path: str | Path) -> Path:
    """Where a file of yours named in the config is: a relative path from the working directory (where
    results/ is written), else from costlab's checkout (the examples it ships, so its configs read them from
    anywhere)."""
    given = Path(path)
    if given.is_absolute() or given.is_file():
        return given
    shipped = CHECKOUT / given
    return shipped if shipped.is_file() else given
