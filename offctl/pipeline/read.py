"""The pipeline's read: every selected spout, group and Trident state read into a Snapshot, ZooKeeper and Kafka
overlapped (log offsets asked for as each topic turns up), and the stores opened and closed around it."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from offctl.core.records.model import (
    JSTORM,
    KAFKA,
    STORM_KAFKA_CLIENT,
    TRIDENT,
    ZOOKEEPER,
    ConsumerKey,
    GroupState,
    KafkaCommit,
    OffsetRecord,
    ReadFinding,
    Snapshot,
    ZkNode,
)
from offctl.core.records.parse import parse_commit, parse_zk_node, storm_groups
from offctl.core.rules.profiles import Profiles
from offctl.core.storm.releases import Library, isolation_level
from offctl.ports import LogStore, SpoutStore
from offctl.settings.connection import Connection, normalize_root
from offctl.settings.run import Reading, Selection


def spout_roots(conn: Connection, selection: Selection) -> list[str]:
    """The zkRoots to list spouts under. Naming groups and no spout asks for those groups only, unless
    --zk-root was given on the command line: the roots of the environment or the sandbox are not listed."""
    if (selection.groups or selection.tridents or selection.jstorms) and not selection.spouts and conn.default_roots:
        return []
    return list(dict.fromkeys(normalize_root(r) for r in conn.zk_roots))


def trident_list(conn: Connection, selection: Selection) -> list[str]:
    """The transactional roots to read Trident spouts under: not those of the environment or the sandbox when
    groups or spouts are named."""
    if (
        (selection.groups or selection.spouts or selection.jstorms)
        and not selection.tridents
        and conn.default_trident_roots
    ):
        return []
    return list(dict.fromkeys(normalize_root(r, "--trident-root") for r in conn.trident_roots))


def jstorm_list(conn: Connection, selection: Selection) -> list[str]:
    """JStorm's roots to read its Kafka spouts under: not those of the environment or the sandbox when other
    consumers are named and no JStorm spout."""
    named_others = selection.groups or selection.spouts or selection.tridents
    if named_others and not selection.jstorms and conn.default_jstorm_roots:
        return []
    return list(dict.fromkeys(normalize_root(r, "--jstorm-root") for r in conn.jstorm_roots))


_kafka_in_child = False  # set by kafka_in_child()


@contextmanager
def kafka_in_child() -> Iterator[None]:
    """Within it, the stores open_stores makes run the Kafka client in a child process
    (offctl/adapters/kafka_child.py), in whatever thread: serve, watch and mcp, which run for hours, so that a
    crash inside librdkafka costs them one cycle or one tool call, not the process. One-shot commands have their
    supervisor (offctl/__main__.py) instead, and no child's cost."""
    global _kafka_in_child
    was, _kafka_in_child = _kafka_in_child, True
    try:
        yield
    finally:
        _kafka_in_child = was


@contextmanager
def open_stores(conn: Connection, *, targeted: bool = False) -> Iterator[tuple[SpoutStore | None, LogStore | None]]:
    """Connect to the stores the connection names; adapters are imported only when used.

    `targeted`: Kafka metadata of the topics asked for only (an audit task), not of the whole cluster."""
    with ExitStack() as stack:
        zk = kafka = None
        if conn.bootstrap_servers:
            if _kafka_in_child:
                from offctl.adapters.kafka_child import ChildKafkaStore as KafkaStore
            else:
                from offctl.adapters.kafka import KafkaStore

            kafka = KafkaStore(
                conn.bootstrap_servers, config=conn.kafka_config, timeout=conn.timeout, targeted=targeted
            )
            stack.callback(kafka.close)
            if not targeted:
                kafka.prefetch()  # metadata travels while ZooKeeper connects
        if conn.zk:
            from offctl.adapters.zookeeper import ZkStore

            zk = stack.enter_context(ZkStore(conn.zk, auth=conn.zk_auth, timeout=conn.timeout))
        yield zk, kafka


def read_committed_consumers(profiles: Profiles | None) -> Callable[[ConsumerKey, Library], bool]:
    """Whether the consumer `key`, read with a library, reads at READ_COMMITTED by its profile
    (releases.isolation_level): its topics' last stable offsets are then read too. Decided once per consumer."""
    if profiles is None or not any(
        isolation_level(t.spout, Library.STORM_KAFKA_CLIENT).stops_at_last_stable
        for t in (profiles.default, *(p.thresholds for p in profiles.profiles))
    ):
        return lambda key, library: False
    known: dict[tuple[ConsumerKey, Library], bool] = {}

    def read_committed(key: ConsumerKey, library: Library) -> bool:
        found = known.get((key, library))
        if found is None:
            spout = profiles.judging(key)[1].spout
            found = known[(key, library)] = isolation_level(spout, library).stops_at_last_stable
        return found

    return read_committed


@dataclass
class _Reading:
    """What read_snapshot has gathered so far, in the order read: ZooKeeper's nodes and the records parsed from them
    per consumer, the notes and read findings, and the topics ZooKeeper's records have asked the broker for."""

    nodes: list[ZkNode] = field(default_factory=list)
    records: dict[ConsumerKey, list[OffsetRecord]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    read_findings: list[ReadFinding] = field(default_factory=list)
    asked: set[str | None] = field(default_factory=set)


def read_snapshot(
    zk: SpoutStore | None,
    kafka: LogStore | None,
    roots: Sequence[str],
    selection: Selection,
    storm_root: str,
    now_ms: int,
    *,
    spouts_by_root: Mapping[str, Sequence[str]] | None = None,
    trident_roots: Sequence[str] = (),
    profiles: Profiles | None = None,
    jstorm_roots: Sequence[str] = (),
) -> tuple[Snapshot, dict[ConsumerKey, list[OffsetRecord]]]:
    """Read everything selected; return it raw, and parsed per consumer.

    Nodes are parsed as they arrive and log offsets are requested as each topic turns up, so the broker
    answers while ZooKeeper is still being read and parsed. `spouts_by_root` names the spout ids to read
    under each root, already listed (an audit task's share); without it each root is listed here. `profiles`:
    the run's; the topics of the consumers they say read committed get their last stable offsets read.
    """
    read_committed = read_committed_consumers(profiles)
    read = _Reading()
    # The groups first: their topics' log offsets are asked for before ZooKeeper is read, and travel meanwhile.
    commits, groups = _read_groups(kafka, selection, read_committed, read) if kafka is not None else ([], [])
    running = None
    if zk is not None:
        for root in roots:
            wanted = _spouts_under(zk, root, selection.spouts, spouts_by_root, read)
            if wanted is not None:
                _read_spouts(zk, kafka, root, wanted, selection.spouts, read)
        _read_tridents(zk, kafka, trident_roots, selection.tridents, read_committed, read)
        _read_jstorms(zk, kafka, jstorm_roots, selection.jstorms, read)
        running = _running_topologies(zk, storm_root, read.notes)
    for record in map(parse_commit, commits):
        read.records.setdefault(record.key, []).append(record)
    cluster = kafka.logs() if kafka is not None else None  # the answers to every request above, awaited last
    apis, apis_why = kafka.api_versions() if kafka is not None else (None, "")
    snapshot = Snapshot(
        captured_ms=now_ms,
        zk_nodes=tuple(read.nodes),
        commits=tuple(commits),
        groups=tuple(groups),
        cluster=cluster,
        running=running,
        notes=tuple(read.notes),
        read_findings=tuple(read.read_findings),
        incomplete=tuple(kafka.notes) if kafka is not None else (),
        broker_apis=apis,
        broker_apis_why=apis_why,
    )
    return snapshot, read.records


def _read_groups(
    kafka: LogStore, selection: Selection, read_committed: Callable[[ConsumerKey, Library], bool], read: _Reading
) -> tuple[list[KafkaCommit], list[GroupState]]:
    """Read the groups named and those --all-groups keeps (the ones Storm committed for): their commits, narrowed
    to --topic, and their states; then ask for their topics' log offsets."""
    named, listed = _groups_to_read(kafka, selection)
    commits = [
        c for c in kafka.group_commits(named + listed) if not selection.topic or c.topic == selection.topic
    ]  # --topic narrows groups
    keep = set(named) | storm_groups(commits)
    commits = [c for c in commits if c.group in keep]
    if listed:
        kept = len(keep - set(named))
        read.notes.append(
            f"--all-groups: {kept} of {len(listed)} other group{'s' if len(listed) != 1 else ''} "
            f"carry Storm commit metadata and are included"
        )
    groups = kafka.group_states(sorted(keep))
    read.read_findings += _groups_without_commits(named, commits, selection.topic)
    _request_group_logs(kafka, selection, commits, read_committed)
    return commits, groups


def _groups_to_read(kafka: LogStore, selection: Selection) -> tuple[list[str], list[str]]:
    """The groups named, and the others to read besides them: --all-groups' listing (an audit task's share when
    it was listed already), none without it."""
    named = list(dict.fromkeys(selection.groups))
    if selection.listed_groups is not None:
        listed = [g for g in selection.listed_groups if g not in named]
    else:
        listed = [g for g in kafka.list_groups() if g not in named] if selection.all_groups else []
    return named, listed


def _groups_without_commits(
    named: Sequence[str], commits: Sequence[KafkaCommit], topic: str | None
) -> list[ReadFinding]:
    """A read finding for each group named that has no committed offset (on --topic, when given)."""
    with_commits = {c.group for c in commits}
    return [
        ReadFinding(ConsumerKey(KAFKA, g), f"group '{g}' has no committed offsets" + (f" on {topic}" if topic else ""))
        for g in named
        if g not in with_commits
    ]


def _request_group_logs(
    kafka: LogStore,
    selection: Selection,
    commits: Sequence[KafkaCommit],
    read_committed: Callable[[ConsumerKey, Library], bool],
) -> None:
    """Ask for the log offsets of --topic, the reset scope's topics and the committed topics, and for the last
    stable offsets of the topics of the groups that read committed."""
    kafka.request_logs(
        ([selection.topic] if selection.topic else []) + list(selection.log_topics) + [c.topic for c in commits]
    )
    topics = [c.topic for c in commits if read_committed(ConsumerKey(KAFKA, c.group), Library.STORM_KAFKA_CLIENT)]
    if topics:
        kafka.request_logs(topics, last_stable=True)


def _spouts_under(
    zk: SpoutStore, root: str, spouts: Sequence[str], spouts_by_root: Mapping[str, Sequence[str]] | None, read: _Reading
) -> list[str] | None:
    """The spout ids to read under one zkRoot: the audit task's share when given, else those named, else every
    one listed there; None when the root does not exist (a note, and a read finding per spout named)."""
    if spouts_by_root is not None:
        return list(spouts_by_root.get(root, ()))
    ids = zk.spout_ids(root)
    if ids is None:
        read.notes.append(f"zkRoot {root} does not exist")
        read.read_findings += [
            ReadFinding(ConsumerKey(ZOOKEEPER, s, root), f"spout id '{s}': zkRoot {root} does not exist")
            for s in spouts
        ]
        return None
    return list(spouts) or ids


def _read_spouts(
    zk: SpoutStore, kafka: LogStore | None, root: str, wanted: list[str], spouts: Sequence[str], read: _Reading
) -> None:
    """Read the partition records of the `wanted` spouts under one zkRoot, then find what was not read: the nodes
    storm-kafka never reads, and the spouts named that have no record."""
    unread_before = len(getattr(zk, "unread", ()))
    found = _read_partitions(zk, kafka, root, wanted, read)
    read.read_findings += [
        ReadFinding(ConsumerKey(ZOOKEEPER, sid, root), f"{path}: {why}", "UNREAD_NODE", path)
        for sid, path, why in getattr(zk, "unread", ())[unread_before:]
    ]
    read.read_findings += [
        ReadFinding(ConsumerKey(ZOOKEEPER, s, root), f"spout id '{s}' has no partition records under {root}")
        for s in spouts
        if s in wanted and not any(f == s or f.startswith(s + "/") for f in found)
    ]


def _read_partitions(zk: SpoutStore, kafka: LogStore | None, root: str, wanted: list[str], read: _Reading) -> set[str]:
    """Parse each partition node as it arrives and ask for its topics' log offsets the first time each turns up;
    return the spout ids that had a node."""
    nodes, records, asked = read.nodes, read.records, read.asked
    found: set[str] = set()
    key = bucket = None
    for node in zk.read_partitions(root, wanted):
        nodes.append(node)
        record = parse_zk_node(node)
        if record.key is not key:  # a spout's nodes come together, and share one key object
            key = record.key
            found.add(node.spout_id)
            bucket = records.setdefault(key, [])
        bucket.append(record)
        if kafka is not None:
            for topic in (record.topic, node.folder_topic) if node.folder_topic else (record.topic,):
                if topic not in asked:
                    asked.add(topic)
                    if topic:
                        kafka.request_logs([topic])
    return found


def _read_tridents(
    zk: SpoutStore,
    kafka: LogStore | None,
    trident_roots: Sequence[str],
    tridents: Sequence[str],
    read_committed: Callable[[ConsumerKey, Library], bool],
    read: _Reading,
) -> None:
    """Read the Trident Kafka spouts' state under each transactional root (those named, or every one), then note
    the states read_trident left out (when none is named) and find the ones named that are not there."""
    if not trident_roots:
        return
    seen: set[str] = set()
    for root in trident_roots:
        seen |= _read_trident_root(zk, kafka, root, tridents, read_committed, read)
    read.notes += [n for n in zk.trident_notes if not tridents]
    read.read_findings += [
        ReadFinding(
            ConsumerKey(TRIDENT, t, ", ".join(trident_roots)),
            f"no Trident Kafka spout state '{t}' under {', '.join(trident_roots)}",
        )
        for t in tridents
        if t not in seen
    ]


def _read_trident_root(
    zk: SpoutStore,
    kafka: LogStore | None,
    root: str,
    tridents: Sequence[str],
    read_committed: Callable[[ConsumerKey, Library], bool],
    read: _Reading,
) -> set[str]:
    """Parse each Trident spout's node under one root as it arrives (those named, or every one) and ask for its
    topics' log offsets; return the txStateIds read."""
    seen: set[str] = set()
    for node in zk.read_trident(root):
        if tridents and node.spout_id not in tridents:
            continue
        seen.add(node.spout_id)
        read.nodes.append(node)
        record = parse_zk_node(node)
        read.records.setdefault(record.key, []).append(record)
        if kafka is not None:
            _ask_trident_logs(kafka, read.asked, record, node, read_committed)
    return seen


def _ask_trident_logs(
    kafka: LogStore,
    asked: set[str | None],
    record: OffsetRecord,
    node: ZkNode,
    read_committed: Callable[[ConsumerKey, Library], bool],
) -> None:
    """Ask for the log offsets of a Trident record's topics the first time each turns up, and for its topic's last
    stable offsets when the storm-kafka-client spout that wrote it reads committed."""
    for topic in (record.topic, node.folder_topic):
        if topic and topic not in asked:
            asked.add(topic)
            kafka.request_logs([topic])
    if record.topic and record.trident == STORM_KAFKA_CLIENT and read_committed(record.key, Library.STORM_KAFKA_CLIENT):
        kafka.request_logs([record.topic], last_stable=True)  # asked once per topic (KafkaStore)


def _read_jstorms(
    zk: SpoutStore, kafka: LogStore | None, roots: Sequence[str], named: Sequence[str], read: _Reading
) -> None:
    """Read JStorm's Kafka spouts under each of its roots (those named, or every one) as they arrive, ask for their
    topics' log offsets, and find the nodes the spout never reads (under the root they were found under) and the
    spouts named that have no node."""
    if not roots:
        return
    seen: set[str] = set()
    for root in roots:
        unread_before = len(getattr(zk, "unread", ()))
        for node in zk.read_jstorm(root, named):
            seen.add(node.spout_id)
            read.nodes.append(node)
            record = parse_zk_node(node)
            read.records.setdefault(record.key, []).append(record)
            topic = node.folder_topic
            if kafka is not None and topic not in read.asked:
                read.asked.add(topic)
                kafka.request_logs([topic])
        read.read_findings += [
            ReadFinding(ConsumerKey(JSTORM, sid, root), f"{path}: {why}", "UNREAD_NODE", path)
            for sid, path, why in getattr(zk, "unread", ())[unread_before:]
        ]
    where = ", ".join(roots)
    read.read_findings += [
        ReadFinding(ConsumerKey(JSTORM, s, where), f"no JStorm Kafka spout '{s}' under {where}")
        for s in named
        if s not in seen
    ]


def _running_topologies(zk: SpoutStore, storm_root: str, notes: list[str]) -> frozenset[str] | None:
    """The topologies running under Storm's root; None, with a note, when the root has no storms/ node."""
    running = zk.running_topologies(storm_root)
    if running is None:
        notes.append(f"Storm's root {storm_root} has no storms/ node: STALE_TOPOLOGY not checked (set --storm-root)")
    return running


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Hold Python's cycle collector while a read builds its objects. A read keeps about ten objects per
    partition, all live until the report is made, so the collector's full passes over that growing heap
    found nothing and cost a tenth of inspect at 100,000 partitions (benchmarks/bench_serve.py). Reference
    counting still frees everything else; the collector runs again, as it was, afterwards. The same holds while
    the report is rendered: the JSON document of an all-broken fleet of 100,000 partitions is 300,000 new dicts,
    and the collector's passes over the report they set off cost 0.2 s."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def read_selected(
    reading: Reading, zk: SpoutStore | None, kafka: LogStore | None, now_ms: int, roots: list[str] | None = None
) -> tuple[Snapshot, dict[ConsumerKey, list[OffsetRecord]]]:
    """read_snapshot of what the reading selects: the spouts under its roots (`roots`: spout_roots, already made),
    its groups, its Trident roots."""
    conn, selection = reading.conn, reading.selection
    return read_snapshot(
        zk,
        kafka,
        spout_roots(conn, selection) if roots is None else roots,
        selection,
        conn.storm_root,
        now_ms,
        trident_roots=trident_list(conn, selection),
        profiles=reading.profiles,
        jstorm_roots=jstorm_list(conn, selection),
    )
