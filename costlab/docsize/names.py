"""The study's runs, table and figure names: what rules/docsize.smk needs to declare its jobs.

Standard library only, so parsing the workflow does not import pymongo, polars or altair;
run.py, tables.py and figures.py take these from here.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RunSpec:
    name: str
    profile: str      # costlab server profile
    windows: str      # same | random
    label: str        # how tables and figures name the cache setting
    # When the cache is emptied (the server restarted on the same data): never, `once` before the first
    # shape (the article's "start a second server on the same volume"), or `per_shape` before every shape.
    cold_start: str = "none"
    warmups_in: str = "each"   # the warm-ups before `each` shape, or the `first` only (protocol.WARMUPS_IN)


RUNS: dict[str, RunSpec] = {
    r.name: r
    for r in (
        RunSpec("same_window", "standalone", "same", "default cache, same window"),
        RunSpec("random_windows", "standalone", "random", "default cache, random windows"),
        # one start on the loaded data, the 50 warm-ups once, then whole, projection and covered back to back:
        # what the
        # article describes and what its bytes-read table fits (docs/engine-lab.md, "which protocol ...
        # matches")
        RunSpec(
            "small_cache",
            "standalone-small-cache",
            "random",
            "256 MB cache, random windows",
            cold_start="once",
            warmups_in="first",
        ),
    )
}

# Which article table each reproduced table mirrors: (file stem, run, measure, published metric).
QUERY_TABLES = (
    ("client_time_same_window", "same_window", "client_ms", "client_ms"),
    ("server_time_same_window", "same_window", "server_ms", "server_ms"),
    ("client_time_random_windows", "random_windows", "client_ms", None),
    ("client_time_small_cache", "small_cache", "client_ms", "client_ms"),
    ("bytes_read_small_cache", "small_cache", "bytes_read_into_cache", "bytes_read_into_cache"),
)

FIGURES = ("time_by_size", "bytes_read", "server_vs_client")


def table_names() -> list[str]:
    """Every CSV build_tables writes under tables/ (Snakemake declares the same list)."""
    return (["summary", "collections", "variants", "published_vs_reproduced"]
            + [stem for stem, _, _, _ in QUERY_TABLES])

