"""The catalogue of finding codes (spec section 2): severity, when it fires, and what to do."""

from __future__ import annotations

from dataclasses import dataclass

from offctl.core.records.frozen import builder
from offctl.core.records.model import ConsumerKey, Finding, Severity


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
        Code(
            "MALFORMED_RECORD",
            _E,
            "the spout cannot use the record: PartitionManager cannot read a string `topology.id` and an "
            "integer `offset` from it as json-simple parses it (not JSON, not an object, no topology object, "
            "no offset, an offset that is not a long); JStorm's spout, one without a long `offset` (its only "
            "field read); it starts that partition as if it had no record",
            "The message says where the spout starts instead (storm-kafka 0.9.x: the log end unless "
            "forceFromStart; 0.10 on: startOffsetTime; JStorm: the log end + 1, or the log start + 1 with "
            "kafka.fetch.from.beginning). If that is wrong, with the topology stopped, `offctl "
            "reset --spout ID --partitions N --to offset --offset X` rewrites the record's offset (a JSON "
            "object), or delete the node.",
        ),
        Code(
            "INCONSISTENT_RECORD",
            _W,
            "a usable record says what Storm would not write, in fields the spout does not read: `partition` "
            "differs from the node name or is missing, no `topic`, a malformed `broker` or `topology.name` "
            "(JStorm: a `topology` that is not its name, a string), bytes that are not UTF-8",
            "The spout uses the offset for the partition its node stands for, and overwrites the record on "
            "its next commit. A record no spout rewrites was written by a tool: check who wrote it.",
        ),
        Code(
            "AMBIGUOUS_SPOUT_ID",
            _W,
            "`<root>/a/b/partition_N` can be spout id `a` reading topic `b` (wildcard layout) or spout id "
            "`a/b`, and no record in `b/` names topic `b` (they name no topic, or another)",
            "offctl follows the path, as PartitionManager does: shown as spout `a`, topic `b`, and a record "
            "naming another topic is also `TOPIC_MISMATCH`. If the id is `a/b`, inspect it with `--spout a/b`.",
        ),
        Code(
            "TOPIC_MISMATCH",
            _E,
            "a record names another topic than the one its offset is applied to: the user's `--topic`, its "
            "`<topic>/` folder (JStorm's spout: the topic of its path), or the topic most records of the spout id "
            "name; or the records name several "
            "topics equally often (a tie, reported as one finding)",
            "storm-kafka never checks the stored topic: the offset is applied to the partition of the topic "
            "the spout reads, and lag is computed there; nor does JStorm's. Check which topologies use this "
            "spoutConfig.id (JStorm: kafka.client.id), "
            "then `offctl reset --spout ID --topic T` the partitions of the right topic. For a tie, give "
            "`--topic`.",
        ),
        Code(
            "ID_COLLISION",
            _E,
            "records under one spout id name more than one topology (JStorm: under one topic and "
            "kafka.client.id, whose default `jstorm` every spout shares that sets none), or one Kafka group "
            "carries commits from more than one topology name",
            "Two topologies overwrite each other's progress. Give each its own spoutConfig.id "
            "(or group.id, or JStorm's kafka.client.id), then `offctl reset` (or `offctl restore` a backup of) the "
            "one that moved.",
        ),
        Code(
            "OFFSET_BELOW_LOG_START",
            _E,
            "the offset the spout resumes from is below the log start: the messages in between are gone; the "
            "message counts them and names their offsets, as the partition's `lost_to_retention` does",
            "Retention deleted messages the spout had not processed; the message says where the spout goes "
            "next under the release given (`--storm-kafka-release`; JStorm's spout fails every fetch of it for "
            "good). Decide between earliest (keep what is "
            "left) and a replay source, then, with the topology stopped, `offctl reset ... --to earliest`.",
        ),
        Code(
            "OFFSET_ABOVE_LOG_END",
            _E,
            "the offset the spout resumes from is above the log end: topic recreated, truncated, or unclean "
            "leader election",
            "storm-kafka 1.x emits nothing from the partition until the log end reaches the stored offset "
            "(0.9.3-0.9.7 jump to the log end, 0.10 to the log start; JStorm's spout waits too); the message "
            "says which. If the topic "
            "was recreated, `offctl reset ... --to earliest` (topology stopped) to read it from its start.",
        ),
        Code(
            "UNKNOWN_TOPIC",
            _E,
            "the topic the offset is applied to does not exist",
            "The topic was deleted or renamed. Stop the topology or point it at the right topic; "
            "delete the stale records once nothing uses them.",
        ),
        Code(
            "UNKNOWN_PARTITION",
            _W,
            "the partition the offset is applied to does not exist in the topic",
            "The topic has fewer partitions than when this was committed (it was recreated); the "
            "record is unused and can be removed once the topology is stopped.",
        ),
        Code(
            "UNREAD_NODE",
            _W,
            "a node below a spout id that storm-kafka never reads: not named `partition_N` (N a plain int up to "
            "2147483647, as Partition.getId() writes it), e.g. `partition_01`, or deeper than offctl looks; below a "
            "JStorm spout's `<topic>/<client id>/`, a node not named by its partition number alone, e.g. `01`",
            "Written by a tool or by hand: the spout ignores it. Check what wrote it; delete it once nothing needs it.",
        ),
        Code(
            "UNREAD_PARTITION",
            _I,
            "a record of a partition the spout does not read (outside the `--static-partitions` declared for it: "
            "StaticHosts, or JStorm's kafka.broker.partitions)",
            "A spout on StaticHosts reads only its configured partitions; this record is not used. Harmless, "
            "unless the declaration is wrong.",
        ),
        Code(
            "MISSING_PARTITION",
            _W,
            "a partition the spout reads has no committed offset: every partition of its topic, or those "
            "declared with `--static-partitions` (a Trident partition whose only state is a batch at the "
            "coordinator's currtx too, which an opaque spout drops, where a transactional one's replay of it begins "
            "where the opaque spout starts)",
            "The spout will start this partition where the message says (or has not yet committed a new "
            "partition). Expected right after partitions were added. A spout on StaticHosts reads only its "
            "configured partitions, a JStorm spout partitions 0 to kafka.broker.partitions - 1 (default 1): "
            "declare them with `--static-partitions ID=LIST`.",
        ),
        Code(
            "IGNORED_ZERO_OFFSET",
            _W,
            "a ZooKeeper record holds offset <= 0: PartitionManager replaces it at start-up, so the spout "
            "replays from where its start-up rule puts it (the lag counts from there)",
            "storm-kafka never honours a stored 0 (`committed <= 0` in PartitionManager, every release). To "
            "replay from the start use `offctl reset --to earliest` when the log starts above 0, or the "
            "spout's startOffsetTime.",
        ),
        Code(
            "FOREIGN_COMMIT",
            _W,
            "a Kafka commit has no Storm metadata (a tool wrote it, or the broker dropped it) or names another "
            "topology than the rest of the group; the message says whether the spout resumes from it",
            "UNCOMMITTED_* first-poll strategies (the default) resume from any commit; EARLIEST and LATEST "
            "ignore one that is not their topology's. If it should count, `offctl reset --group G --to shift "
            "--by 0 --topology-id STORM_ID` rewrites only its metadata.",
        ),
        Code(
            "CRASHING_COMMIT",
            _E,
            "a Kafka commit whose Storm metadata names no topology id (a JSON `null`, or an object without "
            "`topologyId` or with a null one): storm-kafka-client 1.0.6 and later throw NullPointerException in "
            "the spout's activate(), whatever the first-poll strategy, and the worker dies and restarts into it",
            "Until the commit is rewritten the spout task given this partition reads nothing. Rewrite its "
            "metadata for the running topology, keeping the offset: `offctl reset --group G --to shift --by 0 "
            "--topology-id STORM_ID` (a dry run first), then start or let Storm restart the topology.",
        ),
        Code(
            "TRIDENT_REPLAY",
            _W,
            "a Trident state holds a batch at or past the txid its coordinator emits first (currtx), where it "
            "does not begin where the spout otherwise resumes: an opaque spout resumes after the highest other txid "
            "(or, with none, as with no state), a transactional one replays that batch (storm-kafka-client 2.x: "
            "with one poll, which may come back empty and leave it unemitted), and the stored bytes do not say "
            "which spout wrote them",
            "offctl cannot tell where this partition resumes: an opaque spout (OpaqueTridentKafkaSpout, "
            "KafkaTridentSpoutOpaque, the usual) resumes where the message says first, a transactional one "
            "(TransactionalTridentKafkaSpout, KafkaTridentSpoutTransactional) replays the stored batch from its "
            "first offset. Such a batch is left when a worker died between a batch and its commit's ack. A `reset "
            "--trident` rewrites it too, to an empty batch at the target, so that both go on from there (a partition "
            "with no state below currtx moves a transactional spout only).",
        ),
        Code(
            "IGNORED_TRIDENT_STATE",
            _W,
            "a storm-kafka-client Trident spout with firstPollOffsetStrategy EARLIEST or LATEST ignores its "
            "stored state: on every executor start (1.x), or on a new deployment (2.x and 3.x: the state's "
            "topologyId is not the running topology's)",
            "The spout starts the partition from the log start (EARLIEST) or end (LATEST) and the stored position "
            "is lost. To resume from the state, use UNCOMMITTED_EARLIEST or UNCOMMITTED_LATEST.",
        ),
        Code(
            "LEGACY_COMMIT_METADATA",
            _I,
            "a Kafka commit written by storm-kafka-client 1.0.0-1.0.5 or 1.1.0-1.1.1 "
            "(`{topic-partition=..., thread='...'}`): it holds the last offset processed, not the next",
            "Those releases resume at committed + 1; later ones do not recognise the metadata and, with "
            "UNCOMMITTED_*, resume at the committed offset (processing it again). Nothing to do unless "
            "upgrading with EARLIEST or LATEST, which ignore it.",
        ),
        Code(
            "GROUP_TYPE_CONFLICT",
            _E,
            "the spout's group id is also a group the broker will not take the spout's commits for: a share group "
            "(KIP-932), or a classic or KIP-848 consumer group with members joined. storm-kafka-client assigns its "
            "partitions (never a member) and commits with no generation and no member id, which Kafka accepts "
            "only while the group is empty",
            "Another application uses this group.id: while its members are joined the spout's commits fail "
            "(UNKNOWN_MEMBER_ID) and theirs overwrite the spout's offsets. Give the spout (or the other "
            "application) its own group.id; the message names the members' type and protocol. A spout of "
            "storm-kafka-client 1.0.0-1.0.5 or 1.1.0-1.1.1 subscribes itself: pass `--storm-kafka-client-release`.",
        ),
        Code(
            "COMMIT_EXPIRY_RISK",
            _W,
            "a storm-kafka-client group under AT_LEAST_ONCE (1.0.6+, 1.1.2+: no members, it assigns its partitions) "
            "whose commit of a partition may expire within `--commit-expiry-horizon` (default 24 h) or already "
            "may have: the broker deletes it `offsets.retention.minutes` after its last commit, and the spout "
            "commits a partition only when it acks a new message there. The last commit is estimated from below "
            "by the timestamp of the message before the committed offset (serve: also when it saw the offset move)",
            "Nothing is lost while the topology runs; its next start finds no commit and seeks by its first-poll "
            "strategy (the message says where and how many messages). A message acked on the partition renews "
            "the commit; so does a longer offsets.retention.minutes on the brokers. Keep the committed offset the "
            "message names: if it has expired before a restart, put it back with the topology stopped (`offctl "
            "reset --group G --topic T --partitions N --to offset --offset X --topology-id STORM_ID`).",
        ),
        Code(
            "LAG_BEYOND_MAX_OFFSET_BEHIND",
            _W,
            "the offset PartitionManager compares with at start-up (the log end in 0.9.x unless "
            "forceFromStart; startOffsetTime from 0.10) is more than maxOffsetBehind ahead of the stored one",
            "On restart the spout skips to that offset; while it runs, failed tuples this far behind are not "
            "retried. Scale the topology or raise maxOffsetBehind before restarting it.",
        ),
        Code(
            "RETENTION_RISK",
            _W,
            "a lagging spout resumes at a message the broker may delete soon: its timestamp plus the topic's "
            "retention.ms (the broker's, else `--topic-retention`) is within `--retention-horizon` where given, else "
            "within a quarter of that retention.ms and at most 6 h (a spout a minute behind on a topic kept 6 h does "
            "not warn; one 4h30m or more behind does), or, in serve and watch, the spout falls behind so that at the "
            "pace of their window the message is deleted within 6 h (docs/contract.md#retention-risk). Kafka deletes "
            "a segment once its largest timestamp is more than retention.ms old, where cleanup.policy "
            "has `delete` (UnifiedLog.deleteRetentionMsBreachedSegments and deleteOldSegments, apache/kafka 3.8.0), "
            "so that is the earliest deletion: an estimate (offctl/core/time/retention.py says why). Only a partition "
            "with lag > 0 is at risk",
            "The message says how long is left and what the spout's release does once the message is deleted (jump "
            "and lose messages, or fail fetching). Give the topology capacity to catch up, or raise the topic's "
            "retention.ms (kafka-configs --alter) until it has; decide before the deadline, not after.",
        ),
        Code(
            "RETENTION_EXCEEDED",
            _E,
            "a lagging spout resumes at a message older than the topic's retention.ms: the broker may delete it "
            "at its next retention check (every log.retention.check.interval.ms, 5 min by default), once the rest "
            "of its log segment is as old",
            "Raise the topic's retention.ms now (kafka-configs --alter) to keep what is left, or plan the "
            "replay: once deleted, the spout does what the message says (docs/runbooks/out-of-range.md).",
        ),
        Code(
            "OPEN_TRANSACTION",
            _W,
            "a spout that reads committed (`--isolation-level read_committed`) has read up to the partition's last "
            "stable offset, and the transaction open there (the first record at that offset) has been open for a "
            "minute or more, kafka-clients' default transaction.timeout.ms: everything written after its first "
            "record is held back until its producer commits or aborts it (KIP-98). The message gives its age",
            "Find the producer: `kafka-transactions.sh --bootstrap-server B describe-producers --topic T "
            "--partition N` names its producer id and the transaction's start. A producer that died is aborted by "
            "the coordinator once its transaction.timeout.ms passes; a live one that does not commit is the "
            "application's to fix. Resetting the spout past the transaction does not help: it would wait there too, "
            "and skip the transaction's records once committed.",
        ),
        Code(
            "HANGING_TRANSACTION",
            _E,
            "as OPEN_TRANSACTION, but the transaction has been open longer than the broker's "
            "transaction.max.timeout.ms (default 15 min): no producer may keep one open so long and the coordinator "
            "aborts those whose timeout passed, so this one hangs (KIP-664) and will not end on its own",
            "Confirm it: `kafka-transactions.sh --bootstrap-server B find-hanging --broker-id ID` (the partition's "
            "leader). Then end it: `kafka-transactions.sh --bootstrap-server B abort --topic T --partition N "
            "--start-offset OFFSET` with the last stable offset the message names (Kafka 3.0+). The spout moves on as "
            "soon as it is aborted.",
        ),
        Code(
            "BROKER_INCOMPATIBLE",
            _E,
            "the brokers (or, with `--kafka-release`, the Kafka release named: a what-if) do not accept a request "
            "the spout's Kafka client sends, at any version it can send: storm-kafka's SimpleConsumer and "
            "kafka-clients before 0.10.2 send one version of each request, and Kafka 4.0 removed those older than "
            "Kafka 2.1's (KIP-896); kafka-clients 4.x sends none that Kafka before 2.1 accepts. The message names "
            "the client, each request refused and the brokers refusing it. The spout cannot fetch or commit there",
            "Before the brokers run that release, move the spout to a Storm release whose Kafka client both sides "
            "speak (docs/runbooks/migrate-to-storm-kafka-client.md: `offctl migrate` moves storm-kafka's offsets "
            "to storm-kafka-client) or ship a newer kafka-clients with the topology (`--kafka-clients-release` says "
            "what offctl judges). A spout already refused reads nothing: its lag grows until it is moved or the "
            "brokers are rolled back.",
        ),
        Code(
            "HIGH_LAG",
            _W,
            "lag >= the threshold the user gave",
            "The spout is falling behind: check the topology's capacity, failed tuples and "
            "max.spout.pending. If the committed offset does not move, the spout is stuck on one message: "
            "`offctl peek` shows it (and `--save` keeps it) before `offctl reset ... --to shift --by 1`, whose "
            "plan says what it skips (docs/runbooks/poison-message.md).",
        ),
        Code(
            "CONSUMER_NOT_FOUND",
            _E,
            "a `--spout` or `--group` named on the command line has no records",
            "Check the name (and --zk-root): a typo in a runbook reads nothing. A spout that never "
            "committed has no records either.",
        ),
        Code(
            "STALE_TOPOLOGY",
            _I,
            "the record's topology id is not running (needs Storm's root)",
            "Offsets of a stopped topology: harmless if it is gone for good, otherwise the next "
            "deployment resumes from them (storm-kafka unless ignoreZkOffsets).",
        ),
        Code(
            "STALE_BROKER",
            _I,
            "the broker host/port in a record is not the partition's current leader",
            "Informational: storm-kafka rewrites it on its next commit. A record that never updates "
            "means the spout for this partition is not running.",
        ),
    )
}


def finding(
    code: str,
    key: ConsumerKey,
    message: str,
    *,
    topic: str | None = None,
    partition: int | None = None,
    path: str | None = None,
    hint: str | None = None,
    resumes=None,
) -> Finding:
    """Build a finding of a catalogued code, with the catalogue's severity and default hint (`resumes`: where the
    spout starts the partition it names, outcomes.Resumption)."""
    entry = CATALOGUE[code]
    if resumes is None:
        return new_finding(code, entry.severity, key, topic, partition, path, message, hint or entry.hint)
    return new_finding(code, entry.severity, key, topic, partition, path, message, hint or entry.hint, resumes)


new_finding = builder(
    Finding
)  # Finding(...), made once or twice per partition of a broken fleet (offctl.core.records.frozen)
