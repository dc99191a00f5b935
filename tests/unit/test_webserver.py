"""offctl's one HTTP stack (offctl.adapters.webserver) with an application of the test's own: what only such an
application shows. Connections busy with a request are never shed, and one beyond the bound is then refused 503; a
declared body over the bound is 413 before the application reads it; a stalled body ends at its deadline. Both faces
against hostile clients: tests/faults/test_http_hostile.py."""

from __future__ import annotations

import asyncio
import socket
import threading
from dataclasses import replace

import pytest

from offctl.adapters.webserver import CHUNK, LIMITS, http_server, listen, send_body
from tests.support import hostile

BIG = b"x" * (256 * CHUNK + 5)  # 16 MiB: more than the socket buffers and asyncio's hold


@pytest.fixture
def gated():
    """A server whose application answers a request only once the test opens its gate; bound of two connections."""
    gate = threading.Event()
    bodies: list[bytes] = []

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        if scope["method"] == "POST":  # the body, whole, as an application reads it
            body, message = b"", {"more_body": True}
            while message.get("more_body"):
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                body += message.get("body", b"")
            bodies.append(body)
        while scope["path"] == "/slow" and not gate.is_set():
            await asyncio.sleep(0.01)
        await send_body(send, 200, [], BIG if scope["path"] == "/big" else b"ok")

    limits = replace(LIMITS, max_connections=2, body_s=1.0, write_s=1.0)
    server = http_server(app, listen("127.0.0.1", 0, limits), ("GET", "POST"), "test", limits).start("test-http")
    yield server, gate, bodies
    gate.set()
    server.stop()


def _busy(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=20)
    s.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
    return s


def test_busy_connections_are_never_shed_and_one_beyond_is_503(gated):
    server, gate, _ = gated
    busy = [_busy(server.port) for _ in range(2)]
    try:
        while server.connections < 2:  # both accepted (the test's own limit only ends a hang)
            threading.Event().wait(0.01)
        answer = hostile.exchange(server.port, b"GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
        assert hostile.status_of(answer) == 503 and b"retry-after: 1" in answer.lower()
        assert server.protocol.refused == 1 and server.protocol.shed == 0
        gate.set()
        for s in busy:  # served in full
            assert hostile.status_of(s.recv(65536)) == 200
    finally:
        for s in busy:
            s.close()


def test_a_declared_body_over_the_bound_is_413_unread(gated):
    server, _, bodies = gated
    answer = hostile.exchange(
        server.port, b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\nabc" % (LIMITS.max_body_bytes + 1)
    )
    assert hostile.status_of(answer) == 413
    assert bodies == []  # the application never got it


def test_a_stalled_body_ends_at_its_deadline(gated):
    server, _, bodies = gated
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as s:
        s.sendall(b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
        assert s.recv(65536) == b""  # closed by the server at body_s (1 s), not the client's 20 s
    assert bodies == []  # the application never got a whole body


def test_a_method_the_face_does_not_answer_is_405_with_allow(gated):
    server, _, _ = gated
    answer = hostile.exchange(server.port, b"DELETE /x HTTP/1.1\r\nHost: x\r\n\r\n")
    assert hostile.status_of(answer) == 405 and b"allow: GET, POST" in answer.replace(b"Allow", b"allow")
    assert b"connection: close" in answer.lower()


def test_an_address_that_cannot_be_had_is_a_usage_error():
    from offctl.errors import UsageError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(UsageError, match=r"--listen 127\.0\.0\.1:\d+: cannot listen there"):
            listen("127.0.0.1", taken.getsockname()[1])


def test_clients_that_never_read_the_answer_are_cut_off_at_the_write_deadline(gated):
    """Two clients ask for a large answer and never read it: they hold both slots (busy, never shed) until the write
    deadline (write_s, 1 s here) aborts them; then a request is served again."""
    server, _, _ = gated
    readers = []
    try:
        for _ in range(2):
            s = socket.socket()
            s.settimeout(20)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connecting: the window stays small
            s.connect(("127.0.0.1", server.port))
            s.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            readers.append(s)
        while server.connections < 2:
            threading.Event().wait(0.01)
        while server.connections == 2:  # the test's own limit (pytest's) only ends a hang: aborted at write_s
            threading.Event().wait(0.05)
        assert hostile.status_of(hostile.exchange(server.port, b"GET /x HTTP/1.1\r\nHost: x\r\n\r\n")) == 200
        for s in readers:  # what they got is cut short: the connection was aborted
            got = b""
            try:
                while chunk := s.recv(1 << 20):
                    got += chunk
            except ConnectionResetError:
                pass
            assert len(got) < len(BIG)
    finally:
        for s in readers:
            s.close()


@pytest.mark.parametrize("size", [0, 1, CHUNK, CHUNK + 1, 3 * CHUNK])
def test_an_answer_in_chunks_is_the_body_whole(size):
    sent = []

    async def send(message):
        sent.append(message)

    body = bytes(range(256)) * (size // 256) + b"z" * (size % 256)
    asyncio.run(send_body(send, 200, [], body))
    assert b"".join(bytes(m["body"]) for m in sent[1:]) == body
    assert [m.get("more_body", False) for m in sent[1:]] == [True] * (len(sent) - 2) + [False]
    assert (b"content-length", b"%d" % size) in sent[0]["headers"]
