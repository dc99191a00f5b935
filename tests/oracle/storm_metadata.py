"""Storm's own parsers as processes the tests ask (issue 44), one JVM each, one answer line per input line:

- MetadataOracle: what storm-kafka-client's CommitMetadataManager.isOffsetCommittedByThisTopology answers for a
  commit's metadata bytes and the spout's storm id, on each line whose jars tests/storm_runner/client/pom.xml
  fetches (tests/storm_runner/client/MetadataOracle.java says how);
- RecordOracle: what storm-kafka 1.2.4's ZkState.readJSON and PartitionManager's casts take from a partition
  record's bytes (tests/storm_runner/kafka/RecordOracle.java);
- StateOracle: what TransactionalState.getData and a Trident emitter make of a state's bytes, per line
  (tests/storm_runner/trident/StateOracle.java);
- JStormRecordOracle: what JStorm's Kafka spout takes from a partition record's bytes, and the bytes its commitState
  writes (tests/storm_runner/jstorm/JStormRecordOracle.java: jstorm-kafka's lines over json-simple 1.1's classes).

    with MetadataOracle("2.8.3") as oracle:
        oracle.ask([("orders-1-1700000000", b'{"topologyId":"orders-1-1700000000","taskId":1}')])  # ["own"]

A JVM starts in about a second, then answers about 100,000 inputs a second, so a test may ask one input at a time
(hypothesis shrinks a failure that way) and a run may ask batches of thousands."""

from __future__ import annotations

import base64
import functools
import subprocess
from pathlib import Path

from tests.oracle.javarun import JVM_FLAGS, compile_java, tool
from tests.oracle.storm_client_spout import LINES, lib_dir

SOURCE = Path(__file__).parent.parent / "storm_runner" / "client" / "MetadataOracle.java"
RECORD_SOURCE = Path(__file__).parent.parent / "storm_runner" / "kafka" / "RecordOracle.java"
VERDICTS = ("own", "other")  # and "throws <exception class>"
CHUNK = 500  # inputs sent at a time: their answers (at most 60 bytes each) fit in a pipe's 64 KiB
QUIET = "quiet-log4j2.properties"  # CommitMetadataManager logs a warning for every metadata it cannot read


@functools.cache
def _classes(line: str, jars: Path) -> tuple[str, str]:
    """MetadataOracle compiled against the line's jars, once per session: (its classpath, a log4j2 file that logs
    nothing)."""
    classpath, _ = compile_java(
        SOURCE,
        f"{jars}/*",
        prefix=f"metadata-oracle-{line}-",
        log_prefix="metadata-oracle",
        java_home=LINES[line],
        files={QUIET: "rootLogger.level = off\n"},
    )
    return classpath, str(Path(classpath.split(":", 1)[0]) / QUIET)


def _line(storm_id: str, metadata: bytes) -> bytes:
    return base64.b64encode(storm_id.encode()) + b" " + base64.b64encode(metadata) + b"\n"


class _Oracle:
    """One JVM that answers one line per input line, in order; ask() sends inputs and reads their answers."""

    name = "oracle"

    def __init__(self, argv: list[str]) -> None:
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.asked = 0

    def _ask(self, lines: list[bytes]) -> list[str]:
        """The answer to each input line, in order. Sent CHUNK at a time, each chunk's answers read before the next
        is sent: the JVM's answers never fill its pipe while this process is still writing."""
        answers = []
        for at in range(0, len(lines), CHUNK):
            chunk = lines[at : at + CHUNK]
            self._proc.stdin.write(b"".join(chunk))
            self._proc.stdin.flush()
            answers += [self._proc.stdout.readline().decode().rstrip("\n") for _ in chunk]
        if any(not a for a in answers):
            raise AssertionError(f"{self.name} ended (exit {self._proc.wait(10)})")
        self.asked += len(lines)
        return answers

    def close(self) -> None:
        self._proc.stdin.close()
        self._proc.wait(30)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class MetadataOracle(_Oracle):
    """The JVM of one line's MetadataOracle; ask() sends inputs and reads their verdicts."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.name = f"MetadataOracle ({line})"
        jars = lib_dir(line)
        classpath, logging = _classes(line, jars)
        super().__init__(
            [
                tool("java", "MetadataOracle", LINES[line]),
                *JVM_FLAGS,
                f"-Dlog4j2.configurationFile={logging}",
                "-cp",
                classpath,
                "MetadataOracle",
            ]
        )

    def ask(self, inputs: list[tuple[str, bytes]]) -> list[str]:
        """The verdict of each (storm id, metadata bytes), in order."""
        return self._ask([_line(storm_id, metadata) for storm_id, metadata in inputs])


@functools.cache
def _record_classes() -> tuple[str, str]:
    """RecordOracle compiled against storm-kafka's jars, once per session: (its classpath, a quiet log4j2 file)."""
    from tests.oracle.storm_kafka_spout import MOCKITO_PLUGINS
    from tests.oracle.storm_kafka_spout import lib_dir as storm_kafka_lib

    files = {
        QUIET: "rootLogger.level = off\n",
        **{f"mockito-extensions/{plugin}": choice for plugin, choice in MOCKITO_PLUGINS.items()},
    }
    classpath, _ = compile_java(
        RECORD_SOURCE, f"{storm_kafka_lib()}/*", prefix="record-oracle-", log_prefix="record-oracle", files=files
    )
    return classpath, str(Path(classpath.split(":", 1)[0]) / QUIET)


class RecordOracle(_Oracle):
    """storm-kafka 1.2.4's ZkState.readJSON and PartitionManager's casts (tests/storm_runner/kafka/RecordOracle.java):
    ask() answers "use <offset> <base64 topology id>" or "none <why>" for each record's bytes."""

    name = "RecordOracle (storm-kafka 1.2.4)"

    def __init__(self) -> None:
        classpath, logging = _record_classes()
        super().__init__(
            [
                tool("java", "RecordOracle"),
                *JVM_FLAGS,
                f"-Dlog4j2.configurationFile={logging}",
                "-cp",
                classpath,
                "RecordOracle",
            ]
        )

    def ask(self, records: list[bytes]) -> list[str]:
        return self._ask([base64.b64encode(data) + b"\n" for data in records])


STATE_SOURCE = Path(__file__).parent.parent / "storm_runner" / "trident" / "StateOracle.java"
STATE_LINES = {  # the oracle's mode and jars: storm-kafka's Trident emitter, storm-kafka-client's on each line
    "storm-kafka 1.2.4": ("kafka", "old", "1.2.4"),
    "storm-kafka-client 1.2.4": ("client", "client", "1.2.4"),
    "storm-kafka-client 2.8.3": ("client", "client", "2.8.3"),
}


@functools.cache
def _state_classes(jars: str) -> tuple[str, str]:
    from tests.oracle.storm_trident_spout import _FILES

    classpath, _ = compile_java(
        STATE_SOURCE,
        f"{jars}/*",
        prefix="state-oracle-",
        log_prefix="state-oracle",
        files={QUIET: "rootLogger.level = off\n", **_FILES},
    )
    return classpath, str(Path(classpath.split(":", 1)[0]) / QUIET)


class StateOracle(_Oracle):
    """A Trident spout's TransactionalState.getData and its emitter on a state's bytes
    (tests/storm_runner/trident/StateOracle.java): ask() answers "none", "use <offset> <base64 id or ->" or
    "throws <exception class>" for each."""

    def __init__(self, line: str) -> None:
        from tests.oracle.storm_client_spout import lib_dir as client_lib
        from tests.oracle.storm_kafka_spout import lib_dir as old_lib

        self.line = line
        self.name = f"StateOracle ({line})"
        mode, library, release = STATE_LINES[line]
        classpath, logging = _state_classes(str(old_lib(release) if library == "old" else client_lib(release)))
        super().__init__(
            [
                tool("java", "StateOracle"),
                *JVM_FLAGS,
                f"-Dlog4j2.configurationFile={logging}",
                "-cp",
                classpath,
                "StateOracle",
                mode,
            ]
        )

    def ask(self, states: list[bytes]) -> list[str]:
        return self._ask([base64.b64encode(data) + b"\n" for data in states])


JSTORM_SOURCE = Path(__file__).parent.parent / "storm_runner" / "jstorm" / "JStormRecordOracle.java"


@functools.cache
def _jstorm_classes() -> str:
    """JStormRecordOracle compiled against the json-simple 1.1 and Guava jars storm-kafka 1.2.4's lib holds, once per
    session: its classpath."""
    from tests.oracle.storm_kafka_spout import lib_dir as storm_kafka_lib

    classpath, _ = compile_java(
        JSTORM_SOURCE, f"{storm_kafka_lib()}/*", prefix="jstorm-record-oracle-", log_prefix="jstorm-record-oracle"
    )
    return classpath


def _utf16(text: str | None) -> str:
    """A string as JStormRecordOracle's write mode reads it: "s" and the hex of its UTF-16 code units, "-" for null."""
    return "-" if text is None else "s" + text.encode("utf-16-be", "surrogatepass").hex()


class JStormRecordOracle(_Oracle):
    """JStorm's jstorm-kafka (2.4.0) over json-simple 1.1 (tests/storm_runner/jstorm/JStormRecordOracle.java):
    ask() answers "use <offset>" or "none <why>" for each record's bytes, write() the bytes
    PartitionConsumer.commitState writes for each (topology, offset, partition, host, port, topic). One JVM answers
    both."""

    name = "JStormRecordOracle (jstorm-kafka 2.4.0's lines, json-simple 1.1)"

    def __init__(self) -> None:
        super().__init__([tool("java", "JStormRecordOracle"), *JVM_FLAGS, "-cp", _jstorm_classes(), JSTORM_SOURCE.stem])

    def ask(self, records: list[bytes]) -> list[str]:
        return self._ask([b"r " + base64.b64encode(data) + b"\n" for data in records])

    def write(self, records: list[tuple[str | None, int, int, str, int, str]]) -> list[bytes]:
        lines = [
            f"w {_utf16(topology)} {offset} {partition} {_utf16(host)} {port} {_utf16(topic)}\n".encode()
            for topology, offset, partition, host, port, topic in records
        ]
        return [base64.b64decode(answer) for answer in self._ask(lines)]
