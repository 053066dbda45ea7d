"""The shared bounded readers (collectors/bounded.py) every HTTP- or JSON-reading plug-in goes
through: a body under its byte cap and one deadline for all of it, over a real socket; JSON no
deeper than its limit, in words and at once; lists capped."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from collectors.base import CollectorError
from collectors.bounded import MAX_DEPTH, BoundExceeded, capped, loads, read_body


@pytest.fixture
def server() -> Iterator[tuple[int, dict[str, object]]]:
    """A raw HTTP/1.1 server on loopback: `how["mode"]` says what it answers."""
    how: dict[str, object] = {"mode": "ok"}
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve(conn: socket.socket) -> None:
        with conn:
            while not stop.is_set():
                try:
                    if not conn.recv(65536):
                        return
                except OSError:
                    return
                mode = how["mode"]
                try:
                    if mode == "ok":
                        body = b'{"data": [1, 2, 3]}'
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                    elif mode == "huge":
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (50 * 1024 * 1024))
                        block = b"x" * (1024 * 1024)
                        for _ in range(50):
                            conn.sendall(block)
                    elif mode == "trickle":
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
                        while not stop.is_set():
                            conn.sendall(b"x")
                            time.sleep(0.05)
                except OSError:
                    return

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield listener.getsockname()[1], how
    finally:
        stop.set()
        t.join(5)
        listener.close()


def _get(conn: http.client.HTTPConnection, deadline: float) -> bytes:
    conn.request("GET", "/")
    return read_body(conn.getresponse(), "GET /", deadline)


def test_a_body_read_whole_leaves_the_keep_alive_connection_ready_for_the_next(server) -> None:  # type: ignore[no-untyped-def]
    port, _ = server
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    assert _get(conn, 5) == b'{"data": [1, 2, 3]}'
    assert _get(conn, 5) == b'{"data": [1, 2, 3]}'  # ResponseNotReady before the fix
    conn.close()


def test_a_body_over_the_cap_is_refused_at_the_cap_not_held_whole(server) -> None:  # type: ignore[no-untyped-def]
    port, how = server
    how["mode"] = "huge"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/")
    with pytest.raises(BoundExceeded, match="over 1 MiB"):
        read_body(conn.getresponse(), "GET /", 30, max_bytes=1024 * 1024)
    conn.close()


def test_a_trickling_body_ends_at_its_deadline_though_every_socket_read_returns(server) -> None:  # type: ignore[no-untyped-def]
    port, how = server
    how["mode"] = "trickle"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)  # each read returns within 0.05 s
    conn.request("GET", "/")
    t0 = time.monotonic()
    with pytest.raises(BoundExceeded, match="took over 0.5 s"):
        read_body(conn.getresponse(), "GET /", 0.5)
    assert time.monotonic() - t0 < 5  # the deadline, not the million bytes (50,000 s at this pace)
    conn.close()


def test_json_nested_200000_deep_is_an_error_in_words_not_a_recursion_error() -> None:
    deep = "[" * 200_000 + "]" * 200_000
    t0 = time.monotonic()
    with pytest.raises(BoundExceeded, match=f"nested deeper than {MAX_DEPTH} levels"):
        loads(deep, "GET /cluster/resources")
    assert time.monotonic() - t0 < 5
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(ok, "x") is not None
    inside = "[" * (MAX_DEPTH + 8)
    assert loads('{"a": "' + inside + '"}', "x") == {"a": inside}  # brackets inside a string are no nesting
    with pytest.raises(CollectorError, match="not JSON"):
        loads(b"{truncated", "x")


def test_a_list_past_its_cap_keeps_its_first_items_and_says_so_once() -> None:
    said: list[str] = []
    assert capped(list(range(10)), 3, "guests", said) == [0, 1, 2]
    assert said == ["guests: 10 of them, more than 3; the first 3 are read"]
    assert capped([1], 3, "guests", said) == [1] and len(said) == 1
