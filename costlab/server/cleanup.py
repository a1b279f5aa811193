"""`python -m costlab.server.cleanup [--configfile F ...] [--config key=value ...] [--dry-run]`: drop this
run's databases on the server. It takes the config arguments `make all` passes to Snakemake (the same parser
as the pre-check: CONFIG files, SET keys), and never prints a URI's password.

"This run" is server.namespace, or (unset) this host and the current directory: run it from the
directory you run Snakemake in. Every study and every data-parameter set of the run goes; other
runs' databases (other checkouts, other namespaces) and anything not made by costlab stay.
Only for server.backend external: docker and binary servers keep their data in results/.
"""
from __future__ import annotations

import sys

from pymongo import MongoClient
from pymongo.errors import PyMongoError

from costlab.config import ConfigError
from costlab.credentials import connection_uri, redact_text, redact_uri, redact_uri_passwords
from costlab.namespaces import run_databases, run_id
from costlab.paths import PathProblem
from costlab.server.check import snakemake_config
from costlab.server.errors import external_failure


def drop_run_databases(client, rid: str, dry_run: bool = False) -> list[str]:
    """Drop (or with dry_run only list) the databases of run `rid`; return their names."""
    names = run_databases(client.list_database_names(), rid)
    if not dry_run:
        for name in names:
            client.drop_database(name)
    return names


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    dry_run = any(arg in ("--dry-run", "-n") for arg in argv)

    server: dict = {}
    try:
        # `--config` used to be read as an abbreviation of --configfile, and its URI printed as a missing file
        config = snakemake_config([arg for arg in argv if arg not in ("--dry-run", "-n")],
                                  check_workdir=False)
        server = config["server"]
        uri = connection_uri(server)
        if server.get("backend") != "external" or not uri:
            raise ConfigError("cleanup is for server.backend external (docker and binary data lives in "
                              "results/<study>/data/, removed with the results)")
        rid = run_id(config)
        timeout_s = float(server.get("operation_timeout_s", 10))
        try:
            with MongoClient(uri, serverSelectionTimeoutMS=int(timeout_s * 1000)) as client:
                names = drop_run_databases(client, rid, dry_run)
        except PyMongoError as err:
            reason = redact_text(str(err).splitlines()[0][:200] if str(err) else "", server)
            raise ConfigError(external_failure(redact_uri(uri), err, timeout_s, reason)) from None
    except (ConfigError, ValueError, PyMongoError, PathProblem) as err:
        text = redact_uri_passwords(redact_text(str(err), server))
        print(text if text.startswith("costlab") else f"costlab: {text}", file=sys.stderr)
        return 2
    verb = "would drop" if dry_run else "dropped"
    print(f"costlab: run {rid} on {redact_uri(uri)}: {verb} {len(names)} databases"
          + "".join(f"\n  {name}" for name in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
