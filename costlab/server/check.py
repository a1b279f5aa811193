"""`python -m costlab.server.check --configfile F`: fail fast, in one line, when no server can be had.

`make all` runs this before Snakemake so a machine without Docker or mongod learns what to do
within seconds instead of after the server-free steps.
"""
from __future__ import annotations

import argparse
import sys

from costlab.config import ConfigError, load_config
from costlab.server import resolve_backend
from costlab.server.errors import ServerUnavailable


PING_TIMEOUT_S = 5.0


def ping_external(server_config: dict, timeout_s: float = PING_TIMEOUT_S) -> None:
    """Ping the external deployment once, or ServerUnavailable naming it (never its password)."""
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    from costlab.credentials import connection_uri, redact_text, redact_uri

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
        raise ServerUnavailable(f"costlab: the external server {redact_uri(uri)} did not answer ping within "
                                f"{timeout_s:g} s ({type(err).__name__}: {reason[:200]}); check server.uri "
                                "and that the deployment is up") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--configfile", action="append", default=[])
    args = parser.parse_args(argv)
    try:
        config = load_config(*args.configfile)
        backend = resolve_backend(config["server"])
        if backend == "external":
            ping_external(config["server"])
    except (ConfigError, ServerUnavailable) as err:
        print(str(err) if str(err).startswith("costlab") else f"costlab: {err}", file=sys.stderr)
        return 2
    print(f"costlab: server backend {backend}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
