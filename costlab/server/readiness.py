"""Waiting for a started server: ping with a deadline, then (replica set) initiate and wait for primary."""
from __future__ import annotations

from typing import Callable

from pymongo import MongoClient
from pymongo.errors import OperationFailure, PyMongoError
from tenacity import Retrying, retry_if_exception_type, stop_after_delay, wait_fixed

from costlab.server.errors import ServerStartError


class _NotYet(Exception):
    pass


def wait_until_ready(client: MongoClient, timeout_s: float, still_running: Callable[[], bool],
                     last_log: Callable[[], str]) -> None:
    """Ping until the server answers or timeout_s passes; a server that exits fails at once."""

    def attempt() -> None:
        if not still_running():
            raise ServerStartError(f"the server exited before it answered ping; from its log:\n{last_log()}")
        try:
            client.admin.command("ping")
        except PyMongoError as err:
            raise _NotYet(str(err)) from err

    try:
        for try_ in Retrying(stop=stop_after_delay(timeout_s), wait=wait_fixed(0.2),
                             retry=retry_if_exception_type(_NotYet), reraise=True):
            with try_:
                attempt()
    except _NotYet as err:
        raise ServerStartError(f"the server did not answer ping within {timeout_s:g} s ({err}); "
                               f"from its log:\n{last_log()}") from None


def ensure_primary(client: MongoClient, replica_set: str, member_host: str, timeout_s: float) -> None:
    """Initiate a one-node replica set (unless it already is one) and wait until it is primary."""
    hello = client.admin.command("hello")
    if not hello.get("setName"):
        try:
            client.admin.command("replSetInitiate",
                                 {"_id": replica_set, "members": [{"_id": 0, "host": member_host}]})
        except OperationFailure as err:
            if err.code != 23:  # AlreadyInitialized: a data directory reused from an earlier run
                raise
    for try_ in Retrying(stop=stop_after_delay(timeout_s), wait=wait_fixed(0.2),
                         retry=retry_if_exception_type(_NotYet), reraise=True):
        with try_:
            if not client.admin.command("hello").get("isWritablePrimary"):
                raise _NotYet("not primary yet")


def reconnect_as_primary(client: MongoClient, uri: str) -> MongoClient:
    """A new client for a member that has just become primary, the old one closed.

    pymongo decides per pooled connection, from that connection's handshake, whether the server
    supports sessions (`logicalSessionTimeoutMinutes` and a readable member: pymongo's
    synchronous/pool.py), and sends a retryable write's `txnNumber` only on such a connection. The
    connections made before replSetInitiate said hello to a member that was not readable, so every
    write of the job would go without one: no session record (`config.transactions`) on the server,
    unlike a driver's default writes to a replica set (the articles' programs). Measured on mongod
    6.0.5 (docs/engine-lab.md#mongod-against-the-engine-lab): 3.0 cursor insert calls per insert on
    the old client, 4.0 on a new one."""
    options = {"serverSelectionTimeoutMS": int(client.options.server_selection_timeout * 1000)}
    client.close()
    return MongoClient(uri, **options)
