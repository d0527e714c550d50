"""A TCP server on 127.0.0.1 that misbehaves below HTTP: it reads a request and then resets the connection, or
sends a reply whose body stops short of its Content-Length. aiohttp's own server cannot be made to do either."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable

Behaviour = Callable[[socket.socket], None]


def read_request(conn: socket.socket) -> None:
    """Read the request's head and its body (up to its Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


def reset(conn: socket.socket) -> None:
    """Read the request, then reset the connection (RST, not FIN) before any reply."""
    read_request(conn)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def cut_body(body: bytes, announced: int, content_type: str = "application/json") -> Behaviour:
    """A 200 announcing `announced` bytes of body, of which only `body` is sent before the connection closes."""
    def behave(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type.encode() +
                     b"\r\nContent-Length: " + str(announced).encode() + b"\r\n\r\n" + body)
    return behave


class RawServer:
    """Accepts connections in a thread and treats each with `behaviour`, then closes it."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._serve, name="raw-server", daemon=True)

    def url(self, path: str = "") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn, contextlib.suppress(OSError):   # the client gave up: serve the next one
                self.behaviour(conn)

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        # close() alone leaves the thread blocked in accept(); shutdown wakes it, and it returns at once.
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        self._sock.close()
        self._thread.join()
