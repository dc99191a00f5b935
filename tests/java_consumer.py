"""What a real Java KafkaConsumer (kafka-clients of servers.KAFKA, the release the `broker` fixture runs) is handed,
by isolation level: the reference for offctl's "last stable offset" figures. tests/java/ConsumerView.java does the
reading; it is compiled once per session into a temporary directory, as tests/storm_ui.py compiles StormUiLag.

    view = consumer_view(kafka.bootstrap, topic, {0: 0})                      # isolation="read_committed"
    assert view == {0: {"end_offset": 10, "position": 10, "records": [0, 1, 2, 7, 8]}}

end_offset is what KafkaConsumer#endOffsets answers (read_committed: the last stable offset; read_uncommitted: the
high watermark); records are the offsets poll() handed, in order, from the start offset until position() reached
end_offset (or ConsumerView's 20 s deadline passed: then position is short of end_offset); position is position()
at the end. About 1.5 s a call (a JVM start, most of it).
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from offctl.adapters import servers

SOURCE = Path(__file__).parent / "java" / "ConsumerView.java"
ISOLATIONS = ("read_committed", "read_uncommitted")

# kafka-clients logs through slf4j, bound by Kafka's lib/ to log4j2, whose default configuration writes ERRORs to
# stdout. ConsumerView keeps stdout for its JSON line anyway (System.out goes to stderr); this puts WARNs and up on
# stderr, where a failure's message shows them.
_LOG4J2 = """rootLogger.level = warn
rootLogger.appenderRef.stderr.ref = stderr
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = kafka-clients: %p %c{1}: %m%n%ex
"""


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise AssertionError(f"{name} not found: ConsumerView needs a JDK (apt-get install openjdk-17-jdk-headless)")
    return found


@functools.cache
def _classes() -> tuple[str, str]:
    """Compile ConsumerView.java once per session into a temporary directory; returns (its classpath with Kafka's
    jars, the log4j2 configuration file)."""
    kafka = servers.kafka_classpath(servers.KAFKA)  # "<kafka home>/<version>/lib/*": java expands the wildcard
    where = tempfile.mkdtemp(prefix="consumer-view-")
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    compiled = subprocess.run([_tool("javac"), "-nowarn", "-Xlint:none", "-cp", kafka, "-d", where, str(SOURCE)],
                              capture_output=True, text=True, timeout=120)
    if compiled.returncode != 0:
        raise AssertionError(f"javac {SOURCE.name} failed ({compiled.returncode}): {compiled.stderr}")
    logging = Path(where) / "log4j2.properties"
    logging.write_text(_LOG4J2)
    return f"{where}:{kafka}", str(logging)


def consumer_view(bootstrap: str, topic: str, starts: dict[int, int], *,
                  isolation: str = "read_committed", timeout: float = 60.0) -> dict[int, dict]:
    """What a Java KafkaConsumer with `isolation` (read_committed or read_uncommitted), assigned the partitions of
    `starts` (partition -> start offset) of `topic` and seeked there, is handed up to its end offsets:
    {partition: {"end_offset": int, "position": int, "records": [offset, ...]}}. AssertionError, with the
    program's stderr, if it fails or does not end within `timeout` seconds."""
    if isolation not in ISOLATIONS:
        raise ValueError(f"isolation must be one of {ISOLATIONS}: {isolation!r}")
    if not starts:
        raise ValueError("no partitions to read")
    classpath, logging = _classes()
    argv = [_tool("java"), "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            f"-Dlog4j2.configurationFile={logging}", "-cp", classpath, "ConsumerView", bootstrap, isolation, topic,
            *(f"{int(p)}={int(o)}" for p, o in starts.items())]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"ConsumerView did not end within {timeout} s; stderr: {exc.stderr}") from None
    if proc.returncode != 0:
        raise AssertionError(f"ConsumerView failed ({proc.returncode}): {proc.stderr}")
    lines = proc.stdout.splitlines()
    if len(lines) != 1:
        raise AssertionError(f"ConsumerView printed {len(lines)} lines, not one: {proc.stdout!r}; "
                             f"stderr: {proc.stderr}")
    try:
        view = {int(p): v for p, v in json.loads(lines[0]).items()}
    except ValueError as exc:
        raise AssertionError(f"ConsumerView printed no JSON object ({exc}): {lines[0]!r}") from None
    if sorted(view) != sorted(int(p) for p in starts):
        raise AssertionError(f"ConsumerView answered for partitions {sorted(view)}, not {sorted(starts)}")
    return view
