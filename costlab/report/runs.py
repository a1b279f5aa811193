"""Results trees as runs: the manifest each run writes (results/run.json) and the check of a tree to compare.

Standard library only: rules/compare.smk checks `compare.with` trees when the workflow is
planned, so an unusable tree stops Snakemake before any job with a message naming what is missing.
"""
from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path

import costlab
from costlab import STUDIES
from costlab.config import config_hash
from costlab.credentials import public_server_config

MANIFEST = "run.json"
MANIFEST_FORMAT = 1
# What a results tree of this costlab version holds that an older one lacks.
REQUIRED = (MANIFEST,)


class CompareError(ValueError):
    """A results tree cannot be compared; the message names the tree and what is missing."""


def public_config(config: dict) -> dict:
    """The config as it may be stored: the server URI with credentials removed."""

    public = copy.deepcopy(dict(config))
    public["server"] = public_server_config(public.get("server") or {})
    return public


def manifest(config: dict, server_backend: str | None) -> dict:
    """results/run.json: what this run was (config without credentials, backend) for a later comparison."""

    return {
        "format": MANIFEST_FORMAT,
        "costlab_version": costlab.__version__,
        "config_hash": config_hash(config),
        "server_backend": server_backend,
        "config": public_config(config),
        "written_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def results_dir(path: str | Path) -> Path:
    """The results/ folder of a tree: `path` itself, or `path`/results when the tree's root was given."""
    path = Path(path)
    if not (path / MANIFEST).exists() and (path / "results").is_dir():
        return path / "results"
    return path


MAX_SHOWN_PATH = 120


def _shown(path: str | Path) -> str:
    text = str(path)
    return (
        repr(text)
        if len(text) <= MAX_SHOWN_PATH
        else f"{text[:MAX_SHOWN_PATH]!r}… ({len(text):,} characters)"
    )


def check_tree(path: str | Path, this_results: str | Path = "results") -> Path:
    """The tree's results/ folder, or CompareError naming what is missing (an older costlab's tree),
    what is wrong with its run.json, or that it is this run's own results/."""
    given = Path(path)
    try:
        is_dir = given.is_dir()
        folder = results_dir(given)
        is_this_run = (
            is_dir and Path(this_results).is_dir() and folder.resolve() == Path(this_results).resolve()
        )
    except OSError as err:  # ENAMETOOLONG and the like: the path itself is unusable
        raise CompareError(
            f"invalid config key compare.with: {_shown(given)} cannot be used as a path "
            f"({err.strerror or type(err).__name__}); give a results/ tree copied from another run"
        ) from None
    if not is_dir:
        raise CompareError(f"invalid config key compare.with: {_shown(given)} is not a directory "
                           "(give a results/ tree copied from another run)")
    if is_this_run:
        raise CompareError(
            f"invalid config key compare.with: {_shown(given)} is this run's own results/ "
            "(compare.with names other runs' trees, copied here from another machine or checkout)"
        )
    missing = [name for name in REQUIRED if not (folder / name).exists()]
    if missing:
        has_studies = any((folder / s).is_dir() for s in STUDIES)
        what = "a results tree from an older costlab version" if has_studies else "not a costlab results tree"
        raise CompareError(
            f"compare.with: {str(given)!r} is {what}: it lacks {', '.join('results/' + m for m in missing)} "
            "(the run manifest: the config and server the run used, which `snakemake all` writes since "
            "runs can be compared). Rerun the workflow on that machine with this costlab version, then copy "
            "its results/ tree here.")
    try:
        record = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError) as err:
        raise CompareError(f"compare.with: {folder / MANIFEST} is unreadable: {err}") from None
    if not isinstance(record, dict) or record.get("format") != MANIFEST_FORMAT or "config" not in record:
        raise CompareError(
            f"compare.with: {folder / MANIFEST} is not a run manifest of format "
            f"{MANIFEST_FORMAT} (found format {record.get('format') if isinstance(record, dict) else '?'}); "
            "rerun the workflow there with this costlab version"
        )
    config = record["config"]

    bad = ["config"] if not isinstance(config, dict) else [
        f"config.{key}" for key in ("server", "compare", *STUDIES)
        if config.get(key) is not None and not isinstance(config[key], dict)]
    if bad:
        held = type(config).__name__ if bad == ["config"] else "values of the wrong type"
        raise CompareError(
            f"compare.with: {folder / MANIFEST} is not a run manifest: {', '.join(bad)} holds "
            f"{held} (a manifest's config is the mapping the run used); copy that run's results/ again"
        )
    return folder


def read_manifest(folder: str | Path) -> dict:
    return json.loads((Path(folder) / MANIFEST).read_text())


def compare_inputs(folder: Path) -> list[str]:
    """Files of a compared tree the report reads: a change there rebuilds the report."""
    files = [folder / MANIFEST]
    for pattern in ("*/tables/*.csv", "*/provenance/*.json", "servers/*.json"):
        files += sorted(folder.glob(pattern))
    return [str(p) for p in files]
