"""A TIMESTAMP startOffsetTime on the real storm-kafka 1.2.4 spout and Kafka 3.9 (issue 36): where it starts, and
what offctl says of it.

storm-kafka asks the offset for startOffsetTime with KafkaUtils.getOffset (KafkaUtils.java:74-87 at Storm v1.2.4):
SimpleConsumer.getOffsetsBefore, ListOffsets v0, maxNumOffsets 1; an empty answer is NO_OFFSET, -5. Kafka answers v0
from its segment FILES, not from record timestamps or the time index (apache/kafka 3.9.0, tag 3.9.0-rc3, the commit
"Bump version to 3.9.0"; the 3.9.2 broker run here has the same method, read with javap):

    KafkaApis.handleListOffsetRequestV0 (KafkaApis.scala:1095-1150): a timestamp below -2 is UNSUPPORTED_VERSION;
        otherwise ReplicaManager/Partition.legacyFetchOffsetsForTimestamp (Partition.scala:1644-1660), which clamps
        to the high watermark for a consumer;
    UnifiedLog.legacyFetchOffsetsBefore (UnifiedLog.scala:1381-1424): one entry per segment, (max(baseOffset,
        logStartOffset), the segment's log file's lastModified), plus (logEndOffset, the broker's now) when the active
        segment is not empty; from the last entry back, the first whose time is <= the timestamp; maxNumOffsets of
        them, so none when every entry is later.

What PartitionManager (v1.2.4) then does with it: without a usable record it starts at that offset; with -5 its first
fetch is out of range (below the log start) and fill() moves to EarliestTime, or, without
useStartOffsetTimeIfOffsetOutOfRange, every fetch fails. `committed <= 0`, maxOffsetBehind and ignoreZkOffsets
compare with or move to the same answer.

The topic here: partition 0 has four segments, written 0.3 s apart (records 0-2, 3-5, 6-8, and the active one 9-11),
with the log start moved to 2 (DeleteRecords), log end 12; its records' CreateTime is in 2020, years before the
files, so a time-index answer would differ everywhere. Each timestamp is placed against the segments' mtimes as read
from the broker's log directory (Java's File.lastModified is the mtime in ms). A second, identical topic has one
segment file's mtime set back (os.utime), to show the answer follows the file's mtime and nothing else.

offctl cannot see segment mtimes through the protocol it uses (confluent-kafka's ListOffsets v1 and up answer from
the time index: the contrast is asserted below), so it names the rule and gives `resumes: time`, `resumes_at: null`,
except where the rule needs no mtime: a timestamp after the capture time is answered with the log end by a spout
that starts before it. Before these runs it said `stored` for a record more than maxOffsetBehind behind the log end
(the spout started at Kafka's answer, 6 and 12 here), and `time` for a timestamp in the future (the log end).

About 40 s on this machine: the servers (shared with the session), about 8 s to set up both topics and ask offctl 26
times, about 20 s for the 26 spout runs in one JVM.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.conftest import BROKER39_CHROOT, invoke, storm_record
from tests.oracle.test_spout_oracle_e2e import old_flags

pytestmark = [pytest.mark.kafka, pytest.mark.zookeeper]

STORM_ID = "orders-topology-1-1700000000"  # the running topology: the runner's context reports it
OTHER_ID = "orders-topology-7-1690000000"  # an earlier deployment
REC0 = 1_577_836_800_000  # 2020-01-01T00:00:00Z: the records' CreateTime, long before any segment file was written
LOG_START, LOG_END = 2, 12
BASES = (0, 3, 6, 9)  # partition 0's segments, the last the active one
NO_OFFSET = -5  # KafkaUtils.NO_OFFSET (KafkaUtils.java:57 at v1.2.4): an empty ListOffsets v0 answer

# name: (startOffsetTime, by its place against partition 0's segment mtimes m0 < m1 < m2 < m3 (m3 the active one);
#        the record on partition 0: None (no node), an offset written by the running topology, or ("other", offset);
#        more SpoutConfig fields; where PartitionManager starts partition 0 ("Starting ... from offset N"); the first
#        offset the spout emits from it, None for nothing)
SCENARIOS = {
    # no record: PartitionManager starts at KafkaUtils.getOffset(startOffsetTime)
    "none-before-every-segment": ("before", None, {}, NO_OFFSET, LOG_START),  # empty answer: -5, then EarliestTime
    "none-at-a-record-time": ("record-time", None, {}, NO_OFFSET, LOG_START),  # a time index would say 6
    "none-before-every-segment-no-reset": (
        "before",
        None,
        {"useStartOffsetTimeIfOffsetOutOfRange": False},
        NO_OFFSET,
        None,
    ),  # every fetch fails
    "none-between-m0-m1": ("between-0-1", None, {}, LOG_START, LOG_START),  # max(base 0, log start 2)
    "none-just-before-m1": ("m1-1", None, {}, LOG_START, LOG_START),
    "none-at-m1": ("m1", None, {}, 3, 3),  # <=: a segment last modified at the timestamp counts
    "none-between-m1-m2": ("between-1-2", None, {}, 3, 3),
    "none-between-m2-m3": ("between-2-3", None, {}, 6, 6),
    "none-after-the-last-write": ("after-last-write", None, {}, 9, 9),  # the active segment's start, not the log end
    "none-future": ("future", None, {}, LOG_END, None),  # the (log end, now) entry
    # a record PartitionManager replaces (offset <= 0) or ignores (another topology, ignoreZkOffsets)
    "zero-between-m1-m2": ("between-1-2", 0, {}, 3, 3),
    "zero-before-every-segment": ("before", 0, {}, NO_OFFSET, LOG_START),
    "zero-future": ("future", 0, {}, LOG_END, None),
    "ignore-zk-between-m1-m2": ("between-1-2", ("other", 7), {"ignoreZkOffsets": True}, 3, 3),
    "ignore-zk-before-every-segment": ("before", ("other", 7), {"ignoreZkOffsets": True}, NO_OFFSET, LOG_START),
    "ignore-zk-future": ("future", ("other", 7), {"ignoreZkOffsets": True}, LOG_END, None),
    # a record the spout uses: the timestamp is not asked for it (1.1+: out of range goes to Earliest/LatestTime)
    "stored-inside": ("between-1-2", 7, {}, 7, 7),
    "stored-below-log-start": ("between-1-2", 1, {}, 1, LOG_START),
    "stored-above-log-end": ("between-1-2", 50, {}, 50, None),
    # maxOffsetBehind: `current - committed > maxOffsetBehind`, current being the answer for the timestamp
    "max-offset-behind-between-m2-m3": ("between-2-3", 4, {"maxOffsetBehind": 1}, 6, 6),  # 6 - 4 > 1
    "max-offset-behind-between-m0-m1": ("between-0-1", 4, {"maxOffsetBehind": 1}, 4, 4),  # 2 - 4 <= 1
    "max-offset-behind-before-every-segment": ("before", 4, {"maxOffsetBehind": 1}, 4, 4),  # -5 - 4 <= 1
    "max-offset-behind-future": ("future", 4, {"maxOffsetBehind": 1}, LOG_END, None),  # 12 - 4 > 1
    "max-offset-behind-within-the-log-end": ("between-2-3", 11, {"maxOffsetBehind": 1}, 11, 11),  # 12 - 11 <= 1
    # below the log start too: the constructor's check comes before any fetch, so the stored 1 is never fetched and
    # the out-of-range jump to the log start (2) never happens (offctl said log-start 2 before these runs)
    "max-offset-behind-below-log-start-between-m2-m3": ("between-2-3", 1, {"maxOffsetBehind": 1}, 6, 6),  # 6-1 > 1
    "max-offset-behind-below-log-start-future": ("future", 1, {"maxOffsetBehind": 1}, LOG_END, None),  # 12-1 > 1
}
# The same on the topic whose segment 3-5 file was set back 30 s before segment 0-2's mtime: the scan from the last
# entry back finds it first, so a timestamp before every write is answered 3 (not -5), one between m0 and m1 too.
TOUCHED = {
    "touched-before-every-write": ("before-touched-m0", None, {}, 3, 3),
    "touched-between-m0-m1": ("between-0-1", None, {}, 3, 3),
}

# What offctl says of partition 0 (resumes, resumes_at): the log end for a timestamp after the capture time; the rule,
# `time` and null, where the answer depends on segment mtimes; where the spout uses its record, what it always said.
TIME = ("time", None)
FUTURE = ("log-end", LOG_END)
SAYS = {
    "none-before-every-segment": TIME,
    "none-at-a-record-time": TIME,
    "none-before-every-segment-no-reset": TIME,
    "none-between-m0-m1": TIME,
    "none-just-before-m1": TIME,
    "none-at-m1": TIME,
    "none-between-m1-m2": TIME,
    "none-between-m2-m3": TIME,
    "none-after-the-last-write": TIME,
    "none-future": FUTURE,
    "zero-between-m1-m2": TIME,
    "zero-before-every-segment": TIME,
    "zero-future": FUTURE,
    "ignore-zk-between-m1-m2": TIME,
    "ignore-zk-before-every-segment": TIME,
    "ignore-zk-future": FUTURE,
    "stored-inside": ("stored", 7),
    "stored-below-log-start": ("log-start", LOG_START),
    "stored-above-log-end": ("waits-until-log-end-reaches", 50),
    # before issue 36's time runs offctl said ("stored", 4) for these: the spout started at 6 and 12
    "max-offset-behind-between-m2-m3": TIME,
    "max-offset-behind-between-m0-m1": TIME,
    "max-offset-behind-before-every-segment": TIME,
    "max-offset-behind-future": FUTURE,
    "max-offset-behind-within-the-log-end": ("stored", 11),
    "max-offset-behind-below-log-start-between-m2-m3": TIME,
    "max-offset-behind-below-log-start-future": FUTURE,
    "touched-before-every-write": TIME,
    "touched-between-m0-m1": TIME,
}
NO_EMIT = ("waits-until-log-end-reaches", "fetch-fails", "crashes")


def segment_mtimes(broker39, topic: str, partition: int) -> dict[int, int]:
    """Base offset -> its .log file's mtime in ms (what LogSegment.lastModified reads: File.lastModified), from the
    broker's log directory (servers.start_broker puts log.dirs in `data` beside its log)."""
    directory = Path(broker39.log).parent / "data" / f"{topic}-{partition}"
    return {int(p.stem): p.stat().st_mtime_ns // 1_000_000 for p in sorted(directory.glob("*.log"))}


def segmented_topic(kafka39, name: str) -> str:
    """2 partitions; partition 0 as the module says (four segments, log start 2, log end 12), partition 1 one segment
    of 3 records. segment.ms 100 with each batch's CreateTime 1 s after the last makes every produce request after
    the first roll a new segment (UnifiedLog.maybeRoll, LogSegment.shouldRoll: the batch's timestamp minus the
    segment's first is over segment.ms); retention.ms -1 keeps the 2020 records from time retention."""
    from confluent_kafka import TopicPartition

    kafka39.create_topic(name, 2, {"segment.ms": "100", "retention.ms": "-1"})
    kafka39.produce_records(name, 1, [{"value": b"p1-%d" % o, "timestamp": REC0} for o in range(3)])
    for k in range(len(BASES)):
        time.sleep(0.3)  # the segment files' mtimes 0.3 s apart: room for a timestamp between them
        kafka39.produce_records(
            name, 0, [{"value": b"m%d" % (3 * k + o), "timestamp": REC0 + 1000 * k} for o in range(3)]
        )
    (deleted,) = kafka39.admin.delete_records([TopicPartition(name, 0, LOG_START)]).values()
    deleted.result(30)
    return name


def inspect(*args: str) -> dict:
    result = invoke(["inspect", *args, "--per-partition", "--fail-on", "never", "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def said_of(doc: dict, partition: int) -> dict:
    """What offctl says of one partition: its row's or its MISSING_PARTITION finding's resumes fields, and the
    messages of every finding on it."""
    said = {"messages": [f["message"] for f in doc["findings"] if f.get("partition") in (partition, None)]}
    for row in doc["partitions"]:
        if row["partition"] == partition:
            said.update(resumes_at=row["resumes_at"], resumes=row["resumes"], cite=row["resumes_citation"])
    for f in doc["findings"]:
        if f["code"] == "MISSING_PARTITION" and f["partition"] == partition:
            said.update(resumes_at=f["resumes_at"], resumes=f["resumes"], cite=f["resumes_citation"])
    return said


@pytest.fixture(scope="module")
def timed(zk_server, zk, broker39, kafka39):
    """Both topics set up, offctl asked about every scenario, then the real spout run on all of them in one JVM."""
    from tests.oracle.storm_kafka_spout import run_old_spouts

    t0 = time.monotonic()
    prefix = f"time-{time.time_ns()}"
    topic = segmented_topic(kafka39, f"{prefix}-segmented")
    touched = segmented_topic(kafka39, f"{prefix}-touched")
    mtimes = segment_mtimes(broker39, topic, 0)
    assert sorted(mtimes) == list(BASES), mtimes  # four segments, as produced
    m = [mtimes[b] for b in BASES]
    assert all(b - a >= 100 for a, b in zip(m, m[1:])), m  # room between them
    # Setting an mtime is what this topic is for: the answer moves with the file, which nothing else could show.
    t_m = [segment_mtimes(broker39, touched, 0)[b] for b in BASES]
    moved = t_m[0] - 30_000
    segment = Path(broker39.log).parent / "data" / f"{touched}-0" / f"{3:020d}.log"
    os.utime(segment, ns=(moved * 1_000_000, moved * 1_000_000))
    assert segment_mtimes(broker39, touched, 0)[3] == moved
    now = int(time.time() * 1000)
    at = {
        "before": m[0] - 60_000,
        "record-time": REC0 + 1500,
        "between-0-1": (m[0] + m[1]) // 2,
        "m1-1": m[1] - 1,
        "m1": m[1],
        "between-1-2": (m[1] + m[2]) // 2,
        "between-2-3": (m[2] + m[3]) // 2,
        "after-last-write": (m[3] + now) // 2,
        "future": now + 86_400_000,
    }
    at_touched = {"before-touched-m0": t_m[0] - 10_000, "between-0-1": (t_m[0] + t_m[1]) // 2}
    assert at["after-last-write"] > m[3]

    root, broker = f"/{prefix}", broker39.address
    zk.create(f"{root}/storm/storms/{STORM_ID}", makepath=True)
    scenarios, offctl, times = [], {}, {}
    for name, (when, stored, settings, _, _) in {**SCENARIOS, **TOUCHED}.items():
        on, ms = (touched, at_touched[when]) if name in TOUCHED else (topic, at[when])
        times[name] = ms
        config = {"startOffsetTime": ms, **settings}
        nodes = {1: storm_record(on, 1, 3, topology_id=STORM_ID, broker=broker)}  # partition 1: at its log end
        if stored is not None:
            writer, offset = (OTHER_ID, stored[1]) if isinstance(stored, tuple) else (STORM_ID, stored)
            nodes[0] = storm_record(on, 0, offset, topology_id=writer, broker=broker)
        for p, data in nodes.items():
            zk.create(f"{root}/{name}/orders-spout/partition_{p}", data, makepath=True)
        flags = old_flags(config)  # startOffsetTime ms: "--start-offset-time <ms>"
        doc = inspect(
            "--zk",
            zk_server.address,
            "--zk-root",
            f"{root}/{name}",
            "--spout",
            "orders-spout",
            "--topic",
            on,
            "--storm-root",
            f"{root}/storm",
            "--bootstrap-servers",
            broker,
            *flags,
        )
        offctl[name] = {p: said_of(doc, p) for p in (0, 1)}
        scenarios.append(
            {
                "name": name,
                "zookeeper": zk_server.address,
                "zk_root": f"{root}/{name}",
                "spout_id": "orders-spout",
                "topic": on,
                "storm_id": STORM_ID,
                "idle_ms": 300,
                "hosts": {"zk": zk_server.address + BROKER39_CHROOT, "path": "/brokers"},
                "spout_config": config,
            }
        )
    set_up = time.monotonic() - t0
    asked = int(time.time() * 1000)  # before any spout asks Kafka: the log end's entry is dated later
    ran = {r["name"]: r for r in run_old_spouts(scenarios)}
    # nothing wrote to the topics meanwhile: the mtimes the timestamps were placed against still hold
    assert [segment_mtimes(broker39, topic, 0)[b] for b in BASES] == m
    print(
        f"\ntime scenarios: set up and offctl {set_up:.1f} s, {len(scenarios)} spout runs "
        f"{time.monotonic() - t0 - set_up:.1f} s"
    )
    return {
        "offctl": offctl,
        "ran": ran,
        "times": times,
        "topic": topic,
        "asked": asked,
        "mtimes": {topic: m, touched: [moved if b == 3 else t for b, t in zip(BASES, t_m)]},
        "on": {s["name"]: s["topic"] for s in scenarios},
    }


ALL = {**SCENARIOS, **TOUCHED}


@pytest.mark.parametrize("name", sorted(ALL))
def test_the_spout_starts_where_kafkas_v0_answer_puts_it(timed, name):
    """The real spout: where PartitionManager starts partition 0 and what it emits first, as the module's reading
    of the source says, for every timestamp against the segment files' mtimes."""
    _, _, _, started, first = ALL[name]
    r = timed["ran"][name]
    assert r["started_at"].get("0") == started, (name, timed["times"][name], r)
    assert r["first_emitted"].get("0") == first, (name, r)
    assert r["started_at"].get("1") == 3 and r["first_emitted"].get("1") is None, (name, r)  # its stored log end
    if started == NO_OFFSET:
        out_of_range = [e for e in r["errors"].get("0", []) if "offset out of range: [-5]" in e]
        no_reset = ALL[name][2].get("useStartOffsetTimeIfOffsetOutOfRange") is False
        assert out_of_range or (no_reset and any("OFFSET_OUT_OF_RANGE" in e for e in r["errors"]["0"])), r["errors"]


def v0_answer(mtimes: list[int], at: int, asked: int) -> int:
    """UnifiedLog.legacyFetchOffsetsBefore (UnifiedLog.scala:1381-1424, apache/kafka 3.9.0) for partition 0,
    maxNumOffsets 1, as KafkaUtils.getOffset (v1.2.4) returns it: the entries (max(base, log start), mtime) and (log
    end, the time asked), the last one dated at or before `at`; NO_OFFSET when none is."""
    entries = [(max(base, LOG_START), mtime) for base, mtime in zip(BASES, mtimes)] + [(LOG_END, asked)]
    dated = [offset for offset, when in entries if when <= at]
    return dated[-1] if dated else NO_OFFSET


@pytest.mark.parametrize("name", sorted(ALL))
def test_offctl_says_where_the_spout_starts_or_names_kafkas_rule(timed, name):
    """offctl's resumes_at, where it gives one, is where the real spout starts (the first offset it emits); where it
    says `time` (null), its sentence names Kafka's v0 rule, and the spout started where that rule puts it, read
    against the segment files' mtimes."""
    _, stored, settings, started, first = ALL[name]
    said, r = timed["offctl"][name][0], timed["ran"][name]
    assert (said["resumes"], said["resumes_at"]) == SAYS[name], (name, said)
    assert (timed["offctl"][name][1]["resumes"], timed["offctl"][name][1]["resumes_at"]) == ("stored", 3)
    if said["resumes_at"] is not None or said["resumes"] in NO_EMIT:
        at = said["resumes_at"]
        want = None if said["resumes"] in NO_EMIT or at >= LOG_END else at
        assert r["first_emitted"].get("0") == want, (name, said, r)
        return
    assert "PartitionManager.java at v1.2.4" in said["cite"], said
    answer = v0_answer(timed["mtimes"][timed["on"][name]], timed["times"][name], timed["asked"])
    if isinstance(stored, int) and stored > 0:  # maxOffsetBehind: `current - committed > maxOffsetBehind` (v1.2.4)
        assert started == (answer if answer - stored > settings["maxOffsetBehind"] else stored), name
        return
    assert started == answer, name  # no record, offset <= 0, another topology's with ignoreZkOffsets: the answer
    text = " ".join(said["messages"])
    assert (
        f"the offset Kafka answers for startOffsetTime {timed['times'][name]} (ListOffsets v0 reads segment "
        f"files, not record timestamps"
        in text
        and "last log segment whose file was last modified at or before then" in text
        and "none: the spout goes to -5 (KafkaUtils.NO_OFFSET)" in text
    ), text
    if settings.get("useStartOffsetTimeIfOffsetOutOfRange") is False:
        assert "every fetch is out of range and fails (FailedFetchException): it emits nothing" in text, text
    else:
        assert "its first fetch is out of range: it jumps to the log start (EarliestTime" in text, text


def test_offctls_own_listoffsets_read_the_time_index_not_the_files(timed, kafka39):
    """Why offctl cannot compute the answer: the ListOffsets confluent-kafka sends (v1 and up) answers from the time
    index (record timestamps, 2020 here), the spout's v0 from the files' mtimes. For a time between two records it
    names offset 6 where v0 names nothing; for a time after them all, none (-1) where v0 names segment 3-5."""
    from confluent_kafka import TopicPartition
    from confluent_kafka.admin import OffsetSpec

    tp = TopicPartition(timed["topic"], 0)
    asked = {"at-a-record-time": REC0 + 1500, "between-m1-m2": timed["times"]["none-between-m1-m2"]}
    got = {
        name: kafka39.admin.list_offsets({tp: OffsetSpec.for_timestamp(at)})[tp].result(30).offset
        for name, at in asked.items()
    }
    assert got == {"at-a-record-time": 6, "between-m1-m2": -1}, got
    assert [timed["ran"][n]["started_at"]["0"] for n in ("none-at-a-record-time", "none-between-m1-m2")] == [-5, 3]
