"""The docker backend's per-call timeouts, through the docker SDK's real HTTP client on a real socket
(tests/slow_engine.py answers like an engine, as slowly as a test asks).

Issue #22 defect 2: the client was opened with one 5-second timeout for every call, so a container
create that took longer on a busy host failed with a raw ReadTimeoutError.
"""
from __future__ import annotations

import time

import pytest
from slow_engine import CONTAINER_ID, slow_engine

from costlab.server import ServerStartError, ServerUnavailable
from costlab.server.docker_backend import EngineFacts, _create_and_start, engine_client, stop_and_remove

SPEC = {"image": "mongo:8.0", "name": "costlab-standalone-t1", "command": ["--bind_ip_all"], "detach": True}


def test_the_ping_is_short_and_the_calls_after_it_are_not(monkeypatch):
    with slow_engine(monkeypatch, {"create": 0.6}) as engine:
        client = engine_client(timeout_s=0.3, call_timeout_s=3)   # create takes twice the ping's timeout
        try:
            container = _create_and_start(client, dict(SPEC), EngineFacts(), None)
        finally:
            client.close()
    calls = [call for call, _ in engine.calls]
    assert container.id == CONTAINER_ID and calls.count("create") == 1 and calls[-1] == "start"


def test_an_engine_that_is_slow_to_ping_is_no_engine(monkeypatch):
    with slow_engine(monkeypatch, {"ping": 1.0}):
        started = time.monotonic()
        with pytest.raises(ServerUnavailable, match="no Docker engine answers"):
            engine_client(timeout_s=0.2, call_timeout_s=30)
        assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("call", ["create", "start"])
def test_a_call_that_times_out_names_the_call_and_the_container(monkeypatch, call):
    with slow_engine(monkeypatch, {call: 1.0}) as engine:
        client = engine_client(timeout_s=2, call_timeout_s=0.3)
        try:
            with pytest.raises(ServerStartError) as err:
                _create_and_start(client, dict(SPEC), EngineFacts(), None)
        finally:
            client.close()
    message = str(err.value)
    assert f"did not answer `{call}` of container costlab-standalone-t1 within 0.3 s" in message
    assert "Traceback" not in message and "ReadTimeout" not in message
    if call == "start":   # a container that exists is removed before the error goes up
        assert [c for c, _ in engine.calls][-1] == "remove"


def test_a_stop_waits_at_least_its_grace_period(monkeypatch):
    """The engine answers stop only once mongod exited: up to the grace period, longer than one call's
    timeout."""
    with slow_engine(monkeypatch, {"stop": 0.7}) as engine:
        client = engine_client(timeout_s=2, call_timeout_s=0.3)
        try:
            container = client.containers.get("x")
            stop_and_remove(client, container, "costlab-standalone-t1", grace_s=1)
        finally:
            client.close()
    calls = dict((c, q) for c, q in engine.calls)
    assert calls["stop"] == "t=1" and "remove" in calls
