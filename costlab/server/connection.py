"""Losing the server during a measurement: fail the job within seconds, say so in one line.

Two timeouts: server.startup_timeout_s is how long a server may take to come up (once, at the
start of a job); server.operation_timeout_s is how long a job waits for a server it lost
(server selection and connecting), so an outage fails the job in seconds instead of once per
operation after the start-up timeout.

A measurement that lost its connection, even for a moment (the driver reconnected, or retried
an operation), is not a result: PoolWatch sees the driver clear its connection pool.
"""
from __future__ import annotations

import threading
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pymongo import monitoring

from costlab.credentials import redact_uri

DEFAULT_OPERATION_TIMEOUT_S = 15.0


class ConnectionLost(RuntimeError):
    """The server went away (or came back) while a job measured: the job has no result."""


def operation_timeout_s(server_config: dict) -> float:
    return float(server_config.get("operation_timeout_s") or DEFAULT_OPERATION_TIMEOUT_S)


def client_options(server_config: dict) -> dict:
    """MongoClient keyword arguments: how long a running job waits for a server it lost."""
    timeout_ms = int(operation_timeout_s(server_config) * 1000)
    return {"serverSelectionTimeoutMS": timeout_ms, "connectTimeoutMS": timeout_ms}


def with_uri_options(uri: str, **options) -> str:
    """`uri` with these connection-string options set (for worker processes, which get a URI)."""
    parts = urlsplit(uri)
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    query.update({k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()})
    path = parts.path or "/"
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode(query, safe=",:"), parts.fragment))


MEASUREMENT_OPTIONS = ("serverSelectionTimeoutMS", "connectTimeoutMS", "retryWrites", "retryReads")


def display_uri(uri: str) -> str:
    """The URI as messages show it: no password, none of the options measurement_uri added."""

    parts = urlsplit(redact_uri(uri))
    query = [
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in MEASUREMENT_OPTIONS
    ]
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query, safe=",:"), parts.fragment))


def measurement_uri(uri: str, server_config: dict) -> str:
    """The URI a measuring worker uses: short timeouts and no silent retries (a blip is an error)."""
    timeout_ms = int(operation_timeout_s(server_config) * 1000)
    return with_uri_options(uri, serverSelectionTimeoutMS=timeout_ms, connectTimeoutMS=timeout_ms,
                            retryWrites=False, retryReads=False)


class PoolWatch(monitoring.ConnectionPoolListener):
    """Counts pool clears: the driver does that when it saw the server fail (then it reconnects)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cleared = 0

    def pool_cleared(self, event) -> None:
        with self._lock:
            self.cleared += 1

    def pool_created(self, event) -> None: ...
    def pool_ready(self, event) -> None: ...
    def pool_closed(self, event) -> None: ...
    def connection_created(self, event) -> None: ...
    def connection_ready(self, event) -> None: ...
    def connection_closed(self, event) -> None: ...
    def connection_check_out_started(self, event) -> None: ...
    def connection_check_out_failed(self, event) -> None: ...
    def connection_checked_out(self, event) -> None: ...
    def connection_checked_in(self, event) -> None: ...


def lost_message(server_uri: str, job: str, err: BaseException | str) -> str:
    reason = (
        err
        if isinstance(err, str)
        else f"{type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''}"
    )
    return (f"costlab: lost the connection to {server_uri} during {job} ({reason}); "
            "nothing of this job is recorded")
