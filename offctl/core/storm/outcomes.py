"""What a release does with a stored position outside the log, or at start-up: one structured answer (an
Outcome: where the spout lands, the sentence, the citation), and where a spout resumes a partition (a Resumption).
Pure: no server, no clock."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from offctl.core.storm import jstorm
from offctl.core.storm.citations import DO_SEEK_BOTH_LINES, Citation, client_citation, storm_kafka_citation
from offctl.core.storm.releases import (
    EARLIEST_TIME,
    LATEST_TIME,
    Guarantee,
    Library,
    Position,
    SpoutProfile,
    StormKafka,
    StormKafkaClient,
)
from offctl.core.storm.start import COMMIT_CRASH, _at_time, configured_start, first_poll_start, time_after


class Lands(str, Enum):
    """Where a spout goes when it does not resume from its stored position."""

    LOG_START = "log start"
    LOG_END = "log end"
    TIME = "time"  # the offset Kafka answers for a timestamp startOffsetTime (from segment mtimes: _time_answer)
    FAILS = "fails fetching"  # every fetch fails: the partition emits nothing (or every batch fails)
    WAITS = "waits"  # emits nothing until the log end reaches the stored offset
    CRASHES = "crashes"  # the spout throws before it emits: the worker dies, and restarts into the same position


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a release does with a stored position, decided once per profile, library and case: where the spout
    lands, the Storm source that says so, and the sentence (`say(position, log_start, log_end)`: a clause to
    follow a semicolon; the log offsets None where not known)."""

    lands: Lands
    citation: Citation
    say: Callable[[int, int | None, int | None], str] = field(compare=False, repr=False)

    def sentence(self, position: int, log_start: int | None, log_end: int | None) -> str:
        return self.say(position, log_start, log_end)


class Resumes(str, Enum):
    """Where the spout fetches a partition first, as the JSON's `resumes` names it (docs/contract.md)."""

    STORED = "stored"  # the stored offset
    STORED_PLUS_1 = "stored+1"  # the stored offset + 1 (storm-kafka-client 1.0.0-1.0.5, 1.1.0-1.1.1)
    LOG_START = "log-start"
    LOG_END = "log-end"
    TIME = "time"  # the offset Kafka answers for a timestamp startOffsetTime (from segment mtimes: _time_answer)
    WAITS = "waits-until-log-end-reaches"  # fetches the stored offset, past the log end: nothing until it is reached
    FETCH_FAILS = "fetch-fails"  # every fetch fails: nothing is emitted
    CRASHES = "crashes"  # the spout's start-up (or its Trident emitter) throws: the worker dies, and restarts into it


_RESUMES = {
    Lands.LOG_START: Resumes.LOG_START,
    Lands.LOG_END: Resumes.LOG_END,
    Lands.TIME: Resumes.TIME,
    Lands.WAITS: Resumes.WAITS,
    Lands.FAILS: Resumes.FETCH_FAILS,
    Lands.CRASHES: Resumes.CRASHES,
}


@dataclass(frozen=True, slots=True)
class Resumption:
    """Where the spout will fetch a partition first (`at`: None where it cannot be told, or nothing is fetched),
    what kind of place that is, and the Storm source that says so."""

    at: int | None
    kind: Resumes
    citation: Citation

    @classmethod
    def landing(
        cls,
        lands: Lands,
        citation: Citation,
        position: int | None,
        log_start: int | None,
        log_end: int | None,
        at: int | None = None,
    ) -> Resumption:
        """Where an Outcome's landing puts a spout whose stored position is `position`: the log start or end, the
        stored position it waits at, or none (a time, failing fetches). `at`: the offset where already known."""
        kind = _RESUMES[lands]
        if at is None:
            at = {Resumes.LOG_START: log_start, Resumes.LOG_END: log_end, Resumes.WAITS: position}.get(kind)
        return cls(at, kind, citation)

    def citation_text(self) -> str:
        """`Member (path at tag[ and tag])`, as the JSON's `resumes_citation` gives it."""
        return f"{self.citation.member} ({self.citation.file} at {self.citation.tag_text})"


def time_lands(profile: SpoutProfile, now_ms: int | None = None) -> Lands:
    """Where startOffsetTime puts the spout (_at_time): a timestamp after `now_ms` at the log end."""
    if time_after(profile, now_ms):
        return Lands.LOG_END
    return {EARLIEST_TIME: Lands.LOG_START, LATEST_TIME: Lands.LOG_END}.get(profile.start_offset_time, Lands.TIME)


def _configured_lands(profile: SpoutProfile, now_ms: int | None = None) -> Lands:
    """Where `current` puts the spout (configured_start)."""
    if profile.storm_kafka.before_0_10 and not profile.ignore_zk_offsets:
        return Lands.LOG_END
    return time_lands(profile, now_ms)


def _stuck(committed: int, log_end: int | None) -> str:
    return (
        f"the spout emits nothing from this partition until the log end reaches {committed}; the "
        f"{committed - log_end} messages that arrive before then are never emitted"
    )


def out_of_range_outcome(profile: SpoutProfile, library: Library, side: str, trident: bool = False) -> Outcome:
    """What the spout does with a stored position outside the log on `side` ("below" the log start, "above" the
    log end), by its library and release. storm-kafka: how PartitionManager.fill() leaves the offset with
    useStartOffsetTimeIfOffsetOutOfRange (without it KafkaUtils.fetchMessages throws FailedFetchException on every
    fetch). WAITS: _emittedToOffset does not move, every fetch is out of range again, and the partition emits
    nothing until the log end reaches the offset."""
    if library is Library.STORM_KAFKA_TRIDENT:
        return _trident_out_of_range(profile)
    if library is Library.JSTORM_KAFKA:
        return _jstorm_out_of_range(side)
    if library is Library.STORM_KAFKA_CLIENT:
        return _client_trident_out_of_range(profile) if trident else _client_out_of_range(profile, side)
    line = profile.storm_kafka
    tag = line.tag
    fill = storm_kafka_citation("PartitionManager.fill", tag)
    if not profile.out_of_range_reset:
        fetch = storm_kafka_citation("KafkaUtils.fetchMessages", tag)
        stays = (
            "emits nothing until the log end reaches it"
            if side == "above"
            else "never emits from it again: those messages are gone"
        )
        spout = storm_kafka_citation("KafkaSpout.nextTuple", tag)
        text = (
            f"without useStartOffsetTimeIfOffsetOutOfRange every fetch fails (FailedFetchException, {fetch}) "
            f"and the partition {stays}; KafkaSpout.nextTuple retries the failing partition without moving on to "
            f"the next (its _currPartitionIndex stays), so once the task reaches it, none of its partitions emits "
            f"again ({spout}; run on storm-kafka 1.2.4)"
        )
        return Outcome(Lands.FAILS, fetch, lambda position, start, end: text)
    if line is StormKafka.V0_9_0:
        # KafkaUtils.fetchMessages retries at startOffsetTime; fill() then skips messages below the stored offset.
        if side == "above":
            return Outcome(
                Lands.WAITS,
                fill,
                lambda position, start, end: (
                    f"{_stuck(position, end)} (the retry at startOffsetTime returns only offsets below {position}, "
                    f"which fill skips; {fill})"
                ),
            )
        fetch = storm_kafka_citation("KafkaUtils.fetchMessages", tag)
        return Outcome(
            time_lands(profile),
            fetch,
            lambda position, start, end: f"the spout refetches from {_at_time(profile, start, end).text()} ({fetch})",
        )
    if line is StormKafka.V0_9_3:
        # UpdateOffsetException: _emittedToOffset = KafkaUtils.getOffset(..., spoutConfig), the configured start
        return Outcome(
            _configured_lands(profile),
            fill,
            lambda position, start, end: f"the spout jumps to {configured_start(profile, start, end).text()} ({fill})",
        )
    if line is StormKafka.V0_10 or side == "below":
        return Outcome(
            Lands.LOG_START,
            fill,
            lambda position, start, end: (
                f"the spout jumps to the log start ({f'{start}; ' if start is not None else ''}EarliestTime, {fill})"
            ),
        )
    # 1.0.x moves to EarliestTime, 1.1+ to LatestTime: both below the stored offset, and fill() only moves
    # _emittedToOffset forward (`if (offset > _emittedToOffset)`).
    return Outcome(Lands.WAITS, fill, lambda position, start, end: f"{_stuck(position, end)} ({fill})")


def _jstorm_out_of_range(side: str) -> Outcome:
    """JStorm's spout (jstorm rule 5): an out-of-range fetch returns null and emittingOffset stays, so every fetch
    of a position below the log start fails for good, and one above the log end waits until the log end reaches it."""
    fetch = jstorm.FETCH
    if side == "above":
        return Outcome(
            Lands.WAITS,
            fetch,
            lambda position, start, end: (
                f"{_stuck(position, end)} (every fetch is out of range and returns nothing: emittingOffset stays, "
                f"{fetch}; read, not run)"
            ),
        )
    text = (
        f"every fetch is out of range and returns nothing, for good: emittingOffset never moves and the partition "
        f"never emits again, while the task's other partitions go on (its resetOffsetIfOutOfRange branch sets a "
        f"local variable only, {fetch}; read, not run)"
    )
    return Outcome(Lands.FAILS, fetch, lambda position, start, end: text)


def trident_out_of_range_throws(profile: SpoutProfile, library: Library) -> bool:
    """Whether a Trident state outside the log makes the emitter throw, which stops the whole state (TRIDENT_BATCH):
    storm-kafka 0.9.3 to 0.9.7 with useStartOffsetTimeIfOffsetOutOfRange (UpdateOffsetException; read from the
    source, TridentKafkaEmitter at v0.9.6). Without it the fetch fails and the batch is empty, which moves nothing
    else."""
    return (
        library is Library.STORM_KAFKA_TRIDENT
        and profile.out_of_range_reset
        and profile.storm_kafka is StormKafka.V0_9_3
    )


def _trident_out_of_range(profile: SpoutProfile) -> Outcome:
    """What TridentKafkaEmitter does with a state outside the log (doEmitNewPartitionBatch, per line)."""
    line = profile.storm_kafka
    cite = storm_kafka_citation("TridentKafkaEmitter", line.tag, "trident/TridentKafkaEmitter")
    if not profile.out_of_range_reset:
        text = (
            f"without useStartOffsetTimeIfOffsetOutOfRange every fetch fails (FailedFetchException) and each "
            f"batch of this partition is empty: the spout never moves past it ({cite})"
        )
        lands = Lands.FAILS
    elif line is StormKafka.V0_9_0:
        text = f"KafkaUtils.fetchMessages refetches from startOffsetTime ({cite})"
        lands = time_lands(profile)
    elif line is StormKafka.V0_9_3:
        text = (
            f"KafkaUtils.fetchMessages throws UpdateOffsetException, which the emitter does not catch ({cite}), "
            f"{TRIDENT_STUCK}"
        )
        lands = Lands.FAILS
    else:
        text = f"the emitter moves to the log start (EarliestTime, on TopicOffsetOutOfRangeException; {cite})"
        lands = Lands.LOG_START
    return Outcome(lands, cite, lambda position, start, end: text)


# STORM-2844's check: under AT_LEAST_ONCE, KafkaSpout.emitOrRetryTuple reads the partition's commit before it emits a
# record and throws IllegalStateException ("Attempting to emit a message that has already been committed") when the
# commit is above the record and isOffsetCommittedByThisTopology; nothing catches it, so the worker dies. It is in
# 1.0.6-1.0.7, 1.1.2-1.1.3 and 1.2.0-1.2.2 (read at each tag); STORM-3102 removed it in 1.1.4 and 1.2.3, and no 2.x
# has it. A commit above the log end is where it fires: auto.offset.reset 'earliest' sends the consumer to the log
# start, below the commit. Run on storm-kafka-client 1.0.6 and 1.1.3 (tests/test_storm_kafka_client_releases_e2e.py):
# nextTuple threw before the first emit.
EMIT_CHECK = client_citation("KafkaSpout.emitOrRetryTuple", "v1.0.6", "v1.1.3", "v1.2.2", file="KafkaSpout")


def emit_check(profile: SpoutProfile) -> bool:
    """Whether the profile's storm-kafka-client release has STORM-2844's check (EMIT_CHECK) and it applies:
    AT_LEAST_ONCE on 1.0.6-1.0.7, 1.1.2-1.1.3 or 1.2.0-1.2.2."""
    if profile.client is not StormKafkaClient.CURRENT or profile.guarantee is not Guarantee.AT_LEAST_ONCE:
        return False
    version = profile.client_version
    return (1, 0, 6) <= version < (1, 1) or (1, 1, 2) <= version < (1, 1, 4) or (1, 2) <= version < (1, 2, 3)


def committed_above_outcome(profile: SpoutProfile, ours: bool | None) -> Outcome | None:
    """Where a storm-kafka-client commit above the log end sends a spout whose release has STORM-2844's check
    (emit_check): a commit that is the running topology's (`ours`: commit_is_ours) makes nextTuple throw before the
    first emit; one that is not, or that offctl cannot tell (None), re-reads from the log start, said with the
    condition. None where the check does not apply (_client_out_of_range answers)."""
    if not emit_check(profile) or ours is False:
        return None
    throws = (
        f"nextTuple throws IllegalStateException before it emits anything (the record at the log start is "
        f"below this topology's commit: STORM-2844's check, {EMIT_CHECK}; run on storm-kafka-client 1.0.6 and "
        f"1.1.3): the exception ends the worker, which restarts into the same commit, so the spout never emits "
        f"from this partition's task until the commit is moved (offctl reset)"
    )
    if ours:
        return Outcome(
            Lands.CRASHES,
            EMIT_CHECK,
            lambda position, start, end: (
                f"the consumer moves to the log start (auto.offset.reset 'earliest'), but {throws}"
            ),
        )
    moved = _client_out_of_range(profile, "above")
    return Outcome(
        moved.lands,
        moved.citation,
        lambda position, start, end: (
            f"{moved.sentence(position, start, end)}; if this commit is the running topology's, {throws}"
        ),
    )


def _client_out_of_range(profile: SpoutProfile, side: str = "below") -> Outcome:
    """Where an out-of-range commit sends a storm-kafka-client consumer: its auto.offset.reset, which
    KafkaSpoutConfig sets to 'earliest' under AT_LEAST_ONCE (v1.2.4, v2.8.8) and not at all before 1.0.6/1.1.2.
    Above the log end under AT_LEAST_ONCE the spout's OffsetManager starts at the commit (KafkaSpout's
    onPartitionsAssigned: new OffsetManager(tp, fetchOffset)) while the consumer re-reads from the log start, so the
    first commit of what it acks throws (OffsetManager.findNextCommitOffset: "is below the current
    nextCommitOffset"), run on storm-kafka-client 1.2.4 and 2.8.3."""
    if profile.client is StormKafkaClient.LEGACY:
        cite = client_citation("KafkaSpoutConfig", "v1.1.1")
        text = (
            "the consumer moves where its auto.offset.reset says, which the spout does not set: Kafka's default "
            f"is 'latest' (the log end) unless the topology sets it ({cite})"
        )
        return Outcome(Lands.LOG_END, cite, lambda position, start, end: text)
    cite = client_citation("KafkaSpoutConfig", "v1.2.4", "v2.8.8")
    if profile.guarantee is Guarantee.AT_LEAST_ONCE:
        text = (
            "the consumer moves where its auto.offset.reset says: 'earliest' (the log start), which "
            f"KafkaSpoutConfig sets under AT_LEAST_ONCE unless the topology sets another ({cite})"
        )
        if side == "above":
            manager = client_citation(
                "OffsetManager.findNextCommitOffset", "v1.2.4", "v2.8.8", file="internal/OffsetManager"
            )
            text += (
                f"; but the spout counts its commits from the stored offset, so its first commit after acking "
                f"a message from the log start throws IllegalStateException (the offset is below the current "
                f"nextCommitOffset, {manager}; run on storm-kafka-client 1.2.4 and 2.8.3). Thrown out of nextTuple "
                f"at the first commit period, it ends the worker, which restarts into the same commit (read from "
                f"the source): the commit never moves, and the messages from the log start are emitted again "
                f"on every restart"
            )
        return Outcome(Lands.LOG_START, cite, lambda position, start, end: text)
    text = (
        f"the consumer moves where its auto.offset.reset says: Kafka's default is 'latest' (the log end) "
        f"unless the topology sets it, which {profile.guarantee.value} does not ({cite})"
    )
    return Outcome(Lands.LOG_END, cite, lambda position, start, end: text)


# A Trident state the emitter throws on fails the whole batch, so no partition of the spout's state moves, not only
# its own: OpaquePartitionedTridentSpoutExecutor.emitBatch (storm-core v1.2.4; storm-client v2.8.3) emits every
# partition of the batch in one loop and writes their metas only at the batch's commit; storm-kafka-client's
# KafkaTridentSpoutEmitter.emitBatchNew (v2.8.3) seeks every partition before its one poll, so it emits nothing at
# all. The exception leaves the executor (TridentBoltExecutor catches only FailedException), which ends the worker:
# read from the source. Run on storm-kafka 1.2.4 and storm-kafka-client 2.8.3 (tests/test_trident_oracle_e2e.py).
TRIDENT_BATCH = Citation(
    "OpaquePartitionedTridentSpoutExecutor.emitBatch",
    "storm-core/src/jvm/org/apache/storm/trident/spout/OpaquePartitionedTridentSpoutExecutor.java",
    ("v1.2.4", "v2.8.3"),
)


# Where a restarted Trident spout starts each partition: the opaque executor removes the state of the txid it emits
# (the coordinator's currtx) and resumes after the highest other one (TRIDENT_BATCH); the transactional one replays
# the batch stored at or past currtx and starts anew only where none is (trident.newest_txid, trident.stored_from).
TRIDENT_TRANSACTIONAL = Citation(
    "PartitionedTridentSpoutExecutor.Emitter.emitBatch",
    "storm-core/src/jvm/org/apache/storm/trident/spout/PartitionedTridentSpoutExecutor.java",
    ("v1.2.4", "v2.8.3"),
)


TRIDENT_STUCK = (
    "so every batch of the spout fails: the exception ends the worker, the next worker's try fails "
    "the same way, and no partition of this Trident state moves, this one or any other, until the state "
    f"is fixed ({TRIDENT_BATCH})"
)


# storm-client 2.6.0 and later read Trident state with json-smart (TransactionalState.getData: the shaded
# net.minidev JSONValue.parseWithException, v2.6.0 to v2.8.8; json-simple in storm-core 1.x and storm-client 2.0-2.5).
# json-smart's permissive mode reads much json-simple refuses: unquoted keys (a usable meta), a bare word (a String:
# ClassCastException, the whole state stuck), trailing text, NaN, empty data: run on storm-kafka-client 2.8.3
# (tests/test_trident_oracle_e2e.py). offctl parses as json-simple does; on data json-simple refuses, from 2.6 on it
# cannot tell what the spout does.
JSON_SMART = Citation(
    "TransactionalState.getData",
    "storm-client/src/jvm/org/apache/storm/trident/topology/state/TransactionalState.java",
    ("v2.6.0", "v2.8.8"),
)


# storm-kafka-client 1.1.2 to 1.2.x's Trident meta: fromMap reads a tp map besides the offsets, and no topologyId
CLIENT_1X_META = client_citation(
    "KafkaTridentSpoutBatchMetadata.fromMap", "v1.2.4", file="trident/KafkaTridentSpoutBatchMetadata"
)


def trident_state_read_by_json_smart(profile: SpoutProfile) -> bool:
    """Whether storm-kafka-client's Trident state is read by json-smart (storm-client 2.6.0 on, the Storm release
    that goes with --storm-kafka-client-release), not json-simple (JSON_SMART)."""
    return profile.client_version[:2] >= (2, 6)


def metadata_number_limit(profile: SpoutProfile) -> int | None:
    """The longest number Jackson reads in commit metadata under the spout's release (jackson.MAX_NUMBER_LENGTH):
    storm 2.6.0 and later ship Jackson 2.15.2 or later (pom.xml jackson.version at v2.6.0 to v2.8.3, 2.20.0 at
    v2.8.3, held to it: tests/test_metadata_differential.py), whose StreamReadConstraints refuse one over 1,000
    characters; v2.5.0 and before ship 2.9-2.10, which have no limit (1.2.4's 2.9.4, held to it)."""
    return 1000 if profile.client_version[:2] >= (2, 6) else None


def stuck_trident_state() -> Resumption:
    """Where every partition of a Trident state resumes when the emitter throws on one partition's meta: nowhere
    (TRIDENT_BATCH): the exception ends the worker, which restarts into the same state."""
    return Resumption(None, Resumes.CRASHES, TRIDENT_BATCH)


def _client_trident_out_of_range(profile: SpoutProfile) -> Outcome:
    """Where an out-of-range Trident state sends storm-kafka-client's Trident consumer: its auto.offset.reset. From 2.0
    the Trident spout is configured by KafkaTridentSpoutConfig, whose CommonKafkaSpoutConfig never sets it (v2.0.0 to
    v2.8.8): Kafka's default 'latest', the log end, on either side, and no OffsetManager. In 1.2.x it takes a
    KafkaSpoutConfig, which sets 'earliest' under its default AT_LEAST_ONCE (setKafkaPropsForProcessingGuarantee,
    v1.2.4); before 1.0.6/1.1.2 nothing sets it. Run on storm-kafka-client 2.8.3's KafkaTridentSpoutOpaque
    (tests/test_trident_oracle_e2e.py: below the log start and above the log end, both at the log end)."""
    if profile.client is StormKafkaClient.LEGACY:
        return _client_out_of_range(profile)
    if profile.client_major < 2:
        cite = client_citation("KafkaSpoutConfig", "v1.2.4")
        text = (
            "the consumer moves where its auto.offset.reset says: 'earliest' (the log start), which the "
            f"KafkaSpoutConfig the Trident spout takes sets unless the topology sets another ({cite})"
        )
        return Outcome(Lands.LOG_START, cite, lambda position, start, end: text)
    cite = client_citation("CommonKafkaSpoutConfig", "v2.0.0", "v2.8.8", file="internal/CommonKafkaSpoutConfig")
    text = (
        "the consumer moves where its auto.offset.reset says: Kafka's default is 'latest' (the log end) unless "
        f"the topology sets it, which KafkaTridentSpoutConfig does not ({cite}; run on 2.8.3)"
    )
    return Outcome(Lands.LOG_END, cite, lambda position, start, end: text)


def stored_citation(profile: SpoutProfile, library: Library, trident: bool = False) -> Citation:
    """The Storm source that resumes a partition from its stored position: PartitionManager's constructor
    (storm-kafka), TridentKafkaEmitter.doEmitNewPartitionBatch (its Trident emitter), KafkaSpout.doSeek
    (storm-kafka-client; v1.1.1 for its legacy line) or KafkaTridentSpoutEmitter.seek (its Trident emitter)."""
    if library is Library.STORM_KAFKA:
        return storm_kafka_citation("PartitionManager", profile.storm_kafka.tag)
    if library is Library.JSTORM_KAFKA:
        return jstorm.STORED
    if library is Library.STORM_KAFKA_TRIDENT:
        return storm_kafka_citation(
            "TridentKafkaEmitter.doEmitNewPartitionBatch", profile.storm_kafka.tag, "trident/TridentKafkaEmitter"
        )
    if trident:
        return client_citation(
            "KafkaTridentSpoutEmitter.seek", "v1.2.4", "v2.8.8", file="trident/KafkaTridentSpoutEmitter"
        )
    if profile.client is StormKafkaClient.LEGACY:
        return client_citation("KafkaSpout.doSeek", "v1.1.1")
    return DO_SEEK_BOTH_LINES


def start_outcome(profile: SpoutProfile, library: Library, now_ms: int | None = None) -> Outcome:
    """Where the spout starts a partition without a stored position it can use (none, a malformed one, a storm-kafka
    offset <= 0): storm-kafka at `current` (configured_start: PartitionManager's constructor), storm-kafka-client
    at its first-poll strategy's edge (first_poll_start: KafkaSpout.doSeek). The sentence names the position.
    `now_ms`: the capture time (configured_start)."""
    if library is Library.JSTORM_KAFKA:
        return Outcome(
            Lands.LOG_START if profile.jstorm_from_beginning else Lands.LOG_END,
            jstorm.START,
            lambda position, start, end: fresh_position(profile, library, start, end).text(),
        )
    if library is Library.STORM_KAFKA_CLIENT:
        return Outcome(
            Lands.LOG_START if profile.first_poll.edge == "log start" else Lands.LOG_END,
            client_citation("KafkaSpout.doSeek", "v2.8.8"),
            lambda position, start, end: first_poll_start(profile, start, end).text(),
        )
    return Outcome(
        _configured_lands(profile, now_ms),
        storm_kafka_citation("PartitionManager", profile.storm_kafka.tag),
        lambda position, start, end: configured_start(profile, start, end, now_ms).text(),
    )


def fresh_position(
    profile: SpoutProfile, library: Library, log_start: int | None, log_end: int | None, now_ms: int | None = None
) -> Position:
    """Where the spout that reads with `library` starts a partition without a stored position it can use:
    storm-kafka's `current` (configured_start), storm-kafka-client's first-poll edge (first_poll_start), JStorm's
    log end + 1, or log start + 1 with kafka.fetch.from.beginning (jstorm.fresh_start)."""
    if library is Library.JSTORM_KAFKA:
        return Position(*jstorm.fresh_start(profile.jstorm_from_beginning, log_start, log_end))
    if library is Library.STORM_KAFKA_CLIENT:
        return first_poll_start(profile, log_start, log_end)
    return configured_start(profile, log_start, log_end, now_ms)


def crashing(citation: Citation = COMMIT_CRASH) -> Resumption:
    """Where a spout whose start-up throws resumes a partition: nowhere (`crashes`)."""
    return Resumption(None, Resumes.CRASHES, citation)
