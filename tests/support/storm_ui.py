"""What Storm UI shows for a storm-kafka-monitor run: its stdout and exit code read by tests/java/StormUiLag.java
(ShellUtils' read, TopologySpoutLag's parse, topology.html's loop; the Storm files and tags are cited there) with
Debian's json-simple (cliftonlabs 2.3.0, whose org.json.simple parser scans and parses as Storm's json-simple 1.1).

    view = storm_ui_reads(proc.stdout, proc.returncode)          # release="v1.2.4" by default
    assert view == UiView(rows=(Row("t", "0", (10, "Long"), (5, "Long"), (5, "Long")),))

Tests that call it carry @requires_storm_ui: without java, javac or the jar they skip, saying why.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pytest

JSON_SIMPLE = "/usr/share/java/json-simple.jar"  # Debian's libjson-simple-java (2.3.0 on bookworm)
SOURCE = Path(__file__).parent.parent / "java" / "StormUiLag.java"
RELEASES = ("v1.2.4", "v2.5.0", "v2.8.8")

requires_storm_ui = pytest.mark.skipif(
    shutil.which("java") is None or shutil.which("javac") is None or not Path(JSON_SIMPLE).exists(),
    reason=f"Storm UI's reading needs a JDK (java, javac) and {JSON_SIMPLE} (Debian's libjson-simple-java)",
)

# A value the page reads, with its Java type: (5, "Long"), (12.5, "Double"), ("x", "String"), (None, "null"),
# (None, "undefined") for a missing key; other types (JSONObject, JSONArray) keep String.valueOf's text.
Cell = tuple[object, str]


class Row(NamedTuple):
    """One row of the page's "Kafka Spouts Lag" table, in the page's column order."""

    topic: str
    partition: str
    log_head_offset: Cell
    consumer_committed_offset: Cell
    lag: Cell


@dataclass(frozen=True)
class UiView:
    """What the topology page shows for the spout.

    rows: the lag table's rows in the page's order (array-index keys ascending, then the parsed HashMap's order).
    error_info: the error table's text (TopologySpoutLag's errorInfo), or None.
    omitted: the exception TopologySpoutLag.lag caught ("<class>: <message>"): the spout is not in the response.
    page_error: a JavaScript TypeError in the page's loop: nothing is rendered.
    Nothing at all (all empty): the spout has a lag result with no rows, and the page shows nothing for it.
    """

    rows: tuple[Row, ...] = ()
    error_info: str | None = None
    omitted: str | None = None
    page_error: str | None = None


_INT_TYPES = {"Long", "Integer", "Short", "Byte", "BigInteger"}
_FLOAT_TYPES = {"Double", "Float"}


def _text(field: str) -> str:
    """StormUiLag's escaping is a JSON string's (every non-printable or non-ASCII char as \\uXXXX)."""
    return json.loads(f'"{field}"')


def _cell(java_type: str, field: str) -> Cell:
    text = _text(field)
    if java_type in ("null", "undefined"):
        return (None, java_type)
    if java_type in _INT_TYPES:
        return (int(text), java_type)
    if java_type in _FLOAT_TYPES:
        return (float(text), java_type)
    if java_type == "Boolean":
        return (text == "true", java_type)
    return (text, java_type)


@functools.cache
def _classes() -> str:
    """Compile StormUiLag.java once per session into a temporary directory."""
    where = tempfile.mkdtemp(prefix="storm-ui-")
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    subprocess.run(
        [shutil.which("javac"), "-nowarn", "-Xlint:none", "-cp", JSON_SIMPLE, "-d", where, str(SOURCE)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return where


def storm_ui_reads(
    stdout: bytes, exit_code: int, release: str = "v1.2.4", *, ui_default_charset: str = "UTF-8"
) -> UiView:
    """What Storm UI at `release` shows for a monitor run that wrote `stdout` and exited with `exit_code`.

    release: "v1.2.4", "v2.5.0" (json-simple, no instanceof guard) or "v2.8.8" (UTF-8 and the guard; parsed with
    json-simple, not the json-smart v2.6.0+ really uses). ui_default_charset: the UI JVM's file.encoding, which
    ShellUtils decodes with through v2.5.0 (ignored for v2.8.8, which always reads UTF-8).
    """
    if release not in RELEASES:
        raise ValueError(f"release must be one of {RELEASES}: {release!r}")
    with tempfile.NamedTemporaryFile(prefix="monitor-stdout-") as out:
        out.write(stdout)
        out.flush()
        proc = subprocess.run(
            [
                shutil.which("java"),
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                f"{JSON_SIMPLE}:{_classes()}",
                "StormUiLag",
                release,
                ui_default_charset,
                str(exit_code),
                out.name,
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"StormUiLag failed ({proc.returncode}): {proc.stderr}")
    rows, seen = [], {}
    for line in proc.stdout.splitlines():
        kind, *fields = line.split("\t")
        if kind == "ROW":
            topic, partition, *cells = fields
            rows.append(Row(_text(topic), _text(partition), *(_cell(cells[i], cells[i + 1]) for i in range(0, 6, 2))))
        elif kind in ("ERRORINFO", "OMITTED", "PAGEERROR") and kind not in seen:
            seen[kind] = _text(fields[0])
        else:
            raise RuntimeError(f"StormUiLag printed an unexpected line: {line!r}")
    return UiView(
        rows=tuple(rows),
        error_info=seen.get("ERRORINFO"),
        omitted=seen.get("OMITTED"),
        page_error=seen.get("PAGEERROR"),
    )
