"""`python -m costlab.server.check <snakemake arguments>`: fail fast, in one line, when no server can be had.

`make all` runs this before Snakemake with the very arguments it then gives Snakemake, so the check
sees the same config: config/config.yaml, then every `--configfile` in order, then `--config`
keys (typed by the schema, as rules/common.smk types them), and a profile's settings.

No server to be had (auto found none, or backend none) is not an error: the workflow builds the
server-free parts and this says so in one line, with how to get a server.
"""
from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path
from typing import Any

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from costlab.config import ROOT, ConfigError, load_config
from costlab.credentials import connection_uri, redact_text, redact_uri, redact_uri_passwords
from costlab.paths import PathProblem, shell_safe_python, workdir_problem
from costlab.server import resolve_backend
from costlab.server.availability import available_backend, check_configured
from costlab.server.errors import NO_SERVER_FIX, NO_SERVER_REASON, ServerUnavailable, external_failure

# Snakemake keeps only the last of several such flags, silently: refuse them instead.
SINGLE_FLAGS = {"--configfile": ("--configfile", "--configfiles"), "--config": ("--config", "-C")}


def _flag_count(argv: list[str], spellings: tuple[str, ...]) -> int:
    return sum(1 for arg in argv if arg.split("=", 1)[0] in spellings)


def snakemake_config(argv: list[str], check_workdir: bool = True) -> dict[str, Any]:
    """The validated config a `snakemake <argv>` run works with (parsed by Snakemake's own parser).
    check_workdir: also refuse a working directory the workflow cannot run in (cleanup needs none)."""
    if _flag_count(argv, SINGLE_FLAGS["--configfile"]) > 1:
        raise ConfigError("--configfile is given more than once and Snakemake would keep only the last; "
                          "give every file after one flag: --configfile a.yaml b.yaml "
                          '(make all CONFIG="a.yaml b.yaml")')
    if _flag_count(argv, SINGLE_FLAGS["--config"]) > 1:
        raise ConfigError("--config is given more than once and Snakemake would keep only the last; "
                          "give every key after one flag: --config a=1 b=2 (make all SET=\"a=1 b=2\")")
    from snakemake.cli import parse_args, parse_config  # noqa: PLC0415  heavy: snakemake's CLI: costlab's own commands start without it

    said = io.StringIO()  # Snakemake announces the profiles it uses; the check keeps to one line
    try:
        with contextlib.redirect_stderr(said):
            _, args = parse_args(argv)
    except SystemExit as exit_:
        problem = said.getvalue().strip().splitlines()[-1:] or [f"exit {exit_.code}"]
        raise ConfigError(redact_uri_passwords(f"snakemake arguments not understood ({' '.join(argv)}): "
                                               f"{problem[0]}")) from None
    problem = workdir_problem(ROOT, args.directory) if check_workdir else None
    if problem:
        raise PathProblem(problem)
    configfiles = [Path(p) for p in (args.configfile or [])]
    overrides = parse_config(args.config) if args.config else None
    return load_config(*configfiles, overrides=overrides)


PING_TIMEOUT_S = 5.0


def ping_external(server_config: dict, timeout_s: float = PING_TIMEOUT_S) -> None:
    """Ping the external deployment once, or ServerUnavailable naming it (never its password)."""

    try:
        uri = connection_uri(server_config)
    except ValueError as err:
        raise ServerUnavailable(f"costlab: {err}") from None
    timeout_ms = int(timeout_s * 1000)
    try:
        with MongoClient(uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms,
                         socketTimeoutMS=timeout_ms) as client:
            client.admin.command("ping")
    except (PyMongoError, ValueError) as err:
        reason = redact_text(str(err).splitlines()[0] if str(err) else type(err).__name__, server_config)
        raise ServerUnavailable(external_failure(redact_uri(uri), err, timeout_s, reason[:200])) from None


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    try:
        shell_safe_python()   # a checkout path with a space: as rules/common.smk does, or why not
        config = snakemake_config(argv)
        if available_backend(config["server"]) is None:
            # Not an error: the workflow builds everything server-free and marks the mongod parts not run.
            print(f"costlab: {NO_SERVER_REASON}: building the server-free parts only (models, engine lab, "
                  f"report); to measure on MongoDB, {NO_SERVER_FIX}", file=sys.stderr)
            return 0
        backend = resolve_backend(config["server"])
        check_configured(config["server"], backend)
        if backend == "external":
            ping_external(config["server"])
    except (ConfigError, ServerUnavailable, PathProblem) as err:
        print(str(err) if str(err).startswith("costlab") else f"costlab: {err}", file=sys.stderr)
        return 2
    print(f"costlab: server backend {backend}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
