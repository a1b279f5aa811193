"""Start errors show mongod's error and fatal lines with context, not only the last 20 lines.

Log shapes: tests/mongod_logs.py (mongod 8.0 structured log; sources cited there).
"""
from __future__ import annotations

import os
import sys

import pytest
from mongod_logs import DBPATH_IN_USE, DBPATH_IN_USE_ERROR, PERMISSION_DENIED

from costlab.server import ServerStartError, start_server
from costlab.server.startlog import cause_line, start_log_excerpt


def test_cause_is_further_up_than_the_last_20_lines():
    # the premise: mongod writes more than 20 shutdown lines after the error
    assert "DBPathInUse" not in "\n".join(DBPATH_IN_USE.splitlines()[-20:])
    excerpt = start_log_excerpt(DBPATH_IN_USE)
    assert (
        excerpt.splitlines()[0] == f"cause: DBException in initAndListen, terminating: {DBPATH_IN_USE_ERROR}"
    )
    assert '"s":"E"' in excerpt and '"id":20557' in excerpt
    assert "Options set by command line" in excerpt          # context before the error line
    assert '"exitCode":100' in excerpt                       # and the end of the log


def test_wiredtiger_permission_denied_names_the_file_and_the_error():
    cause = cause_line(PERMISSION_DENIED)
    assert cause == (
        "WiredTiger error message: __posix_open_file:815:/data/db/WiredTiger.wt: handle-open: open: "
        "Permission denied"
    )
    excerpt = start_log_excerpt(PERMISSION_DENIED)
    assert '"s":"F"' in excerpt and "Terminating." in excerpt and "Opening WiredTiger" in excerpt


def test_plain_text_lines_from_outside_the_logger_are_kept():
    log = "\n".join(
        [
            "WARNING: MongoDB 5.0+ requires a CPU with AVX support, and your current system does not "
            "appear to have that!"
        ]
        + [f"noise {i}" for i in range(40)]
    )
    assert "requires a CPU with AVX" in start_log_excerpt(log)


@pytest.fixture
def shim_config(mongod_shim, monkeypatch):
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    return {"backend": "binary", "mongod": mongod_shim, "startup_timeout_s": 30}


def test_binary_backend_start_error_carries_the_cause(shim_config, tmp_path, monkeypatch):
    log = tmp_path / "mongod-8.0-dbpath-in-use.log"
    log.write_text(DBPATH_IN_USE)
    monkeypatch.setenv("COSTLAB_SHIM_FAIL_LOG", str(log))
    with pytest.raises(ServerStartError) as err:
        with start_server(shim_config, "standalone", tmp_path / "data"):
            pass
    assert "DBPathInUse: Unable to lock the lock file" in str(err.value)
