"""TEST DOUBLE: a Docker Engine API on a unix socket that answers slowly, for the timeout seam tests.

Unlike tests/fake_docker.py (the SDK's models over a fake transport), the docker SDK's real HTTP
client talks to this over a real socket, so its timeouts (requests' read timeout, the SDK's
stop(timeout) arithmetic) are what is tested. Only the calls the backend makes on a container's
way in and out are answered, with the Engine API's shapes (docs.docker.com, Engine API v1.41:
ContainerCreate -> {"Id", "Warnings"}, ContainerInspect, 204 for start, stop and delete).
"""
from __future__ import annotations

import json
import re
import socketserver
import tempfile
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Iterator

API_VERSION = "1.41"
CONTAINER_ID = "c0ffee" * 10 + "c0ff"


class SlowEngine:
    def __init__(self, delays: dict[str, float] | None = None):
        self.delays = dict(delays or {})   # call name (ping, create, start, stop, remove, inspect) -> seconds
        self.calls: list[tuple[str, str]] = []   # (call, query string)
        self.name = ""


def _call_of(method: str, path: str) -> str:
    path = re.sub(r"^/v[0-9.]+", "", path)
    if path == "/_ping":
        return "ping"
    if path == "/version":
        return "version"
    if path == "/containers/create":
        return "create"
    match = re.fullmatch(r"/containers/[^/]+(/\w+)?", path)
    if match:
        action = (match.group(1) or "").lstrip("/")
        return {"json": "inspect", "": "remove" if method == "DELETE" else "?"}.get(action, action)
    return "?"


def _handler(engine: SlowEngine):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _answer(self, method: str):
            path, _, query = self.path.partition("?")
            call = _call_of(method, path)
            engine.calls.append((call, query))
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null") if length else None
            if call == "create":
                engine.name = dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("name", "")
            time.sleep(engine.delays.get(call, 0))
            if call == "ping":
                return self._send(200, b"OK", "text/plain")
            if call == "version":
                return self._send(
                    200, {"ApiVersion": API_VERSION, "Version": "20.10.24", "MinAPIVersion": "1.12"}
                )
            if call == "create":
                return self._send(201, {"Id": CONTAINER_ID, "Warnings": []})
            if call == "inspect":
                return self._send(
                    200,
                    {
                        "Id": CONTAINER_ID,
                        "Name": "/" + engine.name,
                        "Image": "sha256:" + "ab" * 32,
                        "State": {
                            "Status": "created",
                            "Running": False,
                            "ExitCode": 0,
                            "OOMKilled": False,
                            "Error": "",
                        },
                        "Config": {"Labels": {}, "Image": (body or {}).get("Image", "")},
                        "NetworkSettings": {"Ports": {}},
                    },
                )
            if call == "logs":
                return self._send(200, b"", "application/octet-stream")
            if call in ("start", "stop", "remove"):
                return self._send(204, b"", "text/plain")
            return self._send(404, {"message": f"not in this test double: {method} {path}"})

        def _send(self, code: int, payload, content_type: str = "application/json"):
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Api-Version", API_VERSION)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):   # the client gave up (its timeout): as it should
                pass

        def do_GET(self):
            self._answer("GET")

        def do_POST(self):
            self._answer("POST")

        def do_DELETE(self):
            self._answer("DELETE")

    return Handler


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):   # BaseHTTPRequestHandler wants a (host, port) client address
        request, _ = super().get_request()
        return request, ("local", 0)


@contextmanager
def slow_engine(monkeypatch, delays: dict[str, float] | None = None) -> Iterator[SlowEngine]:
    """Serve a SlowEngine on a fresh socket and point DOCKER_HOST at it for the test."""
    engine = SlowEngine(delays)
    with tempfile.TemporaryDirectory(prefix="cl-slow-") as tmp:
        socket_path = Path(tmp) / "engine.sock"
        server = _Server(str(socket_path), _handler(engine))
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        monkeypatch.setenv("DOCKER_HOST", f"unix://{socket_path}")
        try:
            yield engine
        finally:
            server.shutdown()
            server.server_close()
