"""A test aid: a TCP proxy in front of the test server that holds each reply for `delay_s`.

It makes the server slow on purpose (every reply arrives `delay_s` later), so the closed-loop
driver's pacing and the concurrency of Get Reports can be checked against known latencies. It
forwards bytes unchanged; nothing is answered by the proxy itself.
"""
from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from typing import Iterator
from urllib.parse import urlsplit


def _pump(source: socket.socket, sink: socket.socket, delay_s: float) -> None:
    try:
        while True:
            data = source.recv(1 << 16)
            if not data:
                break
            if delay_s:
                time.sleep(delay_s)
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@contextmanager
def delayed(uri: str, delay_s: float) -> Iterator[str]:
    """A mongodb:// URI (directConnection) through a proxy that delays every reply of `uri`'s server."""
    parts = urlsplit(uri)
    target = (parts.hostname or "127.0.0.1", parts.port or 27017)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(target)
            threading.Thread(target=_pump, args=(client, server, 0.0), daemon=True).start()
            threading.Thread(target=_pump, args=(server, client, delay_s), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"mongodb://127.0.0.1:{listener.getsockname()[1]}/?directConnection=true"
    finally:
        stop.set()
        listener.close()
