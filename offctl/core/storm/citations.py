"""The Storm source a behaviour follows, cited: a file of apache/storm at its release tags, and the citations
the messages outside the behaviour modules name, each named once."""

from __future__ import annotations

import functools
from dataclasses import dataclass

# --- what a release does with a stored position outside the log: one structured answer --------------------------

STORM_KAFKA_DIR = {
    False: "external/storm-kafka/src/jvm/storm/kafka/",  # before 1.0
    True: "external/storm-kafka/src/jvm/org/apache/storm/kafka/",
}  # 1.0 on


CLIENT_DIR = "external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/"


@dataclass(frozen=True, slots=True)
class Citation:
    """The Storm source a behaviour follows: a class (and member) of a file of apache/storm, at release tags."""

    member: str  # "PartitionManager.fill", "KafkaSpoutConfig"
    file: str  # the file's path in apache/storm at the first tag
    tags: tuple[str, ...]  # the release tags read

    def __str__(self) -> str:
        return f"{self.member}, {self.tag_text}"

    @property
    def tag_text(self) -> str:
        return " and ".join(self.tags)


@functools.cache  # one immutable Citation per (member, tag, file): a fleet cites the same few per partition
def storm_kafka_citation(member: str, tag: str, file: str | None = None) -> Citation:
    """A file of storm-kafka at `tag`: under storm/kafka/ before 1.0, org/apache/storm/kafka/ from 1.0 on."""
    name = file or member.split(".")[0]
    return Citation(member, f"{STORM_KAFKA_DIR[not tag.startswith('v0.')]}{name}.java", (tag,))


@functools.cache
def client_citation(member: str, *tags: str, file: str | None = None) -> Citation:
    """A file of storm-kafka-client's spout package at `tags`."""
    return Citation(member, f"{CLIENT_DIR}{file or member.split('.')[0]}.java", tags)


# The Storm source the messages outside this module cite, named once (each read at its tags in apache/storm):
# where a storm-kafka-client spout seeks on its first poll of a partition, and whether a commit is its topology's
DO_SEEK = client_citation("KafkaSpout.doSeek", "v2.8.8")


DO_SEEK_OURS = client_citation(
    "KafkaSpout.doSeek and CommitMetadataManager.isOffsetCommittedByThisTopology", "v2.8.8", file="KafkaSpout"
)


DO_SEEK_BOTH_LINES = client_citation("KafkaSpout.doSeek", "v1.2.4", "v2.8.8")


# when AT_LEAST_ONCE commits: only partitions with newly acked offsets
COMMIT_ACKED = client_citation("KafkaSpout.commitOffsetsForAckedTuples", "v1.2.4", "v2.8.8", file="KafkaSpout")


# where a storm-kafka-client Trident spout starts a partition without a state
TRIDENT_CLIENT_SEEK = client_citation(
    "KafkaTridentSpoutEmitter.seek", "v2.8.8", file="trident/KafkaTridentSpoutEmitter"
)


# where storm-kafka starts a partition without a record (startOffsetTime from 0.10.0 on, 0.9.x the log end without
# forceFromStart), its spout and its Trident emitter
NO_RECORD = Citation(
    "the PartitionManager constructor", f"{STORM_KAFKA_DIR[False]}PartitionManager.java", ("v0.9.6", "v1.2.4")
)


NO_TRIDENT_STATE = Citation(
    "TridentKafkaEmitter.doEmitNewPartitionBatch",
    f"{STORM_KAFKA_DIR[False]}trident/TridentKafkaEmitter.java",
    ("v0.9.6", "v1.2.4"),
)
