"""The one HTTP stack of offctl's servers (`offctl serve`, `offctl mcp --http`): uvicorn's asyncio server with h11,
one set of limits for both (LIMITS), and what uvicorn leaves to the application against hostile clients.

A connection that has not sent a whole request costs no worker: one event loop serves every connection, and a
request reaches the application (the scrape, the MCP call) only once its line and headers are whole. What uvicorn
does not bound, this module does (Protocol):
- the request line and headers must be whole within `head_s` of the connection (or of the request's first byte,
  on a kept-alive connection), the body within `body_s` of the headers; else the connection is closed. A per-read
  timeout would let a client that sends a byte a second hold its connection for ever: these are deadlines;
- a request line over `max_url_bytes` is answered 414, a head over `max_head_bytes` 431, a declared body over
  `max_body_bytes` 413 (guarded), each with the connection closed, before the application sees anything;
- at most `max_connections` connections at once. The one beyond it sheds the oldest connection that has not sent a
  whole request (an idle or stalled client), and only when every connection is serving a request is it answered
  503 and closed. So idle clients can never take the slots a scrape needs: a scrape's connection is the newest,
  sends its request at once, and is served;
- a method the face does not answer is 405 with Allow (guarded; the connection closed: its body is never read);
- an answer the client stops reading for `write_s` is cut off (the connection aborted): a client that asks and
  never reads holds its slot no longer than that.

Memory and open files are bounded by the connection bound: a connection holds its socket, at most one head
(`max_head_bytes`), while the application reads a body uvicorn's 64 KiB read buffer, and while it answers the
transport's 64 KiB write buffer and one chunk (an application streams a large answer in chunks: send_body); the
listen backlog is the kernel's. tests/faults/test_http_hostile.py holds both faces to this with thousands of hostile
connections."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from dataclasses import dataclass
from http import HTTPStatus

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from offctl.errors import UsageError


@dataclass(frozen=True)
class HttpLimits:
    """The limits of every offctl HTTP server, declared once (docs/monitoring/README.md, docs/mcp.md)."""

    head_s: float = 5.0  # the request line and headers, whole, from the connection or the request's first byte
    body_s: float = 10.0  # the body, whole, from the end of the headers
    keep_alive_s: int = 5  # an idle kept-alive connection is closed after this (uvicorn's timeout_keep_alive)
    max_url_bytes: int = 8 * 1024  # the request line: 414 beyond
    max_head_bytes: int = 16 * 1024  # the request line and headers together: 431 beyond
    max_body_bytes: int = 1 << 20  # a declared Content-Length: 413 beyond (the MCP SDK bounds chunked bodies)
    write_s: float = 10.0  # a client that stops reading the answer for this long is cut off
    max_connections: int = 256  # connections kept at once
    backlog: int = 1024  # connections the kernel holds until they are accepted (a burst of scrapes waits there)
    # Connections asyncio accepts on one turn of its loop. A connection is made, and sheds another, a turn or two
    # after it is accepted, and the shed one's socket closes a turn later, so open files run a few batches above
    # max_connections during a flood and settle at it. asyncio ties the batch to the listen backlog; the server
    # widens the kernel's queue to `backlog` once it listens (http_server).
    accept_batch: int = 16
    shutdown_s: int = 3  # a request still running when the server stops gets this long to finish


LIMITS = HttpLimits()

_CLOSE = (b"connection", b"close")
_WHOLE = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED)  # the client's side of a request that arrived whole


def _answer(status: int, text: str, headers: tuple[tuple[bytes, bytes], ...] = ()) -> bytes:
    body = text.encode()
    lines = [
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}".encode(),
        b"Content-Type: text/plain; charset=utf-8",
        b"Content-Length: %d" % len(body),
        b"Connection: close",
        *(k + b": " + v for k, v in headers),
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


class Protocol(H11Protocol):
    """uvicorn's h11 protocol with offctl's limits (the module's docstring): deadlines, sizes, and the connection
    bound that sheds clients that have not sent a whole request before it refuses anyone."""

    limits = LIMITS  # a subclass per server sets its own (protocol_for)
    shed = 0  # connections closed to make room, per class (a server's count)
    refused = 0  # connections answered 503: every slot was serving a request

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._deadline: asyncio.TimerHandle | None = None
        self._stall: asyncio.TimerHandle | None = None  # the client has stopped reading the answer since
        self._since = time.monotonic()
        self._head_seen = 0  # bytes of the current request's head received so far
        self._line_done = False
        if len(self.connections) >= self.limits.max_connections and not self._make_room():
            type(self).refused += 1
            transport.write(_answer(503, "offctl: too many requests at once\n", ((b"Retry-After", b"1"),)))
            transport.close()
            self.transport = transport
            return
        super().connection_made(transport)
        self._arm(self.limits.head_s)

    def _make_room(self) -> bool:
        """Close the oldest connection that has not sent a whole request; False when every one is serving one."""
        idle = [c for c in self.connections if isinstance(c, Protocol) and not c._busy()]
        if not idle:
            return False
        oldest = min(idle, key=lambda c: c._since)
        type(self).shed += 1
        oldest._close()
        self.connections.discard(oldest)  # its connection_lost follows; the slot is free now
        return True

    def _busy(self) -> bool:
        """Serving a request: it arrived whole and its answer is not complete."""
        return self.conn.their_state in _WHOLE and self.cycle is not None and not self.cycle.response_complete

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.conn.their_state not in _WHOLE:  # the request did not arrive in time: nothing to answer
            self._close()

    def _close(self) -> None:
        self._disarm()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self.conn.their_state is h11.IDLE:
            if self._head_seen == 0:  # a new request's first byte
                self._since = time.monotonic()
                if self._deadline is None:  # a kept-alive connection: the head's deadline runs from here
                    self._arm(self.limits.head_s)
            if not self._line_done:
                end = data.find(b"\n")
                self._line_done = end >= 0
                if self._head_seen + (end if end >= 0 else len(data)) > self.limits.max_url_bytes:
                    return self._refuse(414, "the request line is too long")
            self._head_seen += len(data)
            if self._head_seen > self.limits.max_head_bytes:
                return self._refuse(431, "the request line and headers are too large")
        before = self.conn.their_state
        super().data_received(data)
        after = self.conn.their_state
        if before is h11.IDLE and after is not h11.IDLE:  # the head arrived whole
            self._head_seen, self._line_done = 0, False
            if after in _WHOLE:
                self._disarm()
            elif after is h11.SEND_BODY:
                self._arm(self.limits.body_s)
        elif after in _WHOLE:
            self._disarm()

    def _refuse(self, status: int, why: str) -> None:
        """Answer a head refused before h11 parsed it (414, 431) and close. Only called while the client is IDLE,
        so no request of this connection is with the application: a previous one's answer is complete."""
        self.transport.write(_answer(status, f"offctl: {why}\n"))
        self._close()

    def pause_writing(self) -> None:
        """The answer waits on the client (asyncio's write buffer is full): it must read on within write_s."""
        super().pause_writing()
        if self._stall is None:
            self._stall = self.loop.call_later(self.limits.write_s, self._stalled)

    def resume_writing(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        super().resume_writing()

    def _stalled(self) -> None:
        self._stall = None
        self._disarm()
        self.transport.abort()  # close() would wait for the buffer to drain, which is what does not happen

    def on_response_complete(self) -> None:
        self._since = time.monotonic()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
        if self.flow is None:  # refused before uvicorn's connection_made: nothing of uvicorn's to undo
            return
        super().connection_lost(exc)


def protocol_for(limits: HttpLimits) -> type[Protocol]:
    """A protocol class of its own for one server: its limits, and its counts of shed and refused connections."""
    return type("Protocol", (Protocol,), {"limits": limits, "shed": 0, "refused": 0})


def guarded(app, methods: tuple[str, ...], face: str, limits: HttpLimits = LIMITS):
    """`app` for `methods`, and bodies within the bound: any other method is 405 with an Allow header, a declared
    body over `max_body_bytes` 413, each before the application sees the request and with the connection closed (the
    body is never read)."""
    allow = ", ".join(methods).encode()
    refusals = {
        405: f"{face} answers {' and '.join(methods)} only\n".encode(),
        413: f"{face}: the request body is larger than {limits.max_body_bytes} bytes\n".encode(),
    }

    async def answer(scope, receive, send):
        if scope["type"] == "http":
            status = 405 if scope["method"] not in methods else 413 if _declared(scope) > limits.max_body_bytes else 0
            if status:
                headers = [(b"content-type", b"text/plain"), _CLOSE] + ([(b"allow", allow)] if status == 405 else [])
                await send({"type": "http.response.start", "status": status, "headers": headers})
                await send({"type": "http.response.body", "body": refusals[status]})
                return
        await app(scope, receive, send)

    return answer


def _declared(scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else 0  # h11 refuses a Content-Length that is not a number
    return 0


def listen(host: str, port: int, limits: HttpLimits = LIMITS, *, flag: str = "--listen") -> socket.socket:
    """The listening socket, bound now: an address that cannot be had is a usage error naming `flag`."""
    v6 = ":" in host
    try:
        return socket.create_server(
            (host, port), family=socket.AF_INET6 if v6 else socket.AF_INET, backlog=limits.backlog
        )
    except (OSError, OverflowError) as exc:
        where = f"[{host}]:{port}" if v6 else f"{host}:{port}"
        raise UsageError(f"{flag} {where}: cannot listen there ({getattr(exc, 'strerror', None) or exc})") from None


@dataclass
class HttpServer:
    """One offctl HTTP server: uvicorn over a bound socket, with the limits and the face's methods."""

    server: object  # uvicorn.Server
    sock: socket.socket
    protocol: type[Protocol]
    thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    @property
    def connections(self) -> int:
        return len(self.server.server_state.connections)

    def run(self) -> None:
        """Serve in this thread until SIGTERM or Ctrl-C (uvicorn's own handling, in the main thread)."""
        self.server.run(sockets=[self.sock])

    def start(self, name: str) -> HttpServer:
        """Serve in a thread of its own, until stop()."""
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, name=name, daemon=True)
        self.thread.start()
        return self

    def stop(self, timeout_s: float | None = None) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout_s if timeout_s is not None else self.server.config.timeout_graceful_shutdown + 5)
        self.sock.close()


def http_server(
    app,
    sock: socket.socket,
    methods: tuple[str, ...],
    face: str,
    limits: HttpLimits = LIMITS,
    *,
    lifespan: bool = False,
) -> HttpServer:
    """`app` (ASGI) served on `sock` by uvicorn with offctl's limits, answering `methods` only. `lifespan`: the
    application has start-up and shut-down work (the MCP SDK's session manager)."""
    import uvicorn

    # uvicorn's warnings are one line per hostile request ("Invalid HTTP request received."): under an attack that
    # is a flood on stderr, itself a denial of service. Errors (an exception in offctl's application) still show.
    logging.getLogger("uvicorn.error").setLevel(logging.ERROR)

    class Server(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)  # asyncio listens with the accept batch as its backlog: widen the queue
            for sock in sockets or ():
                sock.listen(limits.backlog)

    protocol = protocol_for(limits)
    config = uvicorn.Config(
        guarded(app, methods, face, limits),
        loop="asyncio",
        http=protocol,
        ws="none",
        lifespan="on" if lifespan else "off",
        log_config=None,
        access_log=False,
        server_header=False,
        backlog=limits.accept_batch,
        timeout_keep_alive=limits.keep_alive_s,
        timeout_graceful_shutdown=limits.shutdown_s,
        # h11 refuses a head over its own bound with a bare 400; ours (431, 414) comes first
        h11_max_incomplete_event_size=limits.max_head_bytes + 1024,
    )
    return HttpServer(Server(config), sock, protocol)


CHUNK = 64 * 1024  # an answer goes out in chunks of this, each sent once the client has read the last


async def send_body(send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    """Answer with `body`, in chunks, each waiting for the client to read on (uvicorn's flow control): a burst of
    clients holds one chunk each, not a copy of the whole body each, and the bytes are shared, never copied whole."""
    await send(
        {"type": "http.response.start", "status": status, "headers": [*headers, (b"content-length", b"%d" % len(body))]}
    )
    view = memoryview(body)
    last = max(len(body) - 1, 0) // CHUNK * CHUNK  # where the last chunk starts
    for at in range(0, last, CHUNK):
        await send({"type": "http.response.body", "body": view[at : at + CHUNK], "more_body": True})
        # uvicorn's send yields only while the client is behind: yield anyway, so that other connections are served
        # between chunks, and a client that went away is seen (its connection_lost runs) before the next one
        await asyncio.sleep(0)
    await send({"type": "http.response.body", "body": view[last:]})
