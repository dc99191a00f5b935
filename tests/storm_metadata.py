"""storm-kafka-client's own CommitMetadataManager as a process the tests ask (issue 44): what
isOffsetCommittedByThisTopology answers for a commit's metadata bytes and the spout's storm id, on each release line
whose jars tests/storm_runner/client/pom.xml fetches (tests/storm_runner/client/MetadataOracle.java says how).

    with MetadataOracle("2.8.3") as oracle:
        oracle.ask([("orders-1-1700000000", b'{"topologyId":"orders-1-1700000000","taskId":1}')])  # ["own"]

One JVM per oracle, asked any number of batches: it starts in about a second, then answers about 100,000 inputs a
second, so a test may ask one input at a time (hypothesis shrinks a failure that way) and a run may ask batches of
thousands."""

from __future__ import annotations

import base64
import functools
import subprocess
from pathlib import Path

from tests.javarun import JVM_FLAGS, compile_java, tool
from tests.storm_client_spout import LINES, lib_dir

SOURCE = Path(__file__).parent / "storm_runner" / "client" / "MetadataOracle.java"
VERDICTS = ("own", "other")  # and "throws <exception class>"
CHUNK = 500  # inputs sent at a time: their answers (at most 60 bytes each) fit in a pipe's 64 KiB
QUIET = "quiet-log4j2.properties"  # CommitMetadataManager logs a warning for every metadata it cannot read


@functools.cache
def _classes(line: str, jars: Path) -> tuple[str, str]:
    """MetadataOracle compiled against the line's jars, once per session: (its classpath, a log4j2 file that logs
    nothing)."""
    classpath, _ = compile_java(SOURCE, f"{jars}/*", prefix=f"metadata-oracle-{line}-", log_prefix="metadata-oracle",
                                java_home=LINES[line], files={QUIET: "rootLogger.level = off\n"})
    return classpath, str(Path(classpath.split(":", 1)[0]) / QUIET)


def _line(storm_id: str, metadata: bytes) -> bytes:
    return base64.b64encode(storm_id.encode()) + b" " + base64.b64encode(metadata) + b"\n"


class MetadataOracle:
    """The JVM of one line's MetadataOracle; ask() sends inputs and reads their verdicts."""

    def __init__(self, line: str) -> None:
        self.line = line
        jars = lib_dir(line)
        classpath, logging = _classes(line, jars)
        argv = [tool("java", "MetadataOracle", LINES[line]), *JVM_FLAGS, f"-Dlog4j2.configurationFile={logging}",
                "-cp", classpath, "MetadataOracle"]
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.asked = 0

    def ask(self, inputs: list[tuple[str, bytes]]) -> list[str]:
        """The verdict of each (storm id, metadata bytes), in order. Sent CHUNK at a time, each chunk's answers read
        before the next is sent: the JVM's answers never fill its pipe while this process is still writing."""
        answers = []
        for at in range(0, len(inputs), CHUNK):
            chunk = inputs[at:at + CHUNK]
            self._proc.stdin.write(b"".join(_line(storm_id, metadata) for storm_id, metadata in chunk))
            self._proc.stdin.flush()
            answers += [self._proc.stdout.readline().decode().rstrip("\n") for _ in chunk]
        if any(not a for a in answers):
            raise AssertionError(f"MetadataOracle ({self.line}) ended (exit {self._proc.wait(10)})")
        self.asked += len(inputs)
        return answers

    def close(self) -> None:
        self._proc.stdin.close()
        self._proc.wait(30)

    def __enter__(self) -> MetadataOracle:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
