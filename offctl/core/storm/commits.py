"""What a storm-kafka-client spout's commit means under its ProcessingGuarantee, and when it commits a
partition it reads nothing new from. Pure: no server, no clock."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from offctl.core.storm.releases import LEGACY_RELEASES, Guarantee, SpoutProfile, StormKafkaClient

# --- storm-kafka-client ProcessingGuarantee: what a commit means ------------------------------------------


@dataclass(frozen=True, slots=True)
class CommitBehaviour:
    """What a storm-kafka-client spout's committed offset means under its ProcessingGuarantee, in words."""

    guarantee: str  # AT_LEAST_ONCE, AT_MOST_ONCE, NO_GUARANTEE
    committed: str  # what the committed offset is
    commits: str  # when and how the spout commits
    lag: str  # what log end - committed counts
    restart: str  # what a restart, a crash or a reset replays or loses
    out_of_range: str  # where the consumer goes when the commit is outside the log
    sources: tuple[str, ...]  # file@tag, under external/storm-kafka-client/src/main/java/org/apache/storm/kafka/spout/


def _cite(*files: str, tags: tuple[str, ...] = ("v1.2.4", "v2.8.8")) -> tuple[str, ...]:
    return tuple(f"{f}@{t}" for t in tags for f in files)


def _period(profile: SpoutProfile) -> str:
    return f"offset.commit.period.ms ({profile.commit_period_ms} ms)"


def commit_behaviour(profile: SpoutProfile) -> CommitBehaviour:
    """What the committed offset of a storm-kafka-client group means under the profile's release and
    ProcessingGuarantee (KafkaSpout.java and KafkaSpoutConfig.java at the tags named in `sources`)."""
    g = profile.guarantee
    if profile.client is StormKafkaClient.LEGACY:
        return CommitBehaviour(
            g.value,
            committed="the last offset acked in order (KafkaSpoutMessageId offsets); the spout resumes at "
            "committed + 1",
            commits=f"commitSync of the acked offsets every {_period(profile)}, on partition revocation, "
            f"deactivate and close; no ProcessingGuarantee setting in {LEGACY_RELEASES}",
            lag="messages not yet acked in order: not polled, in flight, failed and waiting for a retry, and "
            "those acked since the last commit (up to one period)",
            restart="replays from committed + 1: tuples in flight and those acked since the last commit are "
            "processed again; nothing is lost",
            out_of_range="the consumer's auto.offset.reset, which the spout does not set: Kafka's default "
            "'latest' unless the topology sets it",
            sources=_cite("KafkaSpout.java", "KafkaSpoutConfig.java", tags=("v1.1.1",)),
        )
    if g is Guarantee.AT_MOST_ONCE:
        return CommitBehaviour(
            g.value,
            committed="the consumer's position after the last poll: the next offset to poll, not the next to process",
            commits="commitSync of every assigned partition's position right after each poll, before its records "
            "are emitted; offset.commit.period.ms is not used (no commit timer)",
            lag="messages not yet polled; messages polled but not yet processed are not counted",
            restart="resumes at the commit: messages polled but not processed when the spout stopped (up to one "
            "poll, max.poll.records) are never processed, and failed tuples are not retried; nothing is "
            "processed twice",
            out_of_range="the consumer's auto.offset.reset: Kafka's default 'latest' unless the topology sets it "
            "(the spout warns about any but 'latest' or 'none')",
            sources=_cite("KafkaSpout.java", "KafkaSpoutConfig.java"),
        )
    if g is Guarantee.NO_GUARANTEE:
        return CommitBehaviour(
            g.value,
            committed="the consumer's position at the last commit: the next offset to poll then, whatever was "
            "processed",
            commits=f"commitAsync of every assigned partition's position every {_period(profile)}, unacknowledged "
            f"(a failed commit is not retried); none on deactivate or close",
            lag="messages not yet polled at the last commit, which is up to one period old",
            restart="resumes at the last periodic commit: messages polled since are processed again, those "
            "polled before it but not yet processed are never processed; a message may be processed 0, "
            "1 or more times",
            out_of_range="the consumer's auto.offset.reset: Kafka's default 'latest' unless the topology sets it",
            sources=_cite("KafkaSpout.java", "KafkaSpoutConfig.java"),
        )
    return CommitBehaviour(
        g.value,
        committed="the first offset not yet acked in order (OffsetManager.findNextCommitOffset): the next offset "
        "to process",
        commits=f"commitSync of the acked offsets every {_period(profile)}, on partition revocation, deactivate "
        f"and close (commitOffsetsForAckedTuples); at most maxUncommittedOffsets polled beyond it",
        lag="messages not yet acked in order: not polled, in flight, failed and waiting for a retry, and those "
        "acked since the last commit (up to one period)",
        restart="replays from the commit: tuples in flight and those acked since the last commit are processed "
        "again (duplicates downstream); nothing is lost",
        out_of_range="the consumer's auto.offset.reset: 'earliest' unless the topology sets it (KafkaSpoutConfig "
        "sets it under AT_LEAST_ONCE)",
        sources=_cite("KafkaSpout.java", "KafkaSpoutConfig.java", "internal/OffsetManager.java"),
    )


# --- storm-kafka-client: its group's members, and what keeps an idle partition's commit fresh ----------------------


def subscribes(profile: SpoutProfile) -> bool:
    """Whether the spout's KafkaConsumer subscribes, so its group has members (the spout's own executors, classic
    protocol) while the topology runs: storm-kafka-client 1.0.0-1.0.5 call kafkaConsumer.subscribe
    (KafkaSpout.subscribeKafkaConsumer, v1.0.5) and 1.1.0-1.1.1 default to NamedSubscription/PatternSubscription,
    which subscribe (KafkaSpoutConfig.Builder, v1.1.1). Later releases assign (ManualPartitionSubscription,
    v1.0.6, v1.1.2, v1.2.4; TopicAssigner.assignPartitions, v2.0.0 to v2.8.8) and commit with no generation."""
    return profile.client is StormKafkaClient.LEGACY


class IdleCommit(str, Enum):
    """What becomes of an idle partition's commit while a storm-kafka-client spout runs (KafkaSpout.java, v1.2.4
    and v2.8.8; 3.x unchanged at master 73da988d9; the legacy line: subscribes)."""

    AGES = "ages"  # AT_LEAST_ONCE: commitOffsetsForAckedTuples commits only partitions with a newly acked offset
    MEMBERS = "members"  # the group has members while the spout runs (subscribes): timed from when it empties
    EVERY_POLL = "every poll"  # AT_MOST_ONCE: commitSync of every assigned partition's position after each poll
    EVERY_PERIOD = "every period"  # NO_GUARANTEE: commitAsync of every assigned partition's position on the timer


def idle_commit(profile: SpoutProfile) -> IdleCommit:
    """Whether an idle partition's commit ages while the spout runs (AGES) or what keeps it from expiring: a group
    with members (subscribes: KafkaSpout.subscribeKafkaConsumer, v1.0.5; NamedSubscription, v1.1.1), AT_MOST_ONCE's
    commit after every poll (KafkaSpout.pollKafkaBroker, v1.2.4 and v2.8.8), NO_GUARANTEE's commit of every
    assigned partition on the commit timer (KafkaSpout.nextTuple, v1.2.4 and v2.8.8). Under AT_LEAST_ONCE
    KafkaSpout.commitOffsetsForAckedTuples commits only the partitions OffsetManager.findNextCommitOffset finds a
    newly acked offset for (v1.2.4 and v2.8.8)."""
    if subscribes(profile):
        return IdleCommit.MEMBERS
    if profile.guarantee is Guarantee.AT_MOST_ONCE:
        return IdleCommit.EVERY_POLL
    if profile.guarantee is Guarantee.NO_GUARANTEE:
        return IdleCommit.EVERY_PERIOD
    return IdleCommit.AGES
