"""Hostile HTTP clients, as an attacker on the network would be, for tests/faults/test_http_hostile.py and
benchmarks/bench_http.py: connections that send half a request and hold it, bodies that stall, bursts, oversized
heads and URLs, unknown methods, path traversal. Loopback only; every loop is bounded in count and time.

Also what a process holds, read from /proc: threads, resident memory, open files.
"""

from __future__ import annotations

import asyncio
import os
import socket
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Held:
    """What a process holds."""

    threads: int
    rss_kib: int
    fds: int


def held(pid: int) -> Held:
    """What the command started as `pid` holds: the process that runs it, the child of `pid` (offctl/__main__.py
    runs each command in a child it watches)."""
    pid = command_pid(pid)
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return Held(int(status["Threads"]), int(status["VmRSS"].split()[0]), len(os.listdir(f"/proc/{pid}/fd")))


def command_pid(pid: int) -> int:
    """The process that runs the command `offctl` was started as `pid`: its one child (the supervisor's), or `pid`
    itself when it has none (OFFCTL_SUPERVISOR=off)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(children[0]) if len(children) == 1 else pid


def status_of(answer: bytes) -> int | None:
    """The status code of an HTTP answer, None when there is none (closed without an answer)."""
    line = answer.split(b"\r\n", 1)[0].split(b" ")
    return int(line[1]) if len(line) > 1 and line[0].startswith(b"HTTP/") and line[1].isdigit() else None


def exchange(port: int, request: bytes, timeout_s: float = 3.0) -> bytes:
    """Send `request` whole and read the answer until the server closes or `timeout_s` passes without a byte; a
    connection the server resets is an empty answer, as is one that answers nothing."""
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as s:
        try:
            s.sendall(request)
            while chunk := s.recv(65536):
                answer += chunk
                if _whole(answer):
                    break
        except (ConnectionResetError, BrokenPipeError):
            pass
        except TimeoutError:
            pass
    return answer


def _whole(answer: bytes) -> bool:
    head, sep, body = answer.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return False  # until the server closes


def trickle(port: int, request: bytes, pause_s: float) -> bool:
    """Send `request` a byte at a time, `pause_s` apart; True once the server has closed the connection (before the
    last byte), False if it never did."""
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        for byte in request:
            try:
                s.sendall(bytes([byte]))
                s.settimeout(pause_s)
                if s.recv(65536) == b"":
                    return True
            except TimeoutError:
                continue
            except OSError:  # reset by the server
                return True
    return False


async def _open(port: int, first: bytes) -> asyncio.StreamWriter | None:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return None
    writer.write(first)
    try:
        await writer.drain()
    except OSError:
        pass
    return writer


def hold(port: int, count: int, first: bytes) -> list:
    """Open `count` connections that each send `first` and then nothing; returns them, still open (close with
    release). Runs in a thread's own event loop: the caller keeps its own."""

    async def all_of() -> list:
        return list(await asyncio.gather(*(_open(port, first) for _ in range(count))))

    loop = asyncio.new_event_loop()
    writers = loop.run_until_complete(all_of())
    return [loop, [w for w in writers if w is not None]]


def release(held_connections: list) -> None:
    loop, writers = held_connections
    for w in writers:
        w.close()
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()


def burst(port: int, request: bytes, count: int, timeout_s: float = 10.0) -> list[int | None]:
    """`count` requests at once, each on its own connection; the status of each answer (None: no answer)."""

    async def one() -> int | None:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), timeout_s)
        except (OSError, asyncio.TimeoutError):
            return None
        try:
            writer.write(request)
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout_s)
            return status_of(head)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return None
        finally:
            writer.close()

    async def all_of() -> list[int | None]:
        return list(await asyncio.gather(*(one() for _ in range(count))))

    return asyncio.run(all_of())
