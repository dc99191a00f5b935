"""`offctl watch`'s view: each refresh's table of partitions, their movement since the last refresh and their
history status, and under it when each consumer will have caught up."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from offctl.core.records.model import ConsumerKey, PartitionRow, Report, TimeLag, iso_ms, ranges
from offctl.core.time.history import (
    CATCHING_UP,
    CAUGHT_UP,
    NO_CATCH_UP,
    NOT_CATCHING_UP,
    catch_up_of,
    consumer_catch_ups,
)
from offctl.core.time.retention import headroom
from offctl.render.formats import (
    catch_up_text,
    expiry_text,
    headroom_text,
    lost_text,
    number,
    rate_text,
    time_lag_text,
)

_TREND = {1: ("↑", "red"), -1: ("↓", "green"), 0: ("→", "dim")}


_STATUS_STYLE = {"OK": "green", "WARN": "yellow", "STALL": "bold red", "STOP": "bold red", "REWIND": "magenta"}


def watch_frame(
    report: Report | None,
    previous: dict[tuple, tuple[int | None, int | None]],
    statuses: dict[tuple, tuple[str | None, TimeLag]],
    refreshed: int,
    error: str | None,
):
    """One refresh of the watch view: its table (none before the first read), and the refresh's read error."""
    from rich.console import Group
    from rich.text import Text

    parts = [watch_table(report, previous, statuses, refreshed), *catch_up_lines(report)] if report is not None else []
    if error:
        parts.append(Text(f"offctl: refresh {refreshed} could not read: {error}", style="yellow"))
    return Group(*parts)


def watch_table(
    report: Report,
    previous: dict[tuple, tuple[int | None, int | None]],
    statuses: dict[tuple, tuple[str | None, TimeLag]],
    refreshed: int,
) -> Table:
    """The watch view: each partition's committed offset (moving or stuck since the last refresh), lag with
    its trend, time lag (~ when estimated), retention headroom, commit expiry and history status. `previous`:
    (committed, lag) by partition key from the last refresh."""
    table = Table(
        title=f"offctl watch: {iso_ms(report.captured_ms)} (refresh {refreshed}; Ctrl-C to leave)", title_justify="left"
    )
    for col in ("Consumer", "Topic"):
        table.add_column(col, overflow="fold")
    for col in ("Partition", "Committed", "Moved", "Lag"):
        table.add_column(col, justify="right")
    table.add_column("Trend")
    table.add_column("Time lag", justify="right")
    table.add_column("Retention", justify="right")
    table.add_column("Expiry", justify="right")
    table.add_column("Status")
    table.add_column("Findings", overflow="fold")
    expiries = report.commit_expiry or {}
    for row in report.rows:
        r = row.record
        before, lag_before = previous.get(row.partition_key, (None, None))
        moved = "-" if before is None or r.committed is None else f"{r.committed - before:+,}"
        moved_text = Text(moved, style="bold" if moved not in ("-", "+0") else "dim")
        if row.lag is None or lag_before is None:
            trend = Text("")
        else:
            sign = (row.lag > lag_before) - (row.lag < lag_before)
            trend = Text(*_TREND[sign])
        status, lag = statuses.get(row.partition_key, (None, None))
        table.add_row(
            str(r.key),
            row.topic or "?",
            str(r.partition),
            number(r.committed),
            moved_text,
            number(row.lag),
            trend,
            time_lag_text(lag),
            headroom_text(headroom(row, report.headrooms)),
            expiry_text(expiries.get(row.partition_key)),
            Text(status or "-", style=_STATUS_STYLE.get(status, "dim")),
            _findings_text(row),
        )
    return table


def catch_up_lines(report: Report) -> list[Text]:
    """Under the table, one line per consumer with a lag: when all its lagging partitions will have caught up at the
    rates of the window (offctl.core.time.history, catch-up), the partitions that are not catching up, and the
    consumer's summed rates. A line per consumer, not a column, keeps the table within 80 columns."""
    ups = consumer_catch_ups(report)
    behind: dict[ConsumerKey, dict[str, list[int]]] = {}
    for row in report.rows:
        if catch_up_of(row, report.catch_ups).state == NOT_CATCHING_UP:
            behind.setdefault(row.record.key, {}).setdefault(row.topic or "?", []).append(row.record.partition)
    lines = []
    for c in report.consumers:
        up = ups.get(c.key, NO_CATCH_UP)
        if up.state is None:
            continue
        text = f"  {c.key}: {catch_up_text(up)}"
        if c.key in behind:
            text += " on " + ", ".join(f"{topic} [{ranges(ps)}]" for topic, ps in behind[c.key].items())
        if up.commit_rate is not None:
            text += f" (commits {rate_text(up.commit_rate)}, log {rate_text(up.log_rate)})"
        lines.append(Text(text, style=_CATCH_UP_STYLE.get(up.state, "dim")))
    return [Text("Catch-up at the window's rates (an estimate)", style="italic"), *lines] if lines else []


_CATCH_UP_STYLE = {CAUGHT_UP: "green", CATCHING_UP: "", NOT_CATCHING_UP: "bold red"}


def _findings_text(row: PartitionRow) -> str:
    """The Findings cell: the codes that make the partition's severity, and what retention already took of it (its
    `lost_to_retention`, which grows while the spout stays below the log start), `OFFSET_BELOW_LOG_START (lost 2)`."""
    lost = lost_text(row.lost_to_retention)
    return ", ".join(row.codes) + (f" ({lost})" if lost else "")
