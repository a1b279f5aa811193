"""Document generation (docsize): BSON bytes ready to send, per core, and the speed-up over dicts.

Target (issue 8): the 50,000 x 64 KB collection (3.3 GB of BSON) built at >= 100 MB/s per core,
and >= 3x building the same documents as nested Python dicts one by one (bson.encode each).
Measured on a subset (default 5,000 documents = 328 MB; the generator's cost is linear in the
documents: one template fill per batch); the dict baseline on 500 documents. The baseline builds
the very same documents (checked byte for byte on its first documents).

    python benchmarks/bench_docsize_generation.py [documents] [size_kb]
"""
from __future__ import annotations

import common

common.one_core()

import sys  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

import bson  # noqa: E402
import numpy as np  # noqa: E402
from bson import ObjectId  # noqa: E402

from costlab.docsize import generate as gen  # noqa: E402

PUBLISHED_DOCUMENTS = 50_000
BASELINE_DOCUMENTS = 500


def generated_bytes(size_kb: int, documents: int) -> int:
    total = 0
    for batch in gen.generate_bson_batches(size_kb, documents, seed=42):
        total += sum(len(doc) for doc in batch)
    return total


def dict_documents(size_kb: int, documents: int, count: int, seed: int = 42):
    """The first `count` orders as nested dicts, one at a time, each bson.encode'd (the baseline)."""
    fields = gen.order_fields(documents, seed)
    pool = gen.text_pool(seed).tobytes()
    text_u = np.random.default_rng([seed, size_kb, gen.LAYOUTS.index("history_last"), 4]).random(documents)
    encoded = []
    for i in range(count):
        tpl = gen.template(size_kb, int(fields.status_code[i]), "history_last", seed)
        created = int(fields.created_at_ms[i])
        start = int(text_u[i] * (len(pool) - tpl.text_length))
        history = []
        for k in range(tpl.entries):
            text_at = start + int(tpl.text_offsets[k])
            history.append({
                "at": datetime.fromtimestamp((created + int(tpl.at_gaps_ms[k])) / 1000, tz=timezone.utc),
                "note": pool[text_at:text_at + int(tpl.note_lengths[k])].decode("ascii"),
            })
        doc = {
            "_id": ObjectId(fields.ids[i].tobytes()),
            "customerId": int(fields.customer_id[i]),
            "status": gen.STATUSES[fields.status_code[i]],
            "createdAt": datetime.fromtimestamp(created / 1000, tz=timezone.utc),
            "total": float(fields.total[i]),
            "history": history,
        }
        encoded.append(bson.encode(doc))
    return encoded


def main(documents: int = 5_000, size_kb: int = 64) -> None:
    common.header(f"docsize document generation, one core ({common.machine()})")
    # Templates and the text pool are cached per process: build them once before timing.
    next(gen.generate_bson_batches(size_kb, documents, seed=42, batch_docs=16))
    timing = common.best_of_cpu(lambda: generated_bytes(size_kb, documents), repeat=3)
    nbytes = timing.result
    rate = nbytes / timing.cpu_s / 1e6

    base = common.best_of_cpu(lambda: dict_documents(size_kb, documents, BASELINE_DOCUMENTS), repeat=2)
    reference = next(gen.generate_bson_batches(size_kb, documents, seed=42, batch_docs=BASELINE_DOCUMENTS))
    same = sum(a == b for a, b in zip(base.result, reference))
    print(f"  baseline builds the same documents: {same} of {BASELINE_DOCUMENTS} byte-identical")
    base_rate = sum(len(d) for d in base.result) / base.cpu_s / 1e6
    full_s = PUBLISHED_DOCUMENTS * gen.target_doc_bytes(size_kb) / (rate * 1e6)

    cmd = "python benchmarks/bench_docsize_generation.py"
    common.result(f"generate_bson_batches {size_kb} KB (MB/s per core)", rate, "MB/s", 100,
                  note=f"{documents:,} docs, {nbytes / 1e6:,.0f} MB, {timing.cpu_s:.2f} s CPU, "
                       f"{timing.wall_s:.2f} s wall", command=cmd)
    common.result("dicts one by one + bson.encode (MB/s per core)", base_rate, "MB/s", None,
                  note=f"{BASELINE_DOCUMENTS} docs, {base.cpu_s:.2f} s CPU", command=cmd)
    common.result("speed-up over dicts", rate / base_rate, "x", 3, command=cmd)
    common.result(
        f"projected: {PUBLISHED_DOCUMENTS:,} x {size_kb} KB collection (s, one core)",
        full_s,
        "s",
        None,
        note=f"{PUBLISHED_DOCUMENTS * gen.target_doc_bytes(size_kb) / 1e9:.2f} GB",
        command=cmd,
    )


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*args)
