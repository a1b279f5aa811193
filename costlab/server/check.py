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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--configfile", action="append", default=[])
    args = parser.parse_args(argv)
    try:
        config = load_config(*args.configfile)
        backend = resolve_backend(config["server"])
    except (ConfigError, ServerUnavailable) as err:
        print(str(err) if str(err).startswith("costlab") else f"costlab: {err}", file=sys.stderr)
        return 2
    print(f"costlab: server backend {backend}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
