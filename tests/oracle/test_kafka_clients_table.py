"""offctl's table of what each kafka-clients release can send (offctl.core.storm.kafka_clients.CLIENTS) is what the
jars themselves say: tests/storm_runner/ApiVersionsOf.java prints each jar's ApiKeys, and every row whose jar the
suite fetches (the storm-kafka-client runners' and the brokers' lib/) must hold exactly those versions for the requests
the row has. The rows of 3.6, 4.2 and 4.3 were read from their jars the same way, from Maven Central, but no runner
fetches those jars (docs/storm.md)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from offctl.adapters.servers import kafka_home
from offctl.core.storm.kafka_clients import CLIENTS, client_line
from tests.oracle.javarun import JVM_FLAGS, compile_java, run_json_line, tool
from tests.oracle.storm_client_spout import storm_home

SOURCE = Path(__file__).parent.parent / "storm_runner" / "ApiVersionsOf.java"
OLD_NAMES = {"Offsets": "ListOffsets", "GroupCoordinator": "FindCoordinator"}  # ApiKeys' names before 0.11
JARS = {  # the jar of each release the suite fetches, by where its pom puts it
    "0.9.0.1": lambda: storm_home() / "client-1.0.5" / "lib",
    "0.10.0.0": lambda: storm_home() / "client-1.1.1" / "lib",
    "0.10.1.0": lambda: storm_home() / "client-1.2.4" / "lib",
    "0.11.0.3": lambda: storm_home() / "client-2.0.0" / "lib",
    "4.1.0": lambda: storm_home() / "client-2.8.3" / "lib",
    "3.9.2": lambda: kafka_home() / "3.9.2" / "lib",
    "4.4.0": lambda: kafka_home() / "4.4.0" / "lib",
}


@functools.cache
def _classes() -> str:
    return compile_java(SOURCE, ".", prefix="api-versions-", log_prefix="ApiVersionsOf")[0].split(":")[0]


def printed(release: str) -> dict[str, tuple[int, int]]:
    jar = JARS[release]() / f"kafka-clients-{release}.jar"
    assert jar.is_file(), f"{jar} is missing: README.md's set-up fetches it"
    spans = run_json_line(
        "ApiVersionsOf",
        [tool("java", "ApiVersionsOf"), *JVM_FLAGS, "-cp", f"{_classes()}:{jar}", "ApiVersionsOf"],
        timeout=60,
    )
    return {OLD_NAMES.get(name, name): tuple(span) for name, span in spans.items()}


@pytest.mark.parametrize("release", list(JARS))
def test_the_row_is_what_the_jar_says(release):
    row = CLIENTS["java", client_line(release)]
    spans = printed(release)
    if row.negotiates:
        assert {api: spans[api] for api in row.apis} == dict(row.apis)
    else:  # one version of each: the newest the jar knows, which it sends without asking the broker
        assert {api: (spans[api][1], spans[api][1]) for api in row.apis} == dict(row.apis)
        assert "ApiVersions" not in row.apis or spans["ApiVersions"][1] == 0
