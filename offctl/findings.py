"""The catalogue of finding codes (spec section 2): severity, when it fires, and what to do."""

from __future__ import annotations

from dataclasses import dataclass

from offctl.model import ConsumerKey, Finding, Severity


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    severity: Severity
    when: str
    hint: str


_E, _W, _I = Severity.ERROR, Severity.WARNING, Severity.INFO

CATALOGUE: dict[str, Code] = {
    c.code: c
    for c in (
        Code("MALFORMED_RECORD", _E,
             "node data is not JSON, lacks offset/topic/partition, has wrong types, or `partition` "
             "disagrees with the node name",
             "The spout cannot use this record and will start from startOffsetTime. With the topology "
             "stopped, `offctl reset --spout ID --partitions N --to offset --offset X` rewrites only its "
             "offset, if the data is a JSON object; otherwise delete the node."),
        Code("TOPIC_MISMATCH", _E,
             "a record's topic differs from the expected topic, from its `<topic>/` folder, or from the "
             "topic most records of the same spout id name",
             "storm-kafka never checks the stored topic: the offset is applied to the wrong topic. Check "
             "which topologies use this spoutConfig.id, then `offctl reset --spout ID --topic T` the "
             "partitions of the right topic."),
        Code("ID_COLLISION", _E,
             "records under one spout id name more than one topology, or one Kafka group carries "
             "commits from more than one topology name",
             "Two topologies overwrite each other's progress. Give each its own spoutConfig.id "
             "(or group.id), then `offctl reset` (or `offctl restore` a backup of) the one that moved."),
        Code("OFFSET_BELOW_LOG_START", _E,
             "committed < log start offset: the messages in between are gone",
             "Retention deleted messages the spout had not processed; on its next fetch the spout jumps "
             "and drops its failed tuples. Decide between earliest (keep what is left) and a replay "
             "source, then, with the topology stopped, `offctl reset ... --to earliest`."),
        Code("OFFSET_ABOVE_LOG_END", _E,
             "committed > log end offset: topic recreated, truncated, or unclean leader election",
             "The spout will jump on its next fetch (to earliest or latest, by version). If the topic "
             "was recreated, `offctl reset ... --to earliest` (topology stopped) to read the new topic "
             "from its start."),
        Code("UNKNOWN_TOPIC", _E,
             "the record's topic does not exist",
             "The topic was deleted or renamed. Stop the topology or point it at the right topic; "
             "delete the stale records once nothing uses them."),
        Code("UNKNOWN_PARTITION", _W,
             "the record's partition does not exist in the topic",
             "The topic has fewer partitions than when this was committed (it was recreated); the "
             "record is unused and can be removed once the topology is stopped."),
        Code("MISSING_PARTITION", _W,
             "a partition of the topic has no committed record for a consumer that has others",
             "The spout will start this partition at startOffsetTime (or has not yet committed a new "
             "partition). Expected right after partitions were added; otherwise check the spout's "
             "assignment."),
        Code("IGNORED_ZERO_OFFSET", _W,
             "a ZooKeeper record holds offset <= 0: the spout replaces it with startOffsetTime",
             "storm-kafka never honours a stored 0. To replay from the start use `offctl reset --to "
             "earliest` when the log starts above 0, or the spout's startOffsetTime."),
        Code("FOREIGN_COMMIT", _W,
             "a Kafka commit has no Storm metadata or names another topology than the rest of the group",
             "Spouts with the EARLIEST or LATEST first-poll strategy ignore this commit; UNCOMMITTED_* "
             "honour it. If it should count, `offctl reset --group G --to shift --by 0 --topology-id "
             "STORM_ID` rewrites only its metadata."),
        Code("LAG_BEYOND_MAX_OFFSET_BEHIND", _W,
             "lag > the maxOffsetBehind the user gave",
             "On restart the spout jumps to startOffsetTime and failed tuples this far behind are not "
             "retried. Scale the topology or raise maxOffsetBehind before restarting it."),
        Code("HIGH_LAG", _W,
             "lag >= the threshold the user gave",
             "The spout is falling behind: check the topology's capacity, failed tuples and "
             "max.spout.pending."),
        Code("STALE_TOPOLOGY", _I,
             "the record's topology id is not running (needs Storm's root)",
             "Offsets of a stopped topology: harmless if it is gone for good, otherwise the next "
             "deployment resumes from them (storm-kafka unless ignoreZkOffsets)."),
        Code("STALE_BROKER", _I,
             "the broker host/port in a record is not the partition's current leader",
             "Informational: storm-kafka rewrites it on its next commit. A record that never updates "
             "means the spout for this partition is not running."),
    )
}


def finding(code: str, key: ConsumerKey, message: str, *, topic: str | None = None,
            partition: int | None = None, path: str | None = None, hint: str | None = None) -> Finding:
    """Build a finding of a catalogued code, with the catalogue's severity and default hint."""
    entry = CATALOGUE[code]
    return Finding(code=code, severity=entry.severity, key=key, topic=topic, partition=partition,
                   path=path, message=message, hint=hint or entry.hint)
