"""What a one-node replica set's primary does per write besides the write itself, by mongod's source.

Each rule below is read in mongod's (mongodb/mongo) and WiredTiger's source; the functions named are
the reason for each storage call the engine lab makes (costlab.engine.deployment makes them):

* **Commit timestamps.** Every write on a replica set commits at its oplog entry's timestamp
  (`OpObserverImpl` → `repl::logOp` reserves the optime; the WriteUnitOfWork commits with it), a
  mongod `Timestamp(secs, inc)`, WiredTiger's uint64 `secs << 32 | inc`. The lab gives the writes a
  modelled rate (`writes_per_second`): write i commits in second `i // rate`, increment `i % rate + 1`.
* **Stable and oldest timestamps.** The stable timestamp is the majority commit point; on a
  one-node set it follows the newest durable write (`ReplicationCoordinatorImpl::_setStableTimestamp
  ForStorage` → `WiredTigerKVEngine::setStableTimestamp`), so here it is the newest commit at each
  journal flush. With each stable move `WiredTigerKVEngine::setOldestTimestampFromStable` sets the
  oldest timestamp `minSnapshotHistoryWindowInSeconds` (300 s, `snapshot_window_options.idl`) behind
  it (`_calculateHistoryLagFromStableTimestamp`, which leaves it where it is until stable is that far
  from zero). WiredTiger drops a cell's start timestamp and transaction id only once they are visible
  to every reader (before the oldest timestamp) as the page is written
  (`__wti_rec_time_window_clear_obsolete`, src/reconcile/reconcile_inline.h); until then the time
  window is stored with the cell (src/include/cell_inline.h, `__wt_cell_pack_value`). A
  `history_window_seconds` of None pins the oldest timestamp at the first write (every cell keeps its
  window); 0 keeps it at stable (none does).
* **Checkpoints at stable.** mongod checkpoints every `storage.syncPeriodSecs` (60 s;
  `Checkpointer::run` → `WiredTigerKVEngine::checkpoint`), a stable checkpoint: WiredTiger's
  `checkpoint()` with `use_timestamp=true`, the default, writes the data as of the stable timestamp.
* **The journal flush and the truncate point.** A write whose write concern journals waits for a
  flush (`write_concern.cpp` `waitForWriteConcern` → `StorageEngine::waitForJournalFlush` →
  `JournalFlusher::waitForJournalFlush`). The replica set's default write concern is `{w: "majority"}`
  (MongoDB 5.0+), which journals (`writeConcernMajorityJournalDefault`), once per command, after it
  ran (`ServiceEntryPointMongod`'s `Hooks::waitForWriteConcern`): each sequential single write waits
  for its own flush, a bulk update command of 250 statements for one; with `{w: 1}` the
  JournalFlusher flushes every `journalCommitInterval`
  (100 ms) instead. Each flush first asks the journal listener for a token
  (`ReplicationCoordinatorExternalStateImpl::getToken` →
  `ReplicationConsistencyMarkersImpl::refreshOplogTruncateAfterPointIfPrimary`), which overwrites the
  one document of `local.replset.oplogTruncateAfterPoint` with the all-durable timestamp
  (`_setOplogTruncateAfterPoint` → `_upsertOplogTruncateAfterPointDocument`: `updateRecord` of the
  whole ~71-byte document, untimestamped, its own WriteUnitOfWork) when it moved since the last flush.
  That table is in `local`, so it is logged (`WiredTigerUtil::useTableLogging`): one more log record
  per flush, padded to WiredTiger's 128-byte log alignment (`WTI_LOG_ALIGN`, src/log).
* **The session record.** A retryable write also upserts its session's `config.transactions`
  document in the write's own WriteUnitOfWork (`TransactionParticipant::Participant::
  onWriteOpCompletedOnPrimary` → `updateSessionEntry`: `{_id: lsid, txnNum, lastWriteOpTime,
  lastWriteDate}`, `session_txn_record.idl`): an insert the first time (record and `_id` index), then
  `updateRecord` of the record (a replicated collection, so not logged, timestamped with the write).
"""
from __future__ import annotations

from dataclasses import dataclass

WRITE_CONCERNS = ("majority", "w1")
# How the primary overwrites the truncate point at each journal flush, by mongod version (each read in
# ReplicationConsistencyMarkersImpl::_upsertOplogTruncateAfterPointDocument):
# * "record" (8.x, the articles'): `RecordStore::updateRecord` of the whole 71-byte document, which the
#   WiredTiger record store writes with its overwrite cursor's insert(): one cursor insert call a flush;
# * "in_place" (6.0, the PyPI wheel's mongod 6.0.5): `StorageInterface::upsertById` with
#   {$set: {oplogTruncateAfterPoint: ts}}, a same-size in-place update that the update stage writes as
#   damages (`WiredTigerRecordStore::doUpdateWithDamages` -> WT_CURSOR::modify of the 8 bytes of the
#   Timestamp): one cursor modify call a flush. Measured on mongod 6.0.5, one-node replica set, 1,000
#   inserts: 4.00 insert and 1.00 modify calls per insert under {w: majority}, 0.00 modify under {w: 1}.
TRUNCATE_POINT_WRITES = ("record", "in_place")
# the rule of each mongod version the lab can follow (engine.replica_set.mongod)
MONGOD_RULES = {"8.x": {"truncate_point_write": "record"}, "6.0": {"truncate_point_write": "in_place"}}
TRUNCATE_POINT_NS = "local.replset.oplogTruncateAfterPoint"
SESSIONS_NS = "config.transactions"


@dataclass(frozen=True)
class ReplicaSetSettings:
    """The modelled replica set. Defaults are mongod's, but for the rate, which is each study's."""
    writes_per_second: int = 600
    history_window_seconds: int | None = 300   # minSnapshotHistoryWindowInSeconds; None: oldest pinned
    write_concern: str = "majority"
    journal_commit_interval_ms: int = 100      # storage.journal.commitIntervalMs: the JournalFlusher's period
    checkpoint_seconds: int | None = 60        # storage.syncPeriodSecs; None: the caller checkpoints
    side_tables: bool = True                   # the oplog, the truncate point and the session record
    first_second: int = 1_784_106_933          # the first write's time (secs of its Timestamp)
    # statements a write command carries: mongod waits for the write concern once per command, after it
    # ran (ServiceEntryPointMongod's Hooks::waitForWriteConcern), so an update command of 250 statements
    # waits for one journal flush (arraygrowth sends one write a command)
    writes_per_command: int = 1
    # the window counted in writes instead of seconds: a run scaled down from the article's keeps the
    # window's share of the article's writes (costlab.appversions.engine.scaled_history_window)
    history_window_writes: int | None = None
    truncate_point_write: str = "record"      # TRUNCATE_POINT_WRITES: 8.x's whole-record overwrite

    def __post_init__(self) -> None:
        def positive_int(name: str, value: object, allow_none: bool = False, minimum: int = 1) -> None:
            if value is None and allow_none:
                return
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"replica set {name} must be an integer >= {minimum}"
                                 f"{' or null' if allow_none else ''}, got {value!r}")
        positive_int("writes_per_second", self.writes_per_second)
        positive_int("history_window_seconds", self.history_window_seconds, allow_none=True, minimum=0)
        positive_int("journal_commit_interval_ms", self.journal_commit_interval_ms)
        positive_int("checkpoint_seconds", self.checkpoint_seconds, allow_none=True)
        positive_int("writes_per_command", self.writes_per_command)
        positive_int("history_window_writes", self.history_window_writes, allow_none=True, minimum=0)
        if self.truncate_point_write not in TRUNCATE_POINT_WRITES:
            raise ValueError(f"replica set truncate_point_write {self.truncate_point_write!r}; "
                             f"allowed: {', '.join(TRUNCATE_POINT_WRITES)}")
        if self.write_concern not in WRITE_CONCERNS:
            raise ValueError(f"replica set write_concern {self.write_concern!r}; "
                             f"allowed: {', '.join(WRITE_CONCERNS)}")

    @property
    def writes_per_flush(self) -> int:
        """Writes per journal flush: a command's under {w: majority}; under {w: 1} the writes of one
        journalCommitInterval at the modelled rate (at least 1)."""
        if self.write_concern == "majority":
            return self.writes_per_command
        return max(1, self.writes_per_second * self.journal_commit_interval_ms // 1000)

    @property
    def window_writes(self) -> int | None:
        """The history window in writes: history_window_writes when set, else the seconds' writes at the
        modelled rate; None when the oldest timestamp is pinned (every window kept)."""
        if self.history_window_writes is not None:
            return self.history_window_writes
        if self.history_window_seconds is None:
            return None
        return self.history_window_seconds * self.writes_per_second

    @property
    def writes_per_checkpoint(self) -> int | None:
        return None if self.checkpoint_seconds is None else self.writes_per_second * self.checkpoint_seconds

    def describe(self) -> dict:
        return {"writes_per_second": self.writes_per_second,
                "history_window_seconds": self.history_window_seconds,
                "history_window_writes": self.history_window_writes,
                "write_concern": self.write_concern, "writes_per_command": self.writes_per_command,
                "writes_per_flush": self.writes_per_flush,
                "checkpoint_seconds": self.checkpoint_seconds, "side_tables": self.side_tables,
                "truncate_point_write": self.truncate_point_write}


def timestamp_of(write: int, settings: ReplicaSetSettings) -> int:
    """The commit timestamp of the write numbered `write` (0-based), as WiredTiger's uint64."""
    seconds, inc = divmod(write, settings.writes_per_second)
    return ((settings.first_second + seconds) << 32) | (inc + 1)


def write_of(ts: int, settings: ReplicaSetSettings) -> int:
    """The number (0-based) of the write committed at `ts`: timestamp_of's inverse."""
    return ((ts >> 32) - settings.first_second) * settings.writes_per_second + (ts & 0xFFFFFFFF) - 1


def oldest_for(stable: int, settings: ReplicaSetSettings) -> int | None:
    """mongod's _calculateHistoryLagFromStableTimestamp: stable minus the window (same increment), or
    None (do not move) while stable is within the window of zero. A pinned window (None) holds the
    oldest timestamp just before the first write: set, so that WiredTiger keeps every window (with no
    oldest timestamp set it would treat all timestamps as visible once the connection closes).
    `history_window_writes` (when set) counts the window in writes: oldest is the commit that many writes
    before stable's."""
    if settings.history_window_writes is not None:
        behind = write_of(stable, settings) - settings.history_window_writes
        return None if behind < 0 else timestamp_of(behind, settings)
    if settings.history_window_seconds is None:
        return settings.first_second << 32
    seconds, inc = stable >> 32, stable & 0xFFFFFFFF
    if seconds < settings.history_window_seconds:
        return None
    return ((seconds - settings.history_window_seconds) << 32) | inc


def replica_set_settings(engine_config: dict, writes_per_second: int, **overrides) -> ReplicaSetSettings:
    """The settings `engine.replica_set` gives (mongod's defaults where a key is absent) at a study's rate."""
    section = engine_config.get("replica_set") or {}
    keys = ("write_concern", "journal_commit_interval_ms", "history_window_seconds", "checkpoint_seconds")
    values = {key: section[key] for key in keys if key in section}
    return ReplicaSetSettings(writes_per_second=writes_per_second,
                              **(mongod_rules(section.get("mongod", "8.x")) | values | overrides))


def mongod_rules(version: str) -> dict:
    """The ReplicaSetSettings fields that follow mongod `version` ("8.x", the articles'; "6.0")."""
    if version not in MONGOD_RULES:
        raise ValueError(f"engine.replica_set.mongod {version!r}; allowed: {', '.join(MONGOD_RULES)}")
    return dict(MONGOD_RULES[version])


__all__ = ["replica_set_settings", "mongod_rules", "MONGOD_RULES", "TRUNCATE_POINT_WRITES",
           "ReplicaSetSettings", "WRITE_CONCERNS",
           "TRUNCATE_POINT_NS", "SESSIONS_NS", "timestamp_of", "write_of", "oldest_for"]
