"""What several documents share: compact ASCII JSON written fast, the console tables are printed on, a severity's
colour, counts and the time figures (time lag, retention headroom, commit expiry, catch-up) as a table shows them."""

from __future__ import annotations

import json
from typing import IO

import orjson
from rich.console import Console

from offctl.core.records.model import CatchUp, Headroom, Severity, TimeLag, duration
from offctl.core.time.expiry import Expiry
from offctl.core.time.history import CATCHING_UP, CAUGHT_UP, NO_HISTORY, NOT_CATCHING_UP, SHORT_WINDOW
from offctl.core.time.timelag import ESTIMATE


def dumps(doc: object) -> str:
    """`doc` as compact, ASCII-only JSON: what json.dumps(doc, separators=(",", ":")) writes, value for value."""
    return dump_bytes(doc).decode("ascii")


def dump_bytes(doc: object) -> bytes:
    """dumps, as the ASCII bytes it writes.

    orjson writes it several times faster (100,000 partitions: 0.12 s, not 0.45 s) where its output is that
    document: ASCII text, integers within 64 bits. Anything else (a name with non-ASCII characters, an
    integer beyond 64 bits, a type orjson does not take) goes to json.dumps, which escapes non-ASCII, so
    stdout is ASCII whatever its encoding."""
    try:
        fast = orjson.dumps(doc)
    except TypeError:  # orjson.JSONEncodeError
        fast = None
    if fast is not None and fast.isascii():
        return fast
    return json.dumps(doc, separators=(",", ":")).encode("ascii")


def write_bytes(data: bytes, out: IO[str]) -> None:
    """ASCII `data` to a text stream: straight to its byte buffer where it has one (stdout), after what it holds
    (a document of 100,000 partitions is 130 MB: decoding it to text, then encoding it again, took 0.12 s)."""
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(data.decode("ascii"))
        return
    out.flush()
    buffer.write(data)
    buffer.flush()


SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}


def status_style(severity: Severity | None) -> tuple[str, str]:
    """A status cell's label and its colour: the severity's, or ok in green."""
    return (severity.label, SEVERITY_STYLE[severity]) if severity else ("ok", "green")


def plural(n: int, word: str) -> str:
    """`n` things counted in words: 1 partition, 2 partitions."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def number(value: int | None) -> str:
    """A figure in a table, its thousands separated, or - for none."""
    return "-" if value is None else f"{value:,}"


def lost_text(lost: int | None) -> str:
    """What retention already took of a partition (its `lost_to_retention`) as a table says it beside the partition's
    finding codes: `lost 1,234`; empty where it took nothing or offctl cannot tell."""
    return f"lost {lost:,}" if lost else ""


def time_lag_text(lag: TimeLag | None) -> str:
    """A time lag in a table: the duration (~ when estimated), why there is none, or - without a lag."""
    if lag is None or lag.source is None:
        return "-"
    if lag.seconds is None:
        return lag.source.replace("-", " ")  # unread, no timestamp
    return ("~" if lag.source == ESTIMATE else "") + duration(lag.seconds)


def headroom_text(room: Headroom | None) -> str:
    """A retention headroom in a table: the time left, how long past (-), why there is none, or - without a lag."""
    if room is None or room.source is None:
        return "-"
    if room.seconds is None:
        return room.source.replace("-", " ")  # no deletion, unknown, unread
    return duration(room.seconds) if room.seconds >= 0 else f"-{duration(-room.seconds)}"


def expiry_text(e: Expiry | None) -> str:
    """A commit's expiry headroom in a table: the time left, how long past (-), why there is none, or - without an
    estimate (offctl.core.time.expiry)."""
    if e is None:
        return "-"
    if e.headroom_s is None:
        return e.source.lower().replace("_", " ")
    return duration(e.headroom_s) if e.headroom_s >= 0 else f"-{duration(-e.headroom_s)}"


_CATCH_UP_WORDS = {
    CAUGHT_UP: "caught up",
    NOT_CATCHING_UP: "not catching up",
    NO_HISTORY: "no estimate yet (no history)",
    SHORT_WINDOW: "no estimate (the window spans one commit period or less)",
}


def catch_up_text(up: CatchUp) -> str:
    """When a spout will have caught up, in words (offctl.core.time.history, catch-up): `catches up in ~5m07s` (~: an
    estimate at the window's rates), caught up, not catching up, why there is no estimate, or - without a lag."""
    if up.state == CATCHING_UP:
        return f"catches up in ~{duration(up.seconds)}"
    return _CATCH_UP_WORDS.get(up.state, "-")


def catch_up_cell(up: CatchUp) -> str:
    """A catch-up in a table's cell: ~5m07s, caught up, not catching up, no history, short window, or -."""
    if up.state == CATCHING_UP:
        return f"~{duration(up.seconds)}"
    return "-" if up.state is None else up.state.replace("-", " ")


def rate_text(rate: float) -> str:
    """Messages a second: 0.2/s, 12.5/s, 1,234/s."""
    return f"{rate:,.1f}/s" if abs(rate) < 100 else f"{rate:,.0f}/s"


def table_console(out: IO[str]) -> Console:
    """A console for tables: the terminal's width, or 160 columns when piped into a file or a pager."""
    probe = Console(file=out)
    return Console(file=out, markup=False, highlight=False, width=None if probe.is_terminal else 160)
