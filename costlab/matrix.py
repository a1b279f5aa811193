"""`python -m costlab.matrix` (`make matrix`): every enabled study on each docker image of `matrix.images`.

Each image gets its own run directory, matrix/<image>/, holding a results/ tree of the usual
layout (Snakemake's --directory, the workflow files linked in), measured with
`server: {backend: docker, image: <image>}`. Runs go one after another, so no two servers'
timings overlap. Then matrix/report.html puts all runs side by side: the first image's results
with the others as `compare.with`, so each run is labelled with the server version its
provenance records.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from costlab.config import ROOT, ConfigError
from costlab.report.page import build_report
from costlab.server.check import snakemake_config
from costlab.server.docker_backend import container_spec
from costlab.server.profiles import get_profile

WORKFLOW_FILES = ("Snakefile", "rules", "scripts", "config", "resources", "profiles", "environment.yml")


@dataclass(frozen=True)
class MatrixRun:
    image: str
    workdir: Path           # matrix/<slug>/; its results/ is this image's tree
    server: dict            # the server section this run uses
    command: list[str]      # the snakemake invocation

    @property
    def results(self) -> Path:
        return self.workdir / "results"


def slug(image: str) -> str:
    """A directory name for an image: mongo:8.0 -> mongo-8.0, registry:5000/mongo:7 ->
    registry-5000-mongo-7."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", image).strip("-.") or "image"


def server_section(config: dict, image: str) -> dict:
    return dict(config["server"]) | {"backend": "docker", "image": image}


def server_override(image: str) -> str:
    """The --config entry for one image; Snakemake merges it over the config files' server section.

    Snakemake reads --config values as strings: only string keys go here.
    """

    return f"server={{backend: docker, image: {json.dumps(image)}}}"


def split_args(argv: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(config files, --config entries, other Snakemake arguments but the target `all`) of an argument
    list."""
    files: list[str] = []
    entries: list[str] = []
    other: list[str] = []
    target = other
    for arg in argv:
        if arg in ("--configfile", "--configfiles"):
            target = files
        elif arg in ("--config", "-C"):
            target = entries
        elif arg.startswith("-"):
            target = other
            other.append(arg)
        else:
            target.append(arg)
    return files, entries, [a for a in other if a != "all"]


def plan(config: dict, argv: list[str], root: str | Path = "matrix") -> list[MatrixRun]:
    """One run per image in `matrix.images` (ConfigError when there are none or two share a directory).

    argv: the Snakemake arguments of `make all` (config files, --config keys, options); each run
    gets them with its own --directory and `server: {backend: docker, image: ...}` added last.
    """
    images = list((config.get("matrix") or {}).get("images") or [])
    if not images:
        raise ConfigError("invalid config key matrix.images: empty; list the docker images to run "
                          "(e.g. matrix: {images: [\"mongo:7.0\", \"mongo:8.0\"]})")
    slugs = [slug(i) for i in images]
    if len(set(slugs)) != len(slugs):
        raise ConfigError(f"invalid config key matrix.images: {images} name the same directory twice")
    files, entries, other = split_args(argv)
    # No --profile profiles/default: each run's directory links profiles/, so Snakemake loads it as the
    # workflow-specific profile (passing it as well loaded it twice and printed both on one line).
    root = Path(root).resolve()
    runs = []
    for image, name in zip(images, slugs):
        workdir = root / name
        command = [sys.executable, "-m", "snakemake", "all", *other,
                   "--snakefile", str(workdir / "Snakefile"), "--directory", str(workdir),
                   *(["--configfile", *[str(Path(f).resolve()) for f in files]] if files else []),
                   "--config", *entries, server_override(image)]
        runs.append(MatrixRun(image, workdir, server_section(config, image), command))
    return runs


def container_specs(run: MatrixRun, profiles: list[str]) -> dict[str, dict]:
    """The docker containers.run arguments each profile of this run gets (the backend's own spec)."""

    return {p: container_spec(get_profile(p), run.image, run.results / "data", os.getuid(), os.getgid(),
                              "matrix", os.getpid()) for p in profiles}


def link_workflow(workdir: Path) -> None:
    workdir.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        link = workdir / name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(ROOT / name)


def comparison_report(runs: list[MatrixRun], config: dict, out: str | Path) -> Path:
    """matrix/report.html: the first image's run with every other image's beside it."""

    first = runs[0]
    run_config = config | {"server": first.server}
    build_report(first.results, out, run_config, compare_with=[str(r.results) for r in runs[1:]])
    return Path(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--root", default="matrix", help="where the runs' directories go")
    parser.add_argument("--plan", action="store_true", help="print one command per image, run nothing")
    args, snakemake_args = parser.parse_known_args(argv)

    try:
        config = snakemake_config(["all", *snakemake_args])
        runs = plan(config, snakemake_args, args.root)
    except ConfigError as err:
        print(f"costlab: {err}", file=sys.stderr)
        return 2
    for run in runs:
        print(f"costlab matrix: {run.image} -> {run.results}", file=sys.stderr)
        if args.plan:
            print(shlex.join(run.command))
            continue
        link_workflow(run.workdir)
        code = subprocess.run(run.command).returncode
        if code != 0:
            print(f"costlab matrix: the run on {run.image} failed (exit {code}); the others are not run",
                  file=sys.stderr)
            return code
    if not args.plan:
        out = comparison_report(runs, config, Path(args.root) / "report.html")
        print(f"costlab matrix: {len(runs)} runs side by side in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
