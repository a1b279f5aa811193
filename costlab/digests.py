"""Content digests of what each step writes, so a number can be traced and an edit noticed.

Every result written through `costlab.io.atomic_path` gets a record beside it,
`<folder>/.digests/<name>.json`: its SHA-256 and size, when it was written, the step (Snakemake
rule) that wrote it and the SHA-256 of that step's input files. The records travel with a
copied `results/` tree, so a compared tree is checked against its own records too.

Readers (a step's inputs, the report, the summary, `compare.with`) call `check()`: a file whose
content no longer matches its record was changed after its step wrote it ("edited after the
run"); its verdicts are never counted. A file without a record (written by an older costlab, or
by hand in a test) is `UNRECORDED`: read as it is, not marked.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from costlab.config import RUN_ARGS_ENV

DIGEST_DIR = ".digests"
FORMAT = 1
OK, UNRECORDED, EDITED = "ok", "unrecorded", "edited"
EDITED_TEXT = "edited after the run"
_CHUNK = 1 << 20
_input_digests: dict[str, dict[str, str]] = {}   # per process: a step's inputs are hashed once


def sha256_of(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


INPUTS_DIR = "results/.inputs"   # one stamp per content of a file of yours: <sha256>.sha256
_content_digests: dict[tuple, str] = {}   # per process (one parse): (path, mtime, size, inode) -> SHA-256


def content_stamp(path: str | Path) -> str:
    """The stamp a rule takes as the input of a file of yours (a layout, a sample, an element) so that its
    content, not its modification time, decides a rerun: its SHA-256 names the stamp, so an edit that keeps
    the mtime (cp -p, rsync -t, a checkout) is a new input, and a touch is none (rules/common.smk
    by_content)."""
    stat = os.stat(path)
    key = (str(path), stat.st_mtime_ns, stat.st_size, stat.st_ino)
    if key not in _content_digests:
        _content_digests[key] = sha256_of(path)
    return f"{INPUTS_DIR}/{_content_digests[key]}.sha256"


def record_path(path: str | Path) -> Path:
    path = Path(path)
    return path.parent / DIGEST_DIR / f"{path.name}.json"


def _in_server_data_dir(path: Path) -> bool:
    """results/<study>/data/<dataset>/…: a server's data directory (data/ lists the datasets), where
    costlab adds nothing."""
    folder = path.absolute().parent
    return "data" in (folder.name, folder.parent.name)


def _snakemake_job() -> object | None:
    """The `snakemake` object of the Snakemake script running in this process, if any."""
    return getattr(sys.modules.get("__main__"), "snakemake", None)


def _step_inputs(job: object) -> dict[str, str]:
    files = [str(p) for p in getattr(job, "input", []) or [] if isinstance(p, str) and os.path.isfile(p)]
    key = "\0".join(files)
    if key not in _input_digests:
        _input_digests[key] = {p: sha256_of(p) for p in files}
    return _input_digests[key]


def record(path: str | Path) -> Path | None:
    """Write the digest record of a result just written at `path` (nothing for server data files)."""
    path = Path(path)
    if _in_server_data_dir(path):
        return None
    job = _snakemake_job()
    entry = {"format": FORMAT, "file": path.name, "sha256": sha256_of(path), "bytes": path.stat().st_size,
             "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
             "step": getattr(job, "rule", None), "inputs": _step_inputs(job) if job is not None else {}}
    target = record_path(path)
    target.parent.mkdir(exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(entry, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, target)
    return target


def check(path: str | Path) -> str:
    """OK (content as its step wrote it), UNRECORDED (no record), or EDITED (changed since)."""
    path = Path(path)
    try:
        entry = json.loads(record_path(path).read_text())
        wanted = entry["sha256"]
    except FileNotFoundError:
        return UNRECORDED
    except (OSError, ValueError, KeyError, TypeError):
        return EDITED   # a garbled record vouches for nothing
    try:
        return OK if sha256_of(path) == wanted else EDITED
    except OSError:
        return EDITED


def edited_reason(path: str | Path) -> str | None:
    """'… edited after the run …' when `path` fails its record, else None."""
    if check(path) != EDITED:
        return None
    return (f"{path} was {EDITED_TEXT} (its content differs from the SHA-256 its step recorded in "
            f"{record_path(path)})")


def rebuild_command(path: str | Path) -> str:
    """How to get `path` back: files in resources/ come from git, results from their rule, with the
    config arguments of the run that is building (it used to leave them out: another config's plan)."""

    text = Path(path).as_posix()
    if text.startswith("resources/") or "/resources/" in text:
        return f"git checkout -- {text}"

    args = os.environ.get(RUN_ARGS_ENV, "").strip()
    return f"snakemake --force {text}" + (f" {args}" if args else "")


def without_edited_verdicts(frame, path: str | Path):
    """(frame, problem): a table that fails its record has every `verdict` replaced by EDITED_TEXT
    (shown, never counted as a verdict), and the problem says so; otherwise (frame, None)."""
    reason = edited_reason(path)
    if reason is None:
        return frame, None
    import polars as pl  # noqa: PLC0415  heavy: polars; the rule files import this module

    if "verdict" in frame.columns:
        frame = frame.with_columns(pl.lit(EDITED_TEXT, pl.Utf8).alias("verdict"))
    if "reason" in frame.columns:   # the verdict's reason is as untrustworthy as the verdict
        frame = frame.with_columns(pl.lit(None, pl.Utf8).alias("reason"))
    return frame, f"{reason}: its values are not this run's and its verdicts are not counted; rebuild it: " \
                  f"{rebuild_command(path)}"
