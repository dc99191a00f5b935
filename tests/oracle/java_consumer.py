"""What a real Java KafkaConsumer (kafka-clients of servers.KAFKA, the release the `broker` fixture runs) is handed,
by isolation level: the reference for offctl's "last stable offset" figures. tests/java/ConsumerView.java does the
reading; it is compiled once per session into a temporary directory, as tests/support/storm_ui.py compiles StormUiLag.

    view = consumer_view(kafka.bootstrap, topic, {0: 0})                      # isolation_level="read_committed"
    assert view == {0: {"end_offset": 10, "position": 10, "records": [0, 1, 2, 7, 8]}}

end_offset is what KafkaConsumer#endOffsets answers (read_committed: the last stable offset; read_uncommitted: the
high watermark); records are the offsets poll() handed, in order, from the start offset until position() reached
end_offset (or ConsumerView's 20 s deadline passed: then position is short of end_offset); position is position()
at the end. About 1.5 s a call (a JVM start, most of it).
"""

from __future__ import annotations

import functools
from pathlib import Path

from offctl.adapters import servers
from tests.oracle.javarun import JVM_FLAGS, RUNNER_IO, compile_java, run_json_line, tool

SOURCE = Path(__file__).parent.parent / "java" / "ConsumerView.java"
ISOLATIONS = ("read_committed", "read_uncommitted")


@functools.cache
def _classes() -> tuple[str, str]:
    """ConsumerView compiled once per session: (its classpath with Kafka's jars, the log4j2 configuration file)."""
    kafka = servers.kafka_classpath(servers.KAFKA)  # "<kafka home>/<version>/lib/*": java expands the wildcard
    return compile_java((SOURCE, RUNNER_IO), kafka, prefix="consumer-view-", log_prefix="kafka-clients")


def consumer_view(
    bootstrap: str,
    topic: str,
    starts: dict[int, int],
    *,
    isolation_level: str = "read_committed",
    timeout: float = 60.0,
) -> dict[int, dict]:
    """What a Java KafkaConsumer with `isolation_level` (read_committed or read_uncommitted), assigned the partitions of
    `starts` (partition -> start offset) of `topic` and seeked there, is handed up to its end offsets:
    {partition: {"end_offset": int, "position": int, "records": [offset, ...]}}. AssertionError, with the
    program's stderr, if it fails or does not end within `timeout` seconds."""
    if isolation_level not in ISOLATIONS:
        raise ValueError(f"isolation_level must be one of {ISOLATIONS}: {isolation_level!r}")
    if not starts:
        raise ValueError("no partitions to read")
    classpath, logging = _classes()
    argv = [
        tool("java", "ConsumerView"),
        *JVM_FLAGS,
        f"-Dlog4j2.configurationFile={logging}",
        "-cp",
        classpath,
        "ConsumerView",
        bootstrap,
        isolation_level,
        topic,
        *(f"{int(p)}={int(o)}" for p, o in starts.items()),
    ]
    answer = run_json_line("ConsumerView", argv, timeout=timeout)
    if not isinstance(answer, dict):
        raise AssertionError(f"ConsumerView printed no JSON object: {answer!r}")
    view = {int(p): v for p, v in answer.items()}
    if sorted(view) != sorted(int(p) for p in starts):
        raise AssertionError(f"ConsumerView answered for partitions {sorted(view)}, not {sorted(starts)}")
    return view
