"""Study docsize: what a two-field projection still reads as documents grow from 1 to 64 KB.

Modules: generate (orders as BSON bytes), model (server-free sizes), load (one collection per
dataset), run (the three query shapes and the three runs), tables, figures.
"""
from __future__ import annotations

from costlab.docsize.ceilings import CEILINGS, ENGINE_CACHE_KEYS, engine_problem, large_cache_mb
from costlab.docsize.datasets import datasets, relation_problem
from costlab.docsize.documents import problem as documents_problem
from costlab.docsize.documents import server_datasets
from costlab.docsize.names import RUNS
from costlab.docsize.targets import targets
from costlab.repeats import COUNT_KEY, SERVER_REPEATS
from costlab.study import ENGINE_S, SERVER_FREE_MB, EngineOverlay, Overlay, RuleAsk, Study

# Assumed throughput floors (chosen low so a cluster time limit is rarely hit; not measurements).
LOAD_BYTES_PER_S = 20e6        # insert_many bytes per second
READ_BYTES_PER_S = 50e6        # query bytes read per second (out of cache: from disk)
# Query shapes: whole document / two-field projection / covered by the index.
SHAPE_COLORS = {"whole": "#e45756", "projection": "#4c78a8", "covered": "#54a24b"}


def _largest_collection_bytes(config: dict) -> float:
    study = config["docsize"]
    return int(study["docs_per_collection"]) * max(int(s) for s in study["sizes_kb"]) * 1024


def _measure_s(config: dict) -> float:
    study = config["docsize"]
    queries = max(int(r["warmups"]) + int(r["queries"]) for r in study["runs"].values())
    per_query = int(study["window_minutes"]) * max(int(s) for s in study["sizes_kb"]) * 1024
    # x2: the spread-customer variant queries as many orders again
    return 2 * queries * per_query / READ_BYTES_PER_S


def _engine_mb(config: dict) -> int:
    # the engine's WiredTiger cache lives in the job's process
    engine_docsize = config.get("engine", {}).get("docsize", {})
    return SERVER_FREE_MB + large_cache_mb(int(engine_docsize.get("docs_per_collection", 10_000)),
                                           list(config.get("docsize", {}).get("sizes_kb", [64])),
                                           engine_docsize.get("default_cache_mb"))


def _document_datasets(config: dict) -> int:
    """Datasets of the declared documents: one per size when a document grows, else one."""
    return len(server_datasets(config["docsize"]))


def _config_problem(config: dict) -> str | None:
    section = config.get("docsize")
    if not section:
        return None
    problem = relation_problem(section)
    if problem is None and section.get("documents"):
        # your own documents (docs/variants.md): reads each sample, so only a config that declares one pays
        problem = documents_problem(section)
    return problem


STUDY = Study(
    name="docsize",
    title="Projection and large documents",
    source='"Projection and large documents: what MongoDB still reads, measured"',
    measured=(
        "Four collections of orders whose size (1 to 64 KB) comes from a history array, one index "
        "{createdAt: 1, total: 1}; time windows read three ways (whole document, two-field projection, "
        "covered by the index), with the default cache and with a 256 MB cache in a 1 GB memory limit, "
        "windows in sequence and at random. Client time, server time, bytes read into the WiredTiger "
        "cache and the plan."
    ),
    # more queries must not reload 3 GB
    data_keys=("docs_per_collection", "seed", "customers"),
    config_problem=_config_problem,
    derived_data=lambda section: {
        "spread_customer": bool((section.get("variants") or {}).get("spread_customer", False))
    },
    measuring_rules={
        "docsize_load": RuleAsk(
            work_s=lambda config: _largest_collection_bytes(config) / LOAD_BYTES_PER_S,
            jobs=lambda config: len(datasets(config["docsize"])),
        ),
        "docsize_measure": RuleAsk(   # each run on each dataset, once per repeat (docsize.repeats)
            work_s=_measure_s,
            jobs=lambda config: (len(datasets(config["docsize"])) * len(RUNS)
                                 * SERVER_REPEATS.count(config, "docsize")),
            timed=True,
        ),
        # your documents (docsize.documents): each size its own dataset, as large as an order of that size
        "docsize_document_load": RuleAsk(
            work_s=lambda config: _largest_collection_bytes(config) / LOAD_BYTES_PER_S,
            jobs=_document_datasets,
        ),
        "docsize_document_measure": RuleAsk(
            work_s=_measure_s, jobs=lambda config: _document_datasets(config) * len(RUNS), timed=True
        ),
    },
    other_rules={"docsize_engine": RuleAsk(work_s=lambda config: ENGINE_S, client_mb=_engine_mb),
                 # one declared document (docsize.documents) at the orders' engine scale
                 "docsize_document_engine": RuleAsk(work_s=lambda config: ENGINE_S, client_mb=_engine_mb)},
    kept_rules=("docsize_measure", "docsize_document_measure"),
    job_selecting_keys=(("sizes_kb",), ("variants", "fields_after_history"), ("variants", "split_history"),
                        (COUNT_KEY,)),
    ceilings=CEILINGS,
    engine_cache_keys=ENGINE_CACHE_KEYS,
    engine_problem=engine_problem,
    targets_from=targets,
    colors={"shape": SHAPE_COLORS},
    overlay=Overlay(
        "summary",
        "size_kb",
        "client_ms_p50",
        "O",
        "Client time by document size, runs overlaid",
        "median client ms, default cache, same window",
        facet="shape",
        filters=(("run", "same_window"), ("variant", "base")),
    ),
    engine_overlay=EngineOverlay(
        "cache_reads",
        "size_kb",
        ("bytes_read_into_cache_median",),
        "Q",
        "Bytes read into the cache per query on the engine lab, small cache, runs overlaid",
        "bytes read into cache per query (median, symlog)",
        facet="shape",
        scales=("log2", "symlog"),
        filters=(("run", "small_cache"),),
        published="docsize_query_tables.csv",
        published_y=("value",),
        published_filters=(("run", "small_cache"), ("metric", "bytes_read_into_cache")),
    ),
    published=("docsize_collections.csv", "docsize_facts.csv", "docsize_query_tables.csv",
               "docsize_tolerances.csv", "docsize_claims.csv"),
    your_schema="costlab.docsize.your_schema:your_schema",
)
