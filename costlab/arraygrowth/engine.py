"""The arraygrowth study on the engine lab: journal bytes of $push vs insert, per deployment.

Each (profile, workload, N) runs on a fresh WiredTiger home opened like mongod, with the
deployment's logging rules (costlab.engine.deployment): the insert workload inserts N
documents {_id, ts}; the push workload appends N int64 timestamps to one job document, one
update per element, through mongod's record-store update rule. Log bytes are read from the
engine's statistics after a synchronous log flush.

The fallback sweep runs the study's fallback variants (costlab.arraygrowth.workloads) the
same way and records which record-store path each update took.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import Callable, Iterator, Sequence

import bson
import polars as pl
from bson import ObjectId

from costlab.arraygrowth.element_findings import engine_element_rows
from costlab.arraygrowth.elements import declarations
from costlab.arraygrowth.engine_verdicts import arraygrowth_findings
from costlab.arraygrowth.fit import FitError, fit_power_law
from costlab.arraygrowth.model import fallback_conditions
from costlab.arraygrowth.names import PUBLISHED_WORKLOADS
from costlab.arraygrowth.params import EngineParams
from costlab.arraygrowth.workloads import (
    ARRAY_FIELD,
    BASE_TIMESTAMP,
    DB_NAME,
    ELEMENT_VARIANTS,
    FALLBACK_VARIANTS,
    JOB_FIELDS,
    FallbackParams,
    big_element,
    collection_name,
    element_params,
    fallback_settings,
    inserted_document,
    job_name,
    timestamp,
)
from costlab.engine import stats
from costlab.engine.bsonbytes import append_int64_to_last_field, append_to_last_array
from costlab.engine.connection import Engine, EngineSettings
from costlab.engine.deployment import PROFILES, Deployment, check_profile
from costlab.engine.oplog import push_diff
from costlab.engine.provenance import SERVER_KIND, engine_provenance
from costlab.engine.replset import ReplicaSetSettings, replica_set_settings
from costlab.engine.runs import engine_home, engine_settings
from costlab.engine.verdicts import engine_frame
from costlab.inputs import read_csv, read_json
from costlab.io import write_csv
from costlab.jobs import RunFacts
from costlab.progress import progress
from costlab.published import read_tolerances
from costlab.repeats import medians_over_repeats, over_repeat_findings
from costlab.server.provenance import write_json_atomic

NAMESPACE = "costlab_arraygrowth.timestamps"   # the fallback sweep's; a growth run's is the server's


def namespace(workload: str, n: int) -> str:
    """A growth run's namespace: the server run's (costlab.arraygrowth.run), so that the oplog entries
    (which hold it) have the same bytes: the journal compressor and the 128-byte padding see them."""
    return f"{DB_NAME}.{collection_name(workload, n)}"
WORKLOADS = PUBLISHED_WORKLOADS

LOG_COLUMNS = ["profile", "workload", "n", "log_bytes", "bytes_per_op", "log_records", "modify_calls",
               "update_calls", "reserve_calls", "insert_calls", "wt_version", "journal_compressor",
               "journal_compressor_wanted", "block_compressor", "retryable_writes", "server_kind", "seconds"]


def driver_object_id(i: int) -> ObjectId:
    """The i-th _id as a driver makes them (bson's ObjectId: 4 bytes of seconds, 5 random bytes of the
    process, a 3-byte counter), deterministic: the article's first timestamp, fixed process bytes. An _id of
    zeros would let the journal compressor shrink the oplog entries that hold it below a server's."""
    counter = (i % 2**24).to_bytes(3, "big")
    return ObjectId(BASE_TIMESTAMP.to_bytes(4, "big") + bytes.fromhex("5eed0c0575") + counter)


def _job_document(job_id: str = JOB_FIELDS["job_id"], index: int = 0) -> dict:
    return {"_id": driver_object_id(index), **JOB_FIELDS, "job_id": job_id, ARRAY_FIELD: []}


def _counts(delta: dict[str, int]) -> dict[str, int]:
    return {"log_bytes": delta["log_bytes"], "log_records": stats.log_records(delta),
            "modify_calls": delta["cursor_modify_calls"], "update_calls": delta["cursor_update_calls"],
            "reserve_calls": delta["cursor_reserve_calls"], "insert_calls": delta["cursor_insert_calls"]}


def run_workload(profile: str, workload: str, n: int, settings: EngineSettings, workdir=None,
                 retryable_writes: bool = True, replica_set: ReplicaSetSettings | None = None,
                 element: Callable[[int], object] | None = None) -> dict:
    """One run on a fresh engine; the counters cover the N writes only (preparation excluded).
    `replica_set`: what the replica set does per write (costlab.engine.replset; its defaults if None).
    `element`: what the i-th insert holds instead of the article's timestamp (a user's element)."""
    check_profile(profile)
    if workload not in WORKLOADS:
        raise ValueError(f"unknown arraygrowth workload {workload!r}; allowed: {', '.join(WORKLOADS)}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    with engine_home(workdir, f"{profile}-{workload}-{n}") as home:
        engine = Engine(home, settings)
        try:
            collection = Deployment(engine, profile, settings.block_compressor,
                                    retryable_writes, replica_set).collection(namespace(workload, n))
            if workload == "push":
                job = _job_document()
                record_id = collection.insert(job)
                current = bson.encode(job)
            started = time.perf_counter()
            before = stats.snapshot(engine.session)
            if workload == "insert":
                element = element or timestamp
                for i in range(n):
                    _id = driver_object_id(i)
                    collection.insert({"_id": _id, **inserted_document(element(i))})
            else:
                for i in range(n):
                    value = timestamp(i)
                    new = append_int64_to_last_field(current, i, int(value))
                    collection.update(record_id, job["_id"], new, push_diff(ARRAY_FIELD, i, value), current)
                    current = new
            after = stats.snapshot(engine.session)
            seconds = time.perf_counter() - started
        finally:
            engine.close()
    delta = stats.delta(before, after)
    return {"profile": profile, "workload": workload, "n": n, **_counts(delta),
            "log_payload_bytes": delta["log_payload_bytes"], "seconds": seconds}


def sweep(ns: Sequence[int], profiles: Sequence[str], workloads: Sequence[str], settings: EngineSettings,
          journal_compressor_wanted: str, workdir=None, retryable_writes: bool = True,
          replica_set: ReplicaSetSettings | None = None) -> pl.DataFrame:
    """Every (profile, workload, n): the rows of results/arraygrowth/engine/log_bytes.csv."""
    described = settings.describe()
    rows = []
    runs = [(p, w, int(n)) for p in profiles for w in workloads for n in ns]
    bar = progress(total=len(runs), desc="arraygrowth engine lab", unit="run")
    with bar:
        for profile, workload, n in runs:   # one step of the bar per (profile, workload, N)
            bar.set_postfix_str(f"{profile} {workload} N={n:,}")
            row = run_workload(profile, workload, n, settings, workdir, retryable_writes, replica_set)
            rows.append(row | {"bytes_per_op": row["log_bytes"] / row["n"]}
                        | _run_facts(settings, described, journal_compressor_wanted)
                        | {"retryable_writes": bool(retryable_writes and profile != "standalone")})
            bar.update()
    return pl.DataFrame(rows).select(LOG_COLUMNS)


def _run_facts(settings, described: dict, journal_compressor_wanted: str | None) -> dict:
    """What every engine run's row records beside its counters: the engine and its compressors."""
    return {"wt_version": described["wt_version"], "journal_compressor": settings.journal_compressor,
            "journal_compressor_wanted": journal_compressor_wanted,
            "block_compressor": settings.block_compressor, "server_kind": SERVER_KIND}


def fits(log_bytes: pl.DataFrame) -> pl.DataFrame:
    """Power-law exponent of log bytes against N, per (profile, workload)."""
    rows = []
    for (profile, workload), group in log_bytes.group_by(["profile", "workload"], maintain_order=True):
        try:
            fit = fit_power_law(group["n"].to_list(), group["log_bytes"].to_list(), "log bytes")
            rows.append({"profile": profile, "workload": workload, "exponent": fit.exponent,
                         "r_squared": fit.r_squared, "points": fit.points, "note": None})
        except FitError as err:
            rows.append({"profile": profile, "workload": workload, "exponent": None,
                         "r_squared": None, "points": group.height, "note": str(err)})
    return pl.DataFrame(rows, schema={"profile": pl.Utf8, "workload": pl.Utf8, "exponent": pl.Float64,
                                      "r_squared": pl.Float64, "points": pl.Int64, "note": pl.Utf8})


# ---- fallback sweep --------------------------------------------------------------------------


def _fallback_updates(variant: str, params: FallbackParams, element: Callable[[int], object] = timestamp,
                      documents: list[dict] | None = None) -> Iterator[tuple[int, dict, dict]]:
    """(document index, new document, oplog `o`) per update, in the order the variant sends them.

    The oplog `o` is the $v:2 diff mongod logs for the update: an array sub-diff for appends
    ($push, $push $each), a whole-field update {u: {field: value}} for $set of the array, and
    the whole post-image (a replacement entry) when the diff would not be smaller than the
    document (the $slice shift rewrites every element). `element(i)`: what update i pushes (push_one,
    small_docs, push_slice, set_array; the article's timestamp unless a user's element); `documents`: the
    documents updated (the sweep's job documents unless given).
    """
    count = params.small_docs() if variant == "small_docs" else 1
    docs = documents if documents is not None else [_job_document(job_name(j), j) for j in range(count)]
    count = len(docs)
    yield from ((-1, d, {}) for d in docs)   # the preparation inserts (index -1: not measured)
    u = params.updates
    for i in range(u):
        if variant in ("push_one", "small_docs"):
            j = i % count
            arr = docs[j][ARRAY_FIELD]
            arr.append(element(i))
            yield j, docs[j], push_diff(ARRAY_FIELD, len(arr) - 1, arr[-1])
        elif variant == "push_many":
            arr = docs[0][ARRAY_FIELD]
            start = len(arr)
            batch = [timestamp(i * params.elements_per_update + k) for k in range(params.elements_per_update)]
            arr.extend(batch)
            diff = {"a": True} | {f"u{start + k}": v for k, v in enumerate(batch)}
            yield 0, docs[0], {"$v": 2, "diff": {f"s{ARRAY_FIELD}": diff}}
        elif variant == "big_elements":
            arr = docs[0][ARRAY_FIELD]
            arr.append(big_element(i, params.big_element_bytes))
            yield 0, docs[0], push_diff(ARRAY_FIELD, len(arr) - 1, arr[-1])
        elif variant == "push_slice":
            arr = docs[0][ARRAY_FIELD]
            arr.append(element(i))
            del arr[:-params.slice_elements]
            if len(arr) < params.slice_elements:
                yield 0, docs[0], push_diff(ARRAY_FIELD, len(arr) - 1, arr[-1])
            else:   # every element moved one slot: the diff is the array; mongod logs the post-image
                yield 0, docs[0], dict(docs[0])
        elif variant == "set_array":
            arr = docs[0][ARRAY_FIELD]
            arr.append(element(i))
            yield 0, docs[0], {"$v": 2, "diff": {"u": {ARRAY_FIELD: list(arr)}}}
        else:
            raise ValueError(f"unknown fallback variant {variant!r}; allowed: {', '.join(FALLBACK_VARIANTS)}")


def _appended(document: dict, oplog_o: dict) -> tuple[int, object] | None:
    """(index, value) when the update appends one element to the document's array (its last field)."""
    diff = oplog_o.get("diff") if "$v" in oplog_o else None
    sub = diff.get(f"s{ARRAY_FIELD}") if isinstance(diff, dict) and len(diff) == 1 else None
    if sub is None or len(sub) != 2 or next(reversed(document)) != ARRAY_FIELD:
        return None
    index = len(document[ARRAY_FIELD]) - 1
    key = f"u{index}"
    return (index, sub[key]) if key in sub else None


def _run_updates(label: str, profile: str, variant: str, params: FallbackParams, settings: EngineSettings,
                 workdir=None, retryable_writes: bool = True, replica_set: ReplicaSetSettings | None = None,
                 element: Callable[[int], object] = timestamp, documents: list[dict] | None = None,
                 ns: str = NAMESPACE) -> tuple[dict, dict, int, int]:
    """The updates of `variant` on a fresh engine in namespace `ns`: (the counters' delta over the updates,
    the collection's full-update reasons, its modify calls, the largest document's BSON bytes)."""
    with engine_home(workdir, label) as home:
        engine = Engine(home, settings)
        try:
            collection = Deployment(engine, profile, settings.block_compressor,
                                    retryable_writes, replica_set).collection(ns)
            record_ids: list[int] = []
            encoded: list[bytes] = []
            largest = 0
            before = None
            for j, document, oplog_o in _fallback_updates(variant, params, element, documents):
                if j < 0:
                    new = bson.encode(document)
                    record_ids.append(collection.insert(document, new))
                    encoded.append(new)
                    continue
                appended = _appended(document, oplog_o)
                # an append: the array's bytes grown by one element (bson.encode of a 20,000-element
                # array per update would be most of the run)
                new = (bson.encode(document) if appended is None
                       else append_to_last_array(encoded[j], *appended))
                if before is None:
                    before = stats.snapshot(engine.session)
                collection.update(record_ids[j], document["_id"], new, oplog_o, encoded[j])
                encoded[j] = new
                largest = max(largest, len(new))
            after = stats.snapshot(engine.session)
            reasons = dict(collection.records.counts.by_reason)
            # the collection's own deltas: on a replica set the connection's modify calls also count
            # the history store's reverse deltas (costlab.engine.replset)
            collection_modifies = collection.records.counts.modify
        finally:
            engine.close()
    return stats.delta(before, after), reasons, collection_modifies, largest


def run_fallback_variant(profile: str, variant: str, params: FallbackParams, settings: EngineSettings,
                         workdir=None, retryable_writes: bool = True,
                         replica_set: ReplicaSetSettings | None = None) -> dict:
    delta, reasons, collection_modifies, _ = _run_updates(
        f"fallback-{profile}-{variant}", profile, variant, params, settings, workdir, retryable_writes,
        replica_set)
    counts = _counts(delta)
    return {"profile": profile, "variant": variant, "updates": params.updates, **counts,
            "bytes_per_update": counts["log_bytes"] / params.updates,
            "collection_modify_calls": collection_modifies,
            "full_update_reasons": "; ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) or None}


def fallback_sweep(profiles: Sequence[str], variants: Sequence[str], params: FallbackParams,
                   settings: EngineSettings, workdir=None, retryable_writes: bool = True,
                   replica_set: ReplicaSetSettings | None = None) -> pl.DataFrame:
    described = settings.describe()
    rows = [run_fallback_variant(p, v, params, settings, workdir, retryable_writes, replica_set) | {
                "wt_version": described["wt_version"], "journal_compressor": settings.journal_compressor,
                "server_kind": SERVER_KIND}
            for p in profiles for v in variants]
    # Beside each row: how many updates mongod's size and logging rules leave eligible for a delta
    # (the server-free model); the engine's modify calls fall short of it where
    # wiredtiger_calc_modify itself refuses (a diff too big or too scattered).
    model = fallback_conditions(params, variants).select(
        "variant", pl.col("topology").replace_strict({"standalone": "standalone", "replica set": "replset-1"})
        .alias("profile"), pl.col("modify_eligible_updates").alias("model_modify_eligible"))
    return pl.DataFrame(rows).join(model, on=["profile", "variant"], how="left").with_columns(
        (pl.col("model_modify_eligible") - pl.col("collection_modify_calls"))
        .alias("eligible_but_calc_modify_refused"))


# ---- a user's own elements (arraygrowth.elements, docs/variants.md) ---------------------------

ELEMENT_COLUMNS = ["profile", "element", "update", "n", "log_bytes", "bytes_per_op", "log_payload_bytes",
                   "log_records", "modify_calls", "insert_calls", "max_doc_bytes", "wt_version",
                   "journal_compressor", "journal_compressor_wanted", "block_compressor", "retryable_writes",
                   "server_kind", "seconds"]


def run_element(profile: str, declaration, n: int, settings: EngineSettings, workdir=None,
                retryable_writes: bool = True, replica_set: ReplicaSetSettings | None = None) -> dict:
    """One run of a user's element (costlab.arraygrowth.elements.ElementDeclaration) on a fresh engine: n
    writes adding `declaration.at(i)` as its update style says, to the article's job document (insert: n
    documents); the counters cover the n writes only, like the article's runs (run_workload)."""
    check_profile(profile)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if declaration.update == "insert":
        row = run_workload(profile, "insert", n, settings, workdir, retryable_writes, replica_set,
                           declaration.at)
        row["max_doc_bytes"] = len(bson.encode({"_id": ObjectId(bytes(12)),
                                                **inserted_document(declaration.at(n - 1))}))
    else:
        started = time.perf_counter()
        delta, _, _, largest = _run_updates(
            f"element-{profile}-{declaration.name}-{n}", profile, ELEMENT_VARIANTS[declaration.update],
            element_params(declaration, n), settings, workdir, retryable_writes, replica_set, declaration.at,
            [_job_document()], namespace("push", n))   # the namespace of the $push rows it stands beside
        row = {"profile": profile, "n": n, **_counts(delta), "log_payload_bytes": delta["log_payload_bytes"],
               "max_doc_bytes": largest, "seconds": time.perf_counter() - started}
    return row | {"element": declaration.name, "update": declaration.update}


def element_sweep(declarations: Sequence, ns: Sequence[int], profiles: Sequence[str],
                  settings: EngineSettings, journal_compressor_wanted: str, workdir=None,
                  retryable_writes: bool = True,
                  replica_set: ReplicaSetSettings | None = None) -> pl.DataFrame:
    """Every (element, profile, n): the rows of results/arraygrowth/engine/elements.csv."""
    described = settings.describe()
    runs = [(d, p, int(n)) for d in declarations for p in profiles for n in ns]
    rows = []
    with progress(total=len(runs), desc="arraygrowth engine lab, your elements", unit="run") as bar:
        for declaration, profile, n in runs:
            bar.set_postfix_str(f"{declaration.name} {profile} N={n:,}")
            row = run_element(profile, declaration, n, settings, workdir, retryable_writes, replica_set)
            rows.append(row | {"bytes_per_op": row["log_bytes"] / n}
                        | _run_facts(settings, described, journal_compressor_wanted)
                        | {"retryable_writes": bool(retryable_writes and profile != "standalone")})
            bar.update()
    schema = {c: pl.Utf8 for c in ("profile", "element", "update", "wt_version", "journal_compressor",
                                   "journal_compressor_wanted", "block_compressor", "server_kind")}
    schema |= {"bytes_per_op": pl.Float64, "seconds": pl.Float64, "retryable_writes": pl.Boolean}
    schema |= {c: pl.Int64 for c in ELEMENT_COLUMNS if c not in schema}
    return pl.DataFrame([{c: r[c] for c in ELEMENT_COLUMNS} for r in rows], schema=schema)


__all__ = ["sweep", "fits", "fallback_sweep", "run_workload", "element_sweep", "run_element", "PROFILES",
           "WORKLOADS", "LOG_COLUMNS", "ELEMENT_COLUMNS", "run_engine_repeat", "merge_repeats",
           "merge_engine_repeats"]


# ---- the workflow job ------------------------------------------------------------------------


def engine_profiles(profiles: Sequence[str]) -> list[str]:
    """The study's profiles the engine reproduces (standalone-small-cache is a standalone)."""
    found = []
    for profile in profiles:
        name = "standalone" if profile == "standalone-small-cache" else profile
        if name in PROFILES and name not in found:
            found.append(name)
    if not found:
        raise ValueError(f"arraygrowth.profiles {list(profiles)}: none maps to an engine profile "
                         f"({', '.join(PROFILES)})")
    return found


def run_engine_repeat(params: EngineParams, run: RunFacts, rep: int, log_bytes_path, provenance_path,
                      fallback_path=None, elements_path=None) -> pl.DataFrame:
    """One repeat of the arraygrowth engine lab (engine.arraygrowth.repeats; each repeat its own job): the N
    sweep (with the article's workloads a user's element is compared to, even where arraygrowth.workloads
    leaves them out: merge_engine_repeats keeps only the asked ones in log_bytes.csv), the user's elements
    (params.elements, when `elements_path` is given), the fallback sweep (when `fallback_path` is given), each
    row with its `rep`, and the repeat's provenance; `params` are the rule's
    (costlab.arraygrowth.params.EngineParams, without the repeats), `run` the run's facts. The runs are
    deterministic writes (no seed): a repeat runs the same writes again on a fresh engine."""

    engine_config = params.engine
    ns = engine_config["arraygrowth"].get("ns") or params.ns
    settings, resolved = engine_settings(engine_config)
    profiles = engine_profiles(params.profiles)
    replica_set = replica_set_settings(engine_config,
                                       engine_config["arraygrowth"].get("writes_per_second", 600))
    wanted, workdir = resolved["journal_compressor_wanted"], engine_config.get("workdir")
    started = datetime.now(timezone.utc)
    workloads = [w for w in params.workloads if w in WORKLOADS]   # a user's element: element_sweep
    declared = declarations({"elements": params.elements}) if elements_path is not None else []
    # what an element is compared to runs at the same N and profiles (the article's $push even where
    # arraygrowth.workloads leaves it out); only the element rows use these runs
    missing = sorted({d.compare_to for d in declared} & set(WORKLOADS) - set(workloads))
    table = sweep(ns, profiles, workloads + missing, settings, wanted, workdir,
                  engine_config["retryable_writes"], replica_set)
    with_rep = [pl.lit(int(rep)).alias("rep")]
    if declared:
        elements = element_sweep(declared, ns, profiles, settings, wanted, workdir,
                                 engine_config["retryable_writes"], replica_set)
        write_csv(elements.with_columns(with_rep), elements_path)
    elif elements_path is not None:
        write_csv(pl.DataFrame(schema=ELEMENT_COLUMNS).with_columns(with_rep), elements_path)
    if fallback_path is not None:
        fallback_params, variants = fallback_settings(params.fallback)
        write_csv(fallback_sweep(profiles, variants, fallback_params, settings, workdir,
                                 engine_config["retryable_writes"], replica_set).with_columns(with_rep),
                  fallback_path)
    ended = datetime.now(timezone.utc)
    write_json_atomic(provenance_path, engine_provenance(
        "arraygrowth_engine_repeat", run, started, ended,
        {"rep": int(rep), "ns": list(ns), "profiles": profiles, "workloads": list(params.workloads),
         "retryable_writes": engine_config["retryable_writes"], "replica_set": replica_set.describe(),
         **({"elements": {d.name: d.describe() for d in declared}} if declared else {})},
        engine_config=engine_config))
    table = table.with_columns(with_rep)
    write_csv(table, log_bytes_path)   # last: its presence means the job completed
    return table


# each repeat's value kept beside the median of these columns in the merged tables (costlab.repeats)
REPEATED = {"log_bytes": ("log_bytes", "modify_calls", "insert_calls", "seconds"),
            "fallback": ("log_bytes", "modify_calls", "collection_modify_calls"),
            "elements": ("log_bytes", "modify_calls", "seconds")}


def _repeats_in_order(frames: Sequence[pl.DataFrame], what: str, repeats: int) -> list[pl.DataFrame]:
    """The repeats' tables in repeat order; ValueError unless they are repeats 1..`repeats` exactly."""
    by_rep = {int(frame["rep"][0]) if frame.height else 0: frame for frame in frames}
    if sorted(by_rep) != list(range(1, repeats + 1)):
        raise ValueError(f"engine.arraygrowth.repeats {repeats} asks repeats 1-{repeats}; the {what} tables "
                         f"hold repeats {sorted(by_rep)}")
    return [by_rep[r] for r in range(1, repeats + 1)]


def merge_repeats(per_repeat: Sequence[pl.DataFrame], workloads: Sequence[str], published: pl.DataFrame,
                  published_calls: pl.DataFrame, tolerances=None,
                  elements: Sequence[pl.DataFrame] | None = None, pairs: dict[str, str] | None = None
                  ) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The repeats' sweeps (run_engine_repeat's log_bytes tables, in repeat order) as (log_bytes.csv: each
    (profile, workload, N) the median over the repeats with each repeat's value beside it; the verdicts: each
    finding computed on each repeat, then its median judged by its interval over the repeats
    (costlab.repeats.over_repeat_findings: a value the same in every repeat is [x, x], "the same in all N
    repeats")). `workloads`: arraygrowth.workloads (the article's ones kept in log_bytes.csv); `elements`
    and `pairs`: the user's elements' runs per repeat and what each is compared to."""

    asked = [frame.filter(pl.col("workload").is_in(list(workloads))) for frame in per_repeat]
    findings = []
    for r, (compared, table) in enumerate(zip(per_repeat, asked)):
        rows = arraygrowth_findings(table.drop("rep"), published, published_calls, tolerances)
        if elements:
            rows += engine_element_rows(compared, elements[r], pairs or {})
        findings.append(rows)
    merged = medians_over_repeats(pl.concat(asked, how="diagonal_relaxed"), ["profile", "workload", "n"],
                                  REPEATED["log_bytes"])
    merged = merged.with_columns((pl.col("log_bytes") / pl.col("n")).alias("bytes_per_op"))
    extra = [c for c in merged.columns if c not in LOG_COLUMNS]
    return merged.select(*LOG_COLUMNS, *extra), engine_frame(over_repeat_findings(findings))


def merge_engine_repeats(params, run: RunFacts, log_bytes_paths: Sequence, provenance_paths: Sequence,
                         log_bytes_path, fit_path, provenance_path, verdicts_path, published_log_bytes,
                         published_cursor_calls, tolerances_path=None, fallback_paths: Sequence = (),
                         fallback_path=None, elements_paths: Sequence = (),
                         elements_path=None) -> pl.DataFrame:
    """The arraygrowth engine lab's repeats (run_engine_repeat's files) merged: log_bytes.csv, fit.csv (the
    exponents of the medians), the verdicts (merge_repeats), fallback.csv and elements.csv (medians with
    each repeat's values) and one provenance holding each repeat's; `params`: the merge rule's
    (costlab.arraygrowth.params.EngineMergeParams)."""

    repeats = int(params.repeats)
    per_repeat = _repeats_in_order([read_csv(p) for p in log_bytes_paths], "log_bytes", repeats)
    element_frames = [read_csv(p) for p in elements_paths]
    elements = (_repeats_in_order(element_frames, "elements", repeats)
                if any(frame.height for frame in element_frames) else None)
    pairs = {d.name: d.compare_to for d in declarations({"elements": params.elements})} if elements else {}
    table, verdicts = merge_repeats(per_repeat, params.workloads, read_csv(published_log_bytes),
                                    read_csv(published_cursor_calls),
                                    read_tolerances(tolerances_path) if tolerances_path else None,
                                    elements, pairs)
    write_csv(fits(table), fit_path)
    write_csv(verdicts, verdicts_path)
    if elements_path is not None:
        write_csv(medians_over_repeats(pl.concat(elements, how="diagonal_relaxed"),
                                       ["profile", "element", "n"], REPEATED["elements"])
                  if elements else pl.DataFrame(schema=ELEMENT_COLUMNS), elements_path)
    if fallback_path is not None:
        fallback = _repeats_in_order([read_csv(p) for p in fallback_paths], "fallback", repeats)
        write_csv(medians_over_repeats(pl.concat(fallback, how="diagonal_relaxed"), ["profile", "variant"],
                                       REPEATED["fallback"]), fallback_path)
    jobs = sorted((read_json(p) for p in provenance_paths), key=lambda job: job["extra"]["rep"])
    provenance = engine_provenance(
        "arraygrowth_engine", run, min(datetime.fromisoformat(job["started_at"]) for job in jobs),
        max(datetime.fromisoformat(job["ended_at"]) for job in jobs),
        {**{k: v for k, v in jobs[0]["extra"].items() if k != "rep"}, "repeats": repeats,
         "repeat_jobs": jobs})
    # the compressors the repeat jobs resolved from their engine params (this job has none)
    provenance["compressors"] = jobs[0]["compressors"]
    write_json_atomic(provenance_path, provenance)
    write_csv(table, log_bytes_path)   # last: its presence means the job completed
    return table
