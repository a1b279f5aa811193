"""The binary backend stops mongod after a checkpoint, with a grace period that fits the data directory.

mongod shuts down cleanly on SIGTERM, ending with a WiredTiger checkpoint (mongod docs, "fsync":
WiredTiger makes data durable with checkpoints); a SIGKILL before that finishes is an unclean
shutdown. Runs the real process lifecycle on the real mongod (the bundled 6.0.5).
"""
from __future__ import annotations

import pytest
from pymongo import MongoClient, monitoring

from costlab.server import binary, start_server
from costlab.server.shutdown import stop_grace_seconds


class _Commands(monitoring.CommandListener):
    def __init__(self, timeline):
        self.timeline = timeline

    def started(self, event):
        self.timeline.append(event.command_name)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


@pytest.fixture
def shim_config(mongod_binary):
    return {"backend": "binary", "mongod": mongod_binary, "startup_timeout_s": 60}


def test_binary_backend_checkpoints_then_stops_with_a_grace_that_fits(shim_config, tmp_path, monkeypatch):
    timeline: list = []
    listener = _Commands(timeline)
    monkeypatch.setattr(
        binary, "MongoClient", lambda *a, **kw: MongoClient(*a, event_listeners=[listener], **kw)
    )
    real_stop = binary.stop_process

    def recording_stop(proc, grace_s=binary.STOP_GRACE_S):
        timeline.append(("stop", grace_s))
        real_stop(proc, grace_s)

    monkeypatch.setattr(binary, "stop_process", recording_stop)
    data = tmp_path / "data"
    data.mkdir()
    with open(data / "collection-7-1.wt", "wb") as fh:   # 2000 MiB as sizes go, sparse on disk
        fh.truncate(2000 * 1024 ** 2)
    with start_server(shim_config, "standalone", data) as server:
        server.client.costlab_t.c.insert_one({"x": 1})
    stops = [entry for entry in timeline if isinstance(entry, tuple)]
    # 30 s + (2000 MiB + mongod's own files) at 50 MiB/s; the old code waited a fixed 30 s. mongod 6.0's own
    # files are its journal (WiredTigerLog, 100 MiB each, up to 3 preallocated) and a few small tables:
    # under 400 MiB, so 30 + 40 + (1..8) s
    assert len(stops) == 1 and 30 + 41 <= stops[0][1] <= 30 + 48
    assert stop_grace_seconds(2000 * 1024 ** 2 + 1) == 30 + 41
    assert "fsync" in timeline and timeline.index("fsync") < timeline.index(stops[0])
