"""The engine lab: WiredTiger driven the way mongod's storage layer drives it, no server.

mongod turns each write into a few WiredTiger calls (a record-store insert or update, index
inserts, an oplog insert on a replica set) inside one transaction, on tables whose settings
(key format, block compressor, whether the table is logged) it chooses. This package makes
the same calls on the same kinds of tables and reads WiredTiger's own statistics, so the
storage findings of the studies can be measured where no mongod runs.

Modules: `wt` (the wiredtiger module and what it has built in), `connection` (open like
mongod, reopen for a cold cache), `stats` (named statistics snapshots and deltas),
`records` (record store with mongod's modify rule), `keys` (index key bytes), `index`
(index table, range scan, FETCH / COVERED), `oplog` (oplog entries), `deployment`
(standalone / replica-set logging rules and one transaction per write), `runs` (scratch homes and
settings every study's engine job shares), `extensions` (mongod's snappy and zstd), `provenance`
(`server_kind: engine`), `verdicts` (published vs engine lab), `bsonbytes` (growing an array's BSON).
What it does not model: the query planner, mongod's other tables (catalog, sizeStorer,
config.transactions), concurrency, checkpoints' timing and the history store's timestamps.
"""
