"""What `offctl storm-kafka-monitor` prints: the report of one spout in the shape Storm UI reads, pure.

The shape is KafkaOffsetLagUtil's (external/storm-kafka-monitor/src/main/java/org/apache/storm/kafka/monitor/
KafkaOffsetLagUtil.java, KOLU, at v1.2.4 and v2.8.8): one JSON object, `{topic: {"<partition>": {
"consumerCommittedOffset": N, "logHeadOffset": N, "lag": N}}}`, with a row for every partition asked about,
committed or not (no commit: consumerCommittedOffset -1). TopologySpoutLag passes the parsed map to the page
untouched and the page reads only those three keys of each partition (storm-core/src/ui/public/topology.html@v1.2.4,
storm-webapp/.../WEB-INF/topology.html@v2.8.8), so every partition object may carry more keys: offctl's are
documented in docs/storm-ui-lag.md. Nothing may be added outside the partition objects: the page takes every key of
the top level as a topic and every key below it as a partition.

The three keys keep the meaning the page gives them (its columns: "Log Head Offset", "Consumer Committed Offset",
"Lag"): the log end, what the spout has stored, and how many messages lie between where the spout will read next and
the log end. The original's lag is always `logHeadOffset - consumerCommittedOffset` (KafkaPartitionOffsetLag); offctl's
is where the spout will actually resume, by its own release and settings (offctl/core/storm/), as every other
face of offctl counts it. Where the two differ, `originalLag` holds the original's and `why` the finding that decides.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from offctl.core.records.model import (
    JSTORM,
    ConsumerKey,
    Finding,
    PartitionLog,
    PartitionRow,
    Position,
    Report,
    TimeLag,
)
from offctl.core.rules.profiles import Profiles
from offctl.core.rules.served import CODE
from offctl.core.storm import jstorm
from offctl.core.storm.outcomes import Resumes, Resumption, fresh_position, start_outcome
from offctl.core.storm.releases import Library, SpoutProfile
from offctl.core.time.history import NO_CATCH_UP, catch_up_of
from offctl.core.time.timelag import time_lag

REASON = "Unable to get offset lags for kafka. Reason: "  # KOLU@v1.2.4 line 149, @v2.8.8 line 80


@dataclass(frozen=True)
class Asked:
    """What the monitor answers for: the consumer, and each topic's partitions in the order shown (old spouts:
    from the broker registry or StaticHosts; new spouts: every partition of each topic, as partitionsFor gives
    them). `folder`: the spout keeps a topic's offsets under a folder named by the topic (`<zk-node>/<topic>/`, a
    wildcard spout; or JStorm's `<root>/kafka/offset/topic/<topic>/<client id>/`)."""

    key: ConsumerKey
    old: bool
    partitions: Mapping[str, Sequence[int]]
    folder: bool = False

    @property
    def library(self) -> Library:
        """The spout that reads the partitions asked about: JStorm's, storm-kafka's (old) or storm-kafka-client's."""
        if self.key.store == JSTORM:
            return Library.JSTORM_KAFKA
        return Library.STORM_KAFKA if self.old else Library.STORM_KAFKA_CLIENT


def _pick(rows: Sequence[PartitionRow], asked: Asked) -> dict[tuple[str, int], PartitionRow]:
    """The row the spout reads for each (topic, partition): an old spout reads `<node>/partition_N`, or
    `<node>/<topic>/partition_N` when wildcard (KOLU@v1.2.4 getOldConsumerOffsetsFromZk; storm-kafka Partition.getId
    @v1.2.4); a new spout the group's commit of that partition."""
    chosen: dict[tuple[str, int], PartitionRow] = {}
    for row in rows:
        if row.topic is None:
            continue
        if asked.old and row.record.folder_topic != (row.topic if asked.folder else None):
            continue
        chosen.setdefault((row.topic, row.record.partition), row)
    return chosen


def _by_partition(report: Report) -> dict[tuple[str | None, int | None], list[Finding]]:
    """The report's findings by (topic, partition), in the report's order: read once, not once a partition."""
    found: dict[tuple[str | None, int | None], list[Finding]] = {}
    for f in report.findings:
        found.setdefault((f.topic, f.partition), []).append(f)
    return found


def document(
    report: Report, asked: Asked, profiles: Profiles, cluster: Mapping[str, Mapping[int, PartitionLog]]
) -> tuple[dict[str, dict[str, dict]], list[str]]:
    """The monitor's JSON object for `asked`, and notes (stderr) on partitions it cannot answer for: those whose
    log end the broker did not give (the original fails the whole run on them; offctl leaves them out)."""
    name, thresholds = profiles.judging(asked.key)
    summary = next((c for c in report.consumers if c.key.consumer == asked.key.consumer), None)
    profile = summary.profile if summary is not None else name
    rows = _pick(report.rows, asked)
    findings = _by_partition(report)
    consumer_wide = [f for f in findings.get((None, None), []) if f.key.consumer == asked.key.consumer]
    out: dict[str, dict[str, dict]] = {}
    notes: list[str] = []
    for topic, partitions in asked.partitions.items():
        shown: dict[str, dict] = {}
        for p in partitions:
            row = rows.get((topic, p))
            plog = cluster.get(topic, {}).get(p)
            head = _head(row, plog)
            if head is None:
                notes.append(f"{topic}/{p}: the broker gave no log end offset; the partition is left out")
                continue
            committed = _committed(row)
            place = _resumption(row, plog, head, committed, asked.library, thresholds.spout, report.time_lags)
            lost = row.lost_to_retention if row is not None else None
            shown[str(p)] = _entry(head, committed, place, findings.get((topic, p), []), consumer_wide, profile, lost)
            shown[str(p)].update(_catch_up(row, report))
        if shown:
            out[topic] = shown
    return out, notes


def _head(row: PartitionRow | None, plog: PartitionLog | None) -> int | None:
    """The partition's logHeadOffset, the lag's end; None where the broker gave no log end."""
    # the last stable offset for a spout that reads committed, as the Java consumer's seekToEnd puts a read_committed
    # consumer there; else the log end
    return (
        row.lag_end
        if row is not None
        else None
        if plog is None
        else plog.last_stable
        if plog.last_stable is not None
        else plog.log_end
    )


def _committed(row: PartitionRow | None) -> int:
    """The partition's consumerCommittedOffset: the offset the spout has stored, -1 where it has none."""
    return row.record.committed if row is not None and row.record.committed is not None else -1


_Place = tuple[int | None, int, float | None, Resumption | None]  # resumeOffset, lag, timeLagSeconds, resumes


def _resumption(
    row: PartitionRow | None,
    plog: PartitionLog | None,
    head: int,
    committed: int,
    library: Library,
    spout: SpoutProfile,
    time_lags: Mapping[Position, TimeLag],
) -> _Place:
    """Where the spout resumes, its lag and time lag, and how: the analysis's where it has one (inside the log: its
    lag; outside: where its out-of-range rule sends the spout), else where it starts. resumeOffset is inspect's
    `resumes_at` wherever the analysis has one: a lag may count from elsewhere (a stored offset that a restart would
    leave for maxOffsetBehind's, or one the spout crashes on and never leaves)."""
    if row is not None and row.lag is not None:  # the analysis says where the spout resumes
        at = row.resumes.at if row.resumes is not None else head - row.lag
        return at, row.lag, time_lag(row, time_lags).seconds, row.resumes
    at = row.resumes.at if row is not None and row.resumes is not None else None
    if at is not None:
        return at, head - at, None, row.resumes
    if row is not None and row.resumes is not None and row.resumes.kind in _READS_NOTHING:
        return None, head - committed, None, row.resumes  # it reads nothing: the lag counts from the stored offset
    return _start(row, plog, head, committed, library, spout)


_READS_NOTHING = (Resumes.FETCH_FAILS, Resumes.CRASHES)  # the spout never leaves its stored position


def _start(
    row: PartitionRow | None,
    plog: PartitionLog | None,
    head: int,
    committed: int,
    library: Library,
    spout: SpoutProfile,
) -> _Place:
    """Where a spout with no record starts instead (PartitionManager; KafkaSpout.doSeek; JStorm's PartitionConsumer),
    and its lag from there (JStorm's start at the log end + 1 counts from the log end, as inspect counts it)."""
    resume = fresh_position(spout, library, plog.log_start if plog else None, head).offset
    counted = jstorm.lag_from(resume, head) if library is Library.JSTORM_KAFKA else resume
    lag = head - counted if counted is not None else head - committed
    if row is not None:
        return resume, lag, None, row.resumes
    outcome = start_outcome(spout, library)
    return resume, lag, None, Resumption.landing(outcome.lands, outcome.citation, None, None, None, resume)


def _entry(
    head: int,
    committed: int,
    place: _Place,
    on: list[Finding],
    consumer_wide: list[Finding],
    profile: str | None,
    lost: int | None = None,
) -> dict:
    """One partition's object: the three keys Storm UI reads, offctl's (`lost`: the row's lost_to_retention), and why
    the lag is not the original's."""
    resume, lag, seconds, resumes = place
    original = head - committed
    entry = {
        "consumerCommittedOffset": committed,
        "logHeadOffset": head,
        "lag": lag,
        "timeLagSeconds": seconds,
        # the partition's findings, and those of the consumer's that every partition of it carries (BROKER_INCOMPATIBLE)
        "findings": list(dict.fromkeys([*(f.code for f in on), *(f.code for f in consumer_wide if f.code == CODE)])),
        "profile": profile,
        "resumeOffset": resume,
        "resumes": resumes.kind.value if resumes is not None else None,
        "resumesCitation": resumes.citation_text() if resumes is not None else None,
        "lostToRetention": lost,
    }
    if lag != original:
        entry["originalLag"] = original
        entry["why"] = _why(on, consumer_wide, committed, resume, resumes)
    return entry


def _catch_up(row: PartitionRow | None, report: Report) -> dict:
    """When the spout will have caught up (offctl.core.time.history, catch-up) and the rates it rests on, as inspect's
    `catch_up_s`, `catch_up`, `commit_rate` and `log_rate`: the program reads once, so no history (`no-history`)
    where the partition lags, 0 (`caught-up`) where it does not, all null without inspect's lag."""
    up = catch_up_of(row, report.catch_ups) if row is not None else NO_CATCH_UP
    return {"catchUpSeconds": up.seconds, "catchUp": up.state, "commitRate": up.commit_rate, "logRate": up.log_rate}


def _why(
    on: list[Finding], consumer_wide: list[Finding], committed: int, resume: int | None, resumes: Resumption | None
) -> str:
    """Why the spout's lag is not the original's: the partition's first finding, else the consumer's, else a spout
    that fetches the stored offset + 1, else no commit."""
    # a commit the spout does not resume from, with no finding of the partition's own: the consumer's says why
    # (STALE_TOPOLOGY: EARLIEST/LATEST ignore a commit of a topology that is not running)
    why = on or (consumer_wide if committed >= 0 else [])
    if not why and committed >= 0 and resumes is not None and resumes.kind is Resumes.STORED_PLUS_1:
        return f"the spout fetches the stored offset + 1, {resume}, first ({resumes.citation_text()})"
    return (why[0].message if why else None) or (
        f"no committed offset: the spout starts at offset {resume}"
        if resume is not None
        else "no committed offset, and where the spout starts is not known here"
    )


def render(doc: Mapping[str, Mapping[str, Mapping]]) -> str:
    """The object as one line of JSON, every character outside ASCII escaped (\\uXXXX, as json-simple reads it), no
    trailing newline (KOLU prints it with System.out.print)."""
    return json.dumps(doc, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def failure(kind: str, message: str) -> str:
    """The line KOLU prints for a failure (`catch (Exception ex)`: the prefix, then printStackTrace's first line,
    `<class>: <message>`), one line: Storm UI shows any output that is not JSON as the spout's errorInfo."""
    return f"{REASON}{kind}: {' '.join(message.split())}\n"
