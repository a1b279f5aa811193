"""mongod 8.0 start-up failure logs, one JSON document per line, for start-error tests.

Shapes: mongod's structured log (docs "Log Messages": t, s, c, id, ctx, msg, attr); the start-up
error is LOGV2_ERROR 20557 "DBException in initAndListen, terminating" with attr.error
(src/mongo/db/mongod_main.cpp, initAndListen); the shutdown lines that follow are shutdownTask's
(same file: 4784900 "Stepping down the ReplicationCoordinator for shutdown", 4784901 "Shutting
down the MirrorMaestro", 20562, 4784905, ..., 20565 "Now exiting", 23138 "Shutting down" with
the exit code). WiredTiger errors are id 22435 "WiredTiger error message" with a structured
attr.message (mongod 7+), followed by fassert 28595 "Terminating." and 23091 "Fatal assertion".
"""
import json

_T = {"$date": "2026-12-01T16:00:00.000+00:00"}


def _line(s, c, id_, msg, attr=None, ctx="initandlisten"):
    doc = {"t": _T, "s": s, "c": c, "id": id_, "ctx": ctx, "msg": msg}
    if attr is not None:
        doc["attr"] = attr
    return json.dumps(doc, separators=(",", ":"))


STARTUP = [
    _line("I", "CONTROL", 23285, "Automatically disabling TLS 1.0, to force-enable TLS 1.0 specify "
          "--sslDisabledProtocols 'none'", ctx="main"),
    _line("I", "NETWORK", 4915701, "Initialized wire specification", {"spec": {"incomingExternalClient":
          {"minWireVersion": 0, "maxWireVersion": 25}}}, ctx="main"),
    _line("I", "CONTROL", 4615611, "MongoDB starting", {"pid": 1, "port": 27017, "dbPath": "/data/db",
          "architecture": "64-bit", "host": "costlab-standalone-ab12cd34"}),
    _line("I", "CONTROL", 23403, "Build Info", {"buildInfo": {"version": "8.0.0"}}),
    _line("I", "CONTROL", 51765, "Operating System", {"os": {"name": "Ubuntu", "version": "24.04"}}),
    _line("I", "CONTROL", 21951, "Options set by command line", {"options": {"net": {"bindIpAll": True}}}),
]

SHUTDOWN = [
    _line(
        "I",
        "REPL",
        4784900,
        "Stepping down the ReplicationCoordinator for shutdown",
        {"waitTimeMillis": 15000},
    ),
    _line("I", "REPL", 4794602, "Attempting to enter quiesce mode"),
    _line("I", "-", 6371601, "Shutting down the FLE Crud thread pool"),
    _line("I", "COMMAND", 4784901, "Shutting down the MirrorMaestro"),
    _line("I", "SHARDING", 4784902, "Shutting down the WaitForMajorityService"),
    _line("I", "NETWORK", 20562, "Shutdown: going to close listening sockets"),
    _line("I", "NETWORK", 4784905, "Shutting down the global connection pool"),
    _line("I", "CONTROL", 4784906, "Shutting down the FlowControlTicketholder"),
    _line("I", "-", 20520, "Stopping further Flow Control ticket acquisitions."),
    _line("I", "NETWORK", 4784918, "Shutting down the ReplicaSetMonitor"),
    _line("I", "SHARDING", 4784921, "Shutting down the MigrationUtilExecutor"),
    _line("I", "ASIO", 22582, "Killing all outstanding egress activity."),
    _line("I", "COMMAND", 4784923, "Shutting down the ServiceEntryPoint"),
    _line("I", "CONTROL", 4784928, "Shutting down the TTL monitor"),
    _line("I", "CONTROL", 6278511, "Shutting down the Change Stream Expired Pre-images Remover"),
    _line("I", "CONTROL", 4784929, "Acquiring the global lock for shutdown"),
    _line("I", "-", 4784931, "Dropping the scope cache for shutdown"),
    _line("I", "FTDC", 20626, "Shutting down full-time diagnostic data capture"),
    _line("I", "CONTROL", 20565, "Now exiting"),
    _line(
        "I", "CONTROL", 8423404, "mongod shutdown complete", {"Summary of time elapsed": {"Statistics": {}}}
    ),
    _line("I", "CONTROL", 23138, "Shutting down", {"exitCode": 100}),
]

DBPATH_IN_USE_ERROR = (
    "DBPathInUse: Unable to lock the lock file: /data/db/mongod.lock (Resource temporarily "
    "unavailable). Another mongod instance is already running on the /data/db directory"
)
DBPATH_IN_USE = "\n".join([
    *STARTUP,
    _line("E", "CONTROL", 20557, "DBException in initAndListen, terminating", {"error": DBPATH_IN_USE_ERROR}),
    *SHUTDOWN,
]) + "\n"

PERMISSION_DENIED = (
    "\n".join(
        [
            *STARTUP,
            _line(
                "I",
                "STORAGE",
                22315,
                "Opening WiredTiger",
                {"config": "create,cache_size=7480M,session_max=33000"},
            ),
            _line(
                "E",
                "WT",
                22435,
                "WiredTiger error message",
                {
                    "error": 13,
                    "message": {
                        "ts_sec": 1796140800,
                        "thread": "1:0x7f3c2a1b2c80",
                        "session_name": "wiredtiger_open",
                        "category": "WT_VERB_DEFAULT",
                        "category_id": 12,
                        "verbose_level": "ERROR",
                        "verbose_level_id": -3,
                        "msg": "__posix_open_file:815:/data/db/WiredTiger.wt: handle-open: open",
                        "error_str": "Permission denied",
                        "error_code": 13,
                    },
                },
            ),
            _line(
                "W",
                "STORAGE",
                22347,
                "Failed to start up WiredTiger under any compatibility version. This may be due "
                "to an unsupported upgrade or downgrade.",
            ),
            _line("F", "STORAGE", 28595, "Terminating.", {"reason": "13: Permission denied"}),
            _line(
                "F",
                "ASSERT",
                23091,
                "Fatal assertion",
                {
                    "msgid": 28595,
                    "file": "src/mongo/db/storage/wiredtiger/wiredtiger_kv_engine.cpp",
                    "line": 708,
                },
            ),
            _line("F", "ASSERT", 23092, "\n\n***aborting after fassert() failure\n\n"),
        ]
    )
    + "\n"
)
