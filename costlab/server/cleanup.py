"""`python -m costlab.server.cleanup --configfile F [--dry-run]`: drop this run's databases on the server.

"This run" is server.namespace, or (unset) this host and the current directory: run it from the
directory you run Snakemake in. Every study and every data-parameter set of the run goes; other
runs' databases (other checkouts, other namespaces) and anything not made by costlab stay.
Only for server.backend external: docker and binary servers keep their data in results/.
"""
from __future__ import annotations

import argparse
import sys

from costlab.config import ConfigError, load_config
from costlab.namespaces import run_databases, run_id


def drop_run_databases(client, rid: str, dry_run: bool = False) -> list[str]:
    """Drop (or with dry_run only list) the databases of run `rid`; return their names."""
    names = run_databases(client.list_database_names(), rid)
    if not dry_run:
        for name in names:
            client.drop_database(name)
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument("--dry-run", action="store_true", help="list the databases, drop nothing")
    args = parser.parse_args(argv)
    from pymongo import MongoClient
    from pymongo.errors import PyMongoError

    from costlab.credentials import connection_uri, redact_uri

    try:
        config = load_config(*args.configfile)
        server = config["server"]
        uri = connection_uri(server)
        if server.get("backend") != "external" or not uri:
            raise ConfigError("cleanup is for server.backend external (docker and binary data lives in "
                              "results/<study>/data/, removed with the results)")
        rid = run_id(config)
        timeout_ms = int(float(server.get("operation_timeout_s", 10)) * 1000)
        with MongoClient(uri, serverSelectionTimeoutMS=timeout_ms) as client:
            names = drop_run_databases(client, rid, args.dry_run)
    except (ConfigError, ValueError, PyMongoError) as err:
        print(f"costlab: {err}", file=sys.stderr)
        return 2
    verb = "would drop" if args.dry_run else "dropped"
    print(f"costlab: run {rid} on {redact_uri(uri)}: {verb} {len(names)} databases"
          + "".join(f"\n  {name}" for name in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
