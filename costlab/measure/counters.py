"""serverStatus snapshots and deltas of named counters.

A counter is named by its dotted path in serverStatus, e.g. "opLatencies.reads.latency" or
"wiredTiger.log.log bytes written" (WiredTiger's own keys contain spaces, never dots, so the
path splits on dots). A counter the server does not report is None - never 0 - in snapshots
and deltas, so "not reported" can never pass for "nothing happened".
"""
from __future__ import annotations

from typing import Iterable, Mapping

from pymongo import MongoClient

_MISSING = object()


def get_path(document: Mapping, dotted: str):
    """Value at a dotted path, or None when any part is absent."""
    node = document
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return None
    return node


def serverstatus_options(paths: Iterable[str]) -> dict:
    """Ask only for the sections needed (cheaper, and fewer bytes between snapshots)."""
    wanted = {p.split(".", 1)[0] for p in paths}
    options: dict = {}
    # These sections are off by default or large; turn on the ones named, leave the rest as is.
    for section in ("wiredTiger", "opLatencies", "metrics", "opcounters"):
        if section in wanted:
            options[section] = 1
    return options


def snapshot(client: MongoClient, paths: Iterable[str]) -> dict[str, float | None]:
    paths = list(paths)
    status = client.admin.command("serverStatus", **serverstatus_options(paths))
    return {p: get_path(status, p) for p in paths}


def counter_delta(
    before: Mapping[str, float | None], after: Mapping[str, float | None]
) -> dict[str, float | None]:
    """after - before per counter; None where either side is missing."""
    delta: dict[str, float | None] = {}
    for path, end in after.items():
        start = before.get(path)
        delta[path] = None if start is None or end is None else end - start
    return delta
