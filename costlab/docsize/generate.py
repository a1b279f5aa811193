"""Orders as ready-to-insert BSON bytes: small fields from one seed, then a history array to size.

Every order has `_id, customerId, status, createdAt, total` drawn from one seed, so those fields
are identical in every collection; a `history` array of notes fills each document to exactly
`target_doc_bytes(size_kb)`: the article's mean document for its four sizes, `size_kb * 1024` for others.
Notes are slices of a text made of words from a fixed vocabulary, so
they compress like real text (a run of one character would compress to nothing and hide the cost).

Speed: documents are not built as dicts. For each (size, status, layout) there is one BSON
*template* (all lengths and field names fixed); a batch is the template broadcast to a 2-D
uint8 array, then the per-order values (ids, dates, totals, note text) are written into their
fixed byte offsets with numpy, one vectorised assignment per field or history entry for the
whole batch. `generate_bson_batches()` yields lists of `bytes`, one encoded document each:

    for batch in generate_bson_batches(64, 50_000, seed=42):
        collection.insert_many([RawBSONDocument(b) for b in batch])
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np

# One order a minute from here on (UTC); createdAt of order i is EPOCH + i minutes.
EPOCH_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
MINUTE_MS = 60_000

STATUSES = ("pending", "paid", "shipped", "delivered", "cancelled", "returned")
STATUS_WEIGHTS = (0.05, 0.10, 0.15, 0.60, 0.06, 0.04)

# Layouts: where the history sits. history_last is the published one; history_first puts the
# projected fields after the array (a question the article left open); orders_only and
# history_only are the two collections of the "move the large part out" alternative.
LAYOUTS = ("history_last", "history_first", "orders_only", "history_only")

# Words a support agent, a courier scanner and a status machine would write.
VOCABULARY = tuple("""
order orders customer customers called emailed asked about the a an of to for from with and or but
not was were is are has have had will would could should can may parcel package box item items
delivery delivered shipped shipping courier driver depot warehouse hub scan scanned label printed
address street city postcode door front back left neighbour reception locker pickup point signed
signature photo proof attempt attempted failed missed rescheduled tomorrow today yesterday morning
afternoon evening week weekend monday tuesday wednesday thursday friday saturday sunday refund
refunded partial full payment paid card declined approved pending invoice receipt discount code
coupon voucher applied price total tax shipping fee charge charged return returned returns
exchange replacement damaged broken missing wrong size colour color small large medium
fits quality complaint escalated supervisor ticket case opened closed resolved reopened note
notes agent support chat phone call callback requested confirmed cancelled cancel cancellation
status changed updated update tracking number link sent resent sms notification email reply
waiting stock backorder restocked available unavailable split shipment second first last
arrived arriving estimated date time window slot hours minutes late early delay delayed weather
traffic holiday customs cleared held inspection released carrier handed over transit route
van truck loaded unloaded sorted sorting facility out for attempt again contacted no answer
voicemail left message please thanks thank you regards customer service priority express
standard economy upgraded downgraded gift wrap message added removed quantity changed address
corrected verified fraud check passed review manual approved flagged hold released batch
""".split())

MIN_NOTE_BYTES = 40    # note lengths are drawn from [MIN_NOTE_BYTES, MAX_NOTE_BYTES]
MAX_NOTE_BYTES = 160
TEXT_POOL_BYTES = 4 * 1024 * 1024
# One history entry {at: <date>, note: <string>} costs this much besides its key and note text:
# type(1) + key NUL(1) + doc len(4) + "at" element(1+3+8) + "note" element(1+5+4+1) + doc NUL(1).
ENTRY_OVERHEAD = 30

_TYPE_DOUBLE, _TYPE_STRING, _TYPE_DOC, _TYPE_ARRAY = 0x01, 0x02, 0x03, 0x04
_TYPE_OID, _TYPE_DATE, _TYPE_INT32 = 0x07, 0x09, 0x10


# The article's mean documents (its table of collections, resources/published/docsize_collections.csv):
# its 1/4/16/64 KB orders averaged 1,037 / 4,105 / 16,403 / 65,876 BSON bytes.
ARTICLE_MEAN_DOC_BYTES = {1: 1037, 4: 4105, 16: 16403, 64: 65876}


def target_doc_bytes(size_kb: int) -> int:
    """BSON bytes of one order of this size (history_last and history_first layouts): the
    article's mean at its sizes, else size_kb * 1024."""
    return ARTICLE_MEAN_DOC_BYTES.get(int(size_kb), int(size_kb) * 1024)


# ---------------------------------------------------------------------------------------------
# The small fields: one seed, vectorised, identical whatever the document size.


@dataclass(frozen=True)
class OrderFields:
    """Column arrays for `documents` orders, in createdAt order."""
    ids: np.ndarray            # (n, 12) uint8: ObjectId bytes (creation second, fixed 5 bytes, counter)
    customer_id: np.ndarray    # (n,) int32, 1..customers, every customer the same number of orders (+-1)
    status_code: np.ndarray    # (n,) uint8 index into STATUSES
    created_at_ms: np.ndarray  # (n,) int64 ms since the Unix epoch, one a minute
    total: np.ndarray          # (n,) float64, cents

    def __len__(self) -> int:
        return len(self.created_at_ms)


def _check_positive_int(name: str, value: int, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


DEFAULT_CUSTOMERS = 50


@lru_cache(maxsize=4)
def order_fields(documents: int, seed: int = 42, customers: int | None = None) -> OrderFields:
    """The small fields of every order, from `seed` alone (never from the document size).

    customers=None means min(DEFAULT_CUSTOMERS, documents).
    """
    documents = _check_positive_int("documents", documents)
    customers = min(DEFAULT_CUSTOMERS, documents) if customers is None else customers
    customers = _check_positive_int("customers", customers)
    if customers > documents:
        raise ValueError(f"customers ({customers}) must not exceed documents ({documents})")
    rng = np.random.default_rng([seed, 0])
    index = np.arange(documents, dtype=np.int64)
    created_at_ms = EPOCH_MS + index * MINUTE_MS
    # Each customer gets documents/customers orders scattered over the whole collection:
    # "all orders of one customer" then matches about as many documents as one time window.
    customer_id = (rng.permutation(documents) % customers + 1).astype(np.int32)
    status_code = rng.choice(len(STATUSES), size=documents, p=STATUS_WEIGHTS).astype(np.uint8)
    total = np.round(rng.lognormal(mean=4.0, sigma=0.8, size=documents), 2)
    # ObjectId: 4-byte big-endian creation second, 5 bytes fixed per seed, 3-byte counter.
    ids = np.empty((documents, 12), dtype=np.uint8)
    ids[:, 0:4] = (created_at_ms // 1000).astype(">u4").view(np.uint8).reshape(-1, 4)
    ids[:, 4:9] = rng.integers(0, 256, size=5, dtype=np.uint8)
    ids[:, 9:12] = (index & 0xFFFFFF).astype(">u4").view(np.uint8).reshape(-1, 4)[:, 1:4]
    for array in (ids, customer_id, status_code, created_at_ms, total):
        array.flags.writeable = False
    return OrderFields(ids, customer_id, status_code, created_at_ms, total)


@lru_cache(maxsize=2)
def text_pool(seed: int = 42, nbytes: int = TEXT_POOL_BYTES) -> np.ndarray:
    """ASCII text of vocabulary words (Zipf-like frequencies), the source of every note."""
    rng = np.random.default_rng([seed, 1])
    weights = 1.0 / np.arange(1, len(VOCABULARY) + 1) ** 0.9
    words = np.array(VOCABULARY, dtype=object)[rng.permutation(len(VOCABULARY))]
    count = nbytes // 5 + 16
    text = " ".join(words[rng.choice(len(words), size=count, p=weights / weights.sum())]).encode("ascii")
    while len(text) < nbytes:  # never in practice: words average well over 4 bytes
        text += b" " + text
    pool = np.frombuffer(text[:nbytes], dtype=np.uint8)
    return pool


# ---------------------------------------------------------------------------------------------
# Templates: one BSON document per (size, status, layout) with fixed offsets for the values.


@dataclass(frozen=True)
class Template:
    buf: np.ndarray            # (length,) uint8, the document with zeroed value bytes
    slots: dict                # field name -> offset of its value bytes
    at_offsets: np.ndarray     # offset of each history entry's `at` int64
    note_offsets: np.ndarray   # offset of each entry's note text
    note_lengths: np.ndarray   # bytes of each entry's note text
    text_offsets: np.ndarray   # where each note starts within the order's run of pool text
    at_gaps_ms: np.ndarray     # entry k's `at` = createdAt + at_gaps_ms[k]

    @property
    def length(self) -> int:
        return len(self.buf)

    @property
    def text_length(self) -> int:
        return int(self.note_lengths.sum())

    @property
    def entries(self) -> int:
        return len(self.note_lengths)


class _Writer:
    def __init__(self) -> None:
        self.buf = bytearray(b"\0\0\0\0")
        self.slots: dict[str, int] = {}

    def element(self, type_byte: int, name: str) -> None:
        self.buf += bytes([type_byte]) + name.encode() + b"\0"

    def value_slot(self, name: str, nbytes: int) -> None:
        self.slots[name] = len(self.buf)
        self.buf += bytes(nbytes)

    def string(self, name: str, value: str) -> None:
        self.element(_TYPE_STRING, name)
        data = value.encode()
        self.buf += struct.pack("<i", len(data) + 1) + data + b"\0"


def _write_history(w: _Writer, name: str, lengths: list[int], at_offsets: list[int],
                   note_offsets: list[int]) -> None:
    """The filler: an array `name` of {at: <date>, note: <string>} entries with these note lengths (values
    zeroed; their offsets appended to at_offsets and note_offsets, for _fill)."""
    w.element(_TYPE_ARRAY, name)
    start = len(w.buf)
    w.buf += b"\0\0\0\0"
    for k, note_len in enumerate(lengths):
        w.element(_TYPE_DOC, str(k))
        w.buf += struct.pack("<i", 28 + note_len)
        w.element(_TYPE_DATE, "at")
        at_offsets.append(len(w.buf))
        w.buf += bytes(8)
        w.element(_TYPE_STRING, "note")
        w.buf += struct.pack("<i", note_len + 1)
        note_offsets.append(len(w.buf))
        w.buf += bytes(note_len) + b"\0"
        w.buf += b"\0"
    w.buf += b"\0"
    w.buf[start:start + 4] = struct.pack("<i", len(w.buf) - start)


def _history_lengths(budget: int, seed: int, size_kb: int) -> list[int]:
    """Note lengths of entries whose elements fill `budget` bytes exactly (the last one absorbs the rest)."""
    rng = np.random.default_rng([seed, size_kb, 2])
    draws = rng.integers(
        MIN_NOTE_BYTES, MAX_NOTE_BYTES + 1, size=budget // (ENTRY_OVERHEAD + MIN_NOTE_BYTES) + 2
    )
    lengths: list[int] = []
    remaining = budget
    for k, draw in enumerate(draws.tolist()):
        overhead = ENTRY_OVERHEAD + len(str(k))
        next_minimum = ENTRY_OVERHEAD + len(str(k + 1)) + MIN_NOTE_BYTES
        if remaining - (overhead + draw) >= next_minimum:
            lengths.append(draw)
            remaining -= overhead + draw
        else:
            last = remaining - overhead
            if last < 1:
                raise ValueError(f"document size {size_kb} KB leaves no room for a history note")
            lengths.append(last)
            return lengths
    raise AssertionError("history draws exhausted")  # draws are sized for the worst case


@lru_cache(maxsize=64)
def template(size_kb: int, status_code: int, layout: str = "history_last", seed: int = 42) -> Template:
    """The BSON layout of an order of this size, status and layout."""
    size_kb = _check_positive_int("size_kb", size_kb)
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; allowed: {', '.join(LAYOUTS)}")
    if not 0 <= status_code < len(STATUSES):
        raise ValueError(f"status_code {status_code} out of range 0..{len(STATUSES) - 1}")

    def build(lengths: list[int] | None) -> tuple[_Writer, list[int], list[int]]:
        w = _Writer()
        at_offsets: list[int] = []
        note_offsets: list[int] = []

        def history() -> None:
            _write_history(w, "history", lengths or [], at_offsets, note_offsets)

        def small_fields(*names: str) -> None:
            for name in names:
                if name == "customerId":
                    w.element(_TYPE_INT32, name)
                    w.value_slot(name, 4)
                elif name == "status":
                    w.string(name, STATUSES[status_code])
                elif name == "createdAt":
                    w.element(_TYPE_DATE, name)
                    w.value_slot(name, 8)
                elif name == "total":
                    w.element(_TYPE_DOUBLE, name)
                    w.value_slot(name, 8)

        w.element(_TYPE_OID, "_id")
        w.value_slot("_id", 12)
        if layout == "history_last":
            small_fields("customerId", "status", "createdAt", "total")
            history()
        elif layout == "history_first":
            small_fields("customerId", "status")
            history()
            small_fields("createdAt", "total")
        elif layout == "orders_only":
            small_fields("customerId", "status", "createdAt", "total")
        else:  # history_only: the history collection, keyed by the order's _id
            history()
        w.buf += b"\0"
        w.buf[0:4] = struct.pack("<i", len(w.buf))
        return w, at_offsets, note_offsets

    lengths: list[int] = []
    if layout != "orders_only":
        empty, _, _ = build([])
        budget = target_doc_bytes(size_kb) - len(empty.buf)
        if budget < ENTRY_OVERHEAD + 1 + 1:
            raise ValueError(f"document size {size_kb} KB is too small for the order's fields")
        lengths = _history_lengths(budget, seed, size_kb)
    writer, at_offsets, note_offsets = build(lengths)
    note_lengths = np.array(lengths, dtype=np.int64)
    gaps_rng = np.random.default_rng([seed, size_kb, 3])
    at_gaps_ms = np.cumsum(gaps_rng.integers(1, 240, size=len(lengths))) * MINUTE_MS
    buf = np.frombuffer(bytes(writer.buf), dtype=np.uint8)
    text_offsets = (
        np.concatenate([[0], np.cumsum(note_lengths)[:-1]]).astype(np.int64) if lengths else note_lengths
    )
    return Template(buf, dict(writer.slots), np.array(at_offsets, dtype=np.int64),
                    np.array(note_offsets, dtype=np.int64), note_lengths, text_offsets, at_gaps_ms)


# ---------------------------------------------------------------------------------------------
# Batches.


# A user's document (costlab.docsize.documents) whose window key is a number gets the order's position there:
# slot name -> its little-endian type (int32, int64, double).
NUMBER_SLOTS = {"position_int32": "<i4", "position_int64": "<i8", "position_double": "<f8"}


def _le_bytes(values: np.ndarray, dtype: str) -> np.ndarray:
    """(n,) values -> (n, itemsize) uint8, little-endian as BSON wants."""
    array = np.ascontiguousarray(values, dtype=dtype)
    return array.view(np.uint8).reshape(len(array), -1)


def _fill(tpl: Template, fields: OrderFields, rows_index: np.ndarray, text_u: np.ndarray,
          pool: np.ndarray) -> np.ndarray:
    """(len(rows_index), tpl.length) uint8: the template with these orders' values written in."""
    rows = np.empty((len(rows_index), tpl.length), dtype=np.uint8)
    rows[:] = tpl.buf
    slots = tpl.slots
    rows[:, slots["_id"]:slots["_id"] + 12] = fields.ids[rows_index]
    created = fields.created_at_ms[rows_index]
    if "customerId" in slots:
        rows[:, slots["customerId"] : slots["customerId"] + 4] = _le_bytes(
            fields.customer_id[rows_index], "<i4"
        )
    if "createdAt" in slots:
        rows[:, slots["createdAt"]:slots["createdAt"] + 8] = _le_bytes(created, "<i8")
    if "total" in slots:
        rows[:, slots["total"]:slots["total"] + 8] = _le_bytes(fields.total[rows_index], "<f8")
    for slot, dtype in NUMBER_SLOTS.items():   # a user's document keyed by a number: the order's position
        if slot in slots:
            width = np.dtype(dtype).itemsize
            rows[:, slots[slot]:slots[slot] + width] = _le_bytes(rows_index, dtype)
    if tpl.entries:
        # Each order's notes are one contiguous run of pool text starting at a random offset.
        text_len = tpl.text_length
        starts = (text_u[rows_index] * (len(pool) - text_len)).astype(np.int64)
        texts = np.lib.stride_tricks.sliding_window_view(pool, text_len)[starts]
        ats = (created[:, None] + tpl.at_gaps_ms[None, :]).astype("<i8").view(np.uint8)
        ats = ats.reshape(len(rows_index), tpl.entries, 8)
        for k in range(tpl.entries):
            note_at, note_len, text_at, at_at = (int(tpl.note_offsets[k]), int(tpl.note_lengths[k]),
                                                 int(tpl.text_offsets[k]), int(tpl.at_offsets[k]))
            rows[:, note_at:note_at + note_len] = texts[:, text_at:text_at + note_len]
            rows[:, at_at:at_at + 8] = ats[:, k, :]
    return rows


def default_batch_docs(size_kb: int) -> int:
    """About 8 MB of documents per batch (pymongo splits larger inserts anyway)."""
    return int(max(16, min(10_000, (8 * 1024 * 1024) // target_doc_bytes(size_kb))))


def generate_bson_batches(
    size_kb: int,
    documents: int,
    seed: int = 42,
    *,
    layout: str = "history_last",
    customers: int | None = None,
    batch_docs: int | None = None,
) -> Iterator[list[bytes]]:
    """Yield lists of encoded BSON orders (bytes), in createdAt order, `batch_docs` per list.

    Wrap each in bson.raw_bson.RawBSONDocument for insert_many. The same (size_kb, documents,
    seed, layout, customers) gives the same bytes whatever batch_docs is.
    """
    size_kb = _check_positive_int("size_kb", size_kb)
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; allowed: {', '.join(LAYOUTS)}")
    batch_docs = (
        default_batch_docs(size_kb) if batch_docs is None else _check_positive_int("batch_docs", batch_docs)
    )
    fields = order_fields(documents, seed, customers)
    pool = text_pool(seed)
    text_u = np.random.default_rng([seed, size_kb, LAYOUTS.index(layout), 4]).random(documents)
    templates = {code: template(size_kb, code, layout, seed) for code in range(len(STATUSES))}
    for begin in range(0, documents, batch_docs):
        index = np.arange(begin, min(begin + batch_docs, documents))
        batch: list[bytes | None] = [None] * len(index)
        codes = fields.status_code[index]
        for code in np.unique(codes).tolist():
            positions = np.flatnonzero(codes == code)
            rows = _fill(templates[code], fields, index[positions], text_u, pool)
            length = rows.shape[1]
            flat = rows.tobytes()
            for i, position in enumerate(positions.tolist()):
                batch[position] = flat[i * length:(i + 1) * length]
        yield batch  # type: ignore[misc]


def document_lengths(size_kb: int, documents: int, seed: int = 42, *, layout: str = "history_last",
                     customers: int | None = None) -> np.ndarray:
    """BSON length of every order, from the templates alone (no bytes generated)."""
    fields = order_fields(documents, seed, customers)
    per_status = np.array([template(size_kb, code, layout, seed).length for code in range(len(STATUSES))])
    return per_status[fields.status_code]


def template_batches(tpl: Template, documents: int, seed: int = 42, *, stream: int = 0,
                     customers: int | None = None, batch_docs: int = 1024) -> Iterator[list[bytes]]:
    """Lists of encoded documents from one template (a user's document: costlab.docsize.documents), filled
    like the orders: the orders' _id and createdAt in its slots, its filler's notes from the same text pool
    (`stream` keeps its draws apart from the orders')."""
    fields = order_fields(documents, seed, customers)
    pool = text_pool(seed)
    text_u = np.random.default_rng([seed, stream, 5]).random(documents)
    length = tpl.length
    for begin in range(0, documents, batch_docs):
        index = np.arange(begin, min(begin + batch_docs, documents))
        flat = _fill(tpl, fields, index, text_u, pool).tobytes()
        yield [flat[i * length:(i + 1) * length] for i in range(len(index))]
