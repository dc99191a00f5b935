"""`offctl storm-kafka-monitor` as a library call: one spout's lag for Storm UI, within a deadline.

Storm UI runs `storm-kafka-monitor` once per Kafka spout and waits for it with no time limit (TopologySpoutLag, via
ShellUtils with timeout 0: storm-core/src/jvm/org/apache/storm/utils/TopologySpoutLag.java@v1.2.4, ShellUtils.java
@v1.2.4 and storm-client/.../ShellCommandRunnerImpl.java@v2.8.8). This module answers the question the original
answers (KafkaOffsetLagUtil, KOLU) with offctl's one pipeline (offctl.pipeline: read, analyze, time lag), and bounds
it: `answer_within` always returns within its deadline, with the JSON object, or the failure line naming what was
still being read.

Where the stores are:
- new spouts (storm-kafka-client): the group's commits and the topics' logs on the brokers of -b (or of the
  consumer properties' bootstrap.servers, which win as KOLU's putAll makes them); Storm's ZooKeeper, where the
  context names one, for the running topologies (a commit of another topology);
- old spouts (storm-kafka, `-o`): the spout's records and Storm's running topologies in the ZooKeeper of -z; the
  partitions and their brokers in Kafka's broker registry under -r in that same ZooKeeper (KOLU@v1.2.4 reads it
  there), or the StaticHosts partitions of -p; the log offsets from the registry's brokers, or for StaticHosts from
  the context's bootstrap-servers, else the -l leaders.
- JStorm's Kafka spouts: Storm UI never asks for one (JStorm runs its own UI). Asked as an old spout whose -n is the
  spout's folder under a root --jstorm-root names, <root>/kafka/offset/topic/<topic>/<client id>, the monitor reads
  it as JStorm's spout and answers as inspect does (resumes at the stored offset + 1); the same folder under a root
  not named is read as storm-kafka's node, with a note saying to name the root.
"""

from __future__ import annotations

import os
import posixpath
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from offctl.core.records.model import JSTORM, KAFKA, ZOOKEEPER, ConsumerKey
from offctl.core.storm import jstorm
from offctl.core.storm.releases import Isolation
from offctl.errors import OffctlError, StoreUnavailable, UsageError
from offctl.faces.stormui.args import LagQuery
from offctl.faces.stormui.javaprops import parse_properties_bytes, translate
from offctl.inputs import MAX_CONFIG_BYTES, check_bootstrap_servers, check_zk_hosts, read_bounded, redact
from offctl.pipeline.assess import assess
from offctl.pipeline.read import read_snapshot
from offctl.render import lagdoc
from offctl.settings.connection import normalize_root
from offctl.settings.kinds import DEADLINE_S
from offctl.settings.run import Reading, Selection, check_spout_id

TIME_LAG_SHARE = 0.3  # of what is left of the deadline once the offsets are read, at most, for the time lags


@dataclass(frozen=True)
class MonitorSettings:
    """What the run takes from offctl's settings (flags, environment, context), resolved as every command resolves
    them (offctl.settings.resolve): the connection (Storm's ZooKeeper for new spouts' running topologies; the brokers
    of StaticHosts old spouts; client settings), the profiles each consumer is judged by, the time-lag budget and the
    deadline, and the commit-expiry options (COMMIT_EXPIRY_RISK in `findings`, as inspect judges it). Nothing here
    comes from Storm UI."""

    reading: Reading = Reading()  # its selection is each query's, made from Storm UI's arguments
    deadline_s: float = DEADLINE_S


class Progress:
    """What the run is doing now, and what it has not read yet: said in the failure line when the deadline
    passes."""

    def __init__(self) -> None:
        self.doing = "starting"
        self.unread: list[str] = []

    def step(self, doing: str, *unread: str) -> None:
        self.doing, self.unread = doing, list(unread)


class DeadlineExceeded(OffctlError):
    """The deadline passed before the answer was ready."""

    exit_code = 0


def failure_line(exc: OffctlError) -> str:
    """The original's failure line for an offctl error: its class, then the message with every secret redacted."""
    return lagdoc.failure(f"offctl.{type(exc).__name__}", redact(str(exc)))


def answer_within(
    query: LagQuery, settings: MonitorSettings, started: float | None = None
) -> tuple[str, list[str], bool]:
    """The text to print (the JSON object, or the failure line), notes for stderr, and whether the reading thread
    has finished (False: the deadline passed while it still waited on a server; the caller ends the process, as
    nothing it holds needs closing). Never raises, never waits past `settings.deadline_s` after `started`
    (time.monotonic(); default now; the command passes offctl.STARTED, when the process began offctl)."""
    progress = Progress()
    outcome: dict[str, object] = {}
    ready = threading.Event()
    deadline = (time.monotonic() if started is None else started) + settings.deadline_s

    def work() -> None:
        try:
            outcome["answer"] = answer(query, settings, progress, deadline)
        except OffctlError as exc:
            outcome["error"] = failure_line(exc)
        except Exception as exc:  # noqa: BLE001 - a bug still answers the UI, with its class and message
            outcome["error"] = lagdoc.failure(f"offctl internal error {type(exc).__name__}", redact(str(exc)))
        finally:
            ready.set()

    worker = threading.Thread(target=work, name="offctl-storm-kafka-monitor", daemon=True)
    worker.start()
    ready.wait(max(deadline - time.monotonic(), 0))
    if "answer" in outcome:
        text, notes = outcome["answer"]  # type: ignore[misc]
        return text, notes, not worker.is_alive()
    if "error" in outcome:
        return str(outcome["error"]), [], not worker.is_alive()
    unread = f" (not read: {', '.join(progress.unread)})" if progress.unread else ""
    exc = DeadlineExceeded(f"no answer within the deadline of {settings.deadline_s:g}s: still {progress.doing}{unread}")
    return failure_line(exc), [], False


def answer(query: LagQuery, settings: MonitorSettings, progress: Progress, deadline: float) -> tuple[str, list[str]]:
    """The JSON text and stderr notes for `query`, read within `deadline` (time.monotonic()); OffctlError when a
    store cannot be read."""
    if query.mode == "new":
        return _new_spout(query, settings, progress, deadline)
    return _old_spout(query, settings, progress, deadline)


def _left(deadline: float) -> float:
    """The time-out to give a store: what is left of the deadline, less a margin for the answer, at least 0.5s."""
    return round(max(deadline - time.monotonic() - 0.5, 0.5), 1)


def _hosts(text: str) -> str:
    """A host list as Storm passes it (`h1:2181,h2:2181,`: TopologySpoutLag appends a comma to each), without its
    empty entries, as ZooKeeper's ConnectStringParser and Java's String.split drop them (kazoo refuses them); a
    chroot, from the first '/', is kept."""
    hosts, slash, chroot = text.partition("/")
    return ",".join(h for h in (s.strip() for s in hosts.split(",")) if h) + slash + chroot


def _client_settings(
    query: LagQuery, settings: MonitorSettings
) -> tuple[dict[str, str], str, str, list[str], str | None]:
    """librdkafka settings, bootstrap servers and group, as KOLU builds its consumer: -s, -m, then the -c file over
    them (putAll: the file's bootstrap.servers and group.id win over -b and -g); the login of the JAAS file Storm's
    script gives its JVM where the properties have none (jaas_file)."""
    props: dict[str, str] = {}
    if query.consumer_config is not None:
        props = parse_properties_bytes(read_bounded(Path(query.consumer_config), "consumer-config", MAX_CONFIG_BYTES))
    client = translate(
        props,
        query.security_protocol,
        query.sasl_mechanism,
        jaas_file=jaas_file(),
        given=settings.reading.conn.kafka_config,
    )
    return (
        client.settings,
        client.bootstrap or query.bootstrap or "",
        client.group or query.group or "",
        list(client.notes),
        client.isolation_level,
    )


def jaas_file() -> str | None:
    """The text of $STORM_CONF_DIR/storm_jaas.conf, which bin/storm-kafka-monitor passes to its JVM as
    -Djava.security.auth.login.config when it exists (every tag, v1.1.0-v2.8.8; bin/storm exports STORM_CONF_DIR to
    the UI, whose children inherit it); None without it."""
    conf_dir = os.environ.get("STORM_CONF_DIR")
    if not conf_dir:
        return None
    path = Path(conf_dir) / "storm_jaas.conf"
    if not path.is_file():
        return None
    return read_bounded(path, "storm_jaas.conf", MAX_CONFIG_BYTES).decode("utf-8", "replace")


def _new_spout(
    query: LagQuery, settings: MonitorSettings, progress: Progress, deadline: float
) -> tuple[str, list[str]]:
    kafka_config, bootstrap, group, notes, isolation_level = _client_settings(query, settings)
    if isolation_level is not None:  # the spout's own consumer setting, as TopologySpoutLag passes it: over offctl's
        profiles = settings.reading.profiles.with_isolation_level(Isolation(isolation_level))
        settings = replace(settings, reading=replace(settings.reading, profiles=profiles))
    bootstrap = _hosts(bootstrap)
    if not bootstrap:
        raise UsageError("bootstrap-brokers names no broker")
    if not group.strip():
        raise UsageError("groupid names no group")
    check_bootstrap_servers(bootstrap)
    topics = [t for t in query.topics if t]
    selection = Selection(groups=(group,), log_topics=tuple(topics))
    from offctl.adapters.kafka import KafkaStore

    progress.step(f"connecting to Kafka at {bootstrap}", "consumerCommittedOffset", "logHeadOffset")
    kafka = KafkaStore(
        bootstrap, config={**settings.reading.conn.kafka_config, **kafka_config}, timeout=_left(deadline), targeted=True
    )
    try:
        zk = _storm_zk(settings, progress, deadline, notes)
        try:
            progress.step(
                f"reading group {group!r}'s commits and the log offsets of {', '.join(topics)} from Kafka "
                f"at {bootstrap}",
                "consumerCommittedOffset",
                "logHeadOffset",
            )
            snapshot, records = read_snapshot(
                zk,
                kafka,
                [],
                selection,
                settings.reading.conn.storm_root,
                int(time.time() * 1000),
                profiles=settings.reading.profiles,
            )
            _complete(snapshot.incomplete)
            report = _assess(snapshot, kafka, settings, records, progress, deadline)
        finally:
            if zk is not None:
                zk.close()
        cluster = snapshot.cluster or {}
        asked = lagdoc.Asked(
            ConsumerKey(KAFKA, group), old=False, partitions={t: sorted(cluster[t]) for t in topics if t in cluster}
        )
        notes += [
            f"topic {t}: no such topic on the brokers (KafkaConsumer.partitionsFor finds none): no rows"
            for t in topics
            if t not in cluster
        ]
        doc, more = lagdoc.document(report, asked, settings.reading.profiles, cluster)
        return lagdoc.render(doc), notes + more
    finally:
        kafka.close()


def _storm_zk(settings: MonitorSettings, progress: Progress, deadline: float, notes: list[str]):
    """Storm's ZooKeeper from the context, for the running topologies; None without one or when it does not answer
    (the commits' topology is then not checked, said in a note): the lag does not depend on it."""
    if not settings.reading.conn.zk:
        return None
    from offctl.adapters.zookeeper import ZkStore

    progress.step(
        f"connecting to Storm's ZooKeeper at {settings.reading.conn.zk}", "consumerCommittedOffset", "logHeadOffset"
    )
    store = ZkStore(settings.reading.conn.zk, auth=settings.reading.conn.zk_auth, timeout=min(_left(deadline), 3.0))
    try:
        return store.__enter__()
    except StoreUnavailable as exc:
        notes.append(f"running topologies not read: {exc}")
        return None


def _complete(incomplete: tuple[str, ...]) -> None:
    """A partial read is a failure for the UI: the original prints a row for every partition or fails."""
    if incomplete:
        raise StoreUnavailable("; ".join(incomplete))


def _assess(snapshot, kafka, settings: MonitorSettings, records, progress: Progress, deadline: float):
    """The pipeline on what was read: analysis, then the time lags (and the reads after them: retention, commit
    expiry with the run's options), within a share of what is left."""
    reading = settings.reading.within(max(deadline - time.monotonic() - 1.0, 0.0) * TIME_LAG_SHARE)
    progress.step("reading the messages the spout resumes at, for the time lag", "timeLagSeconds")
    return assess(snapshot, kafka, reading, records)


def _old_spout(
    query: LagQuery, settings: MonitorSettings, progress: Progress, deadline: float
) -> tuple[str, list[str]]:
    from offctl.adapters.zookeeper import ZkStore

    zk_hosts, node, root, spout = _old_spout_node(query)
    notes: list[str] = []
    key = _jstorm_key(query, node, settings.reading.conn.jstorm_roots, notes) or ConsumerKey(ZOOKEEPER, spout, root)
    progress.step(f"connecting to ZooKeeper at {zk_hosts}", "consumerCommittedOffset", "logHeadOffset")
    with ZkStore(zk_hosts, auth=settings.reading.conn.zk_auth, timeout=_left(deadline)) as zk:
        progress.step(f"reading {node} in ZooKeeper at {zk_hosts}", "consumerCommittedOffset", "logHeadOffset")
        if node not in zk.children([node]):
            # KOLU@v1.2.4:386-388 throws IllegalArgumentException("zk-node '<node>' dose not exists.")
            raise StoreUnavailable(f"zk-node '{node}' does not exist in ZooKeeper at {zk_hosts}")
        if query.zk_brokers_root is not None:
            partitions, bootstrap = _registry_partitions(zk, query, zk_hosts, progress, notes)
            if not partitions:  # -w matched no topic: KOLU prints {}
                return lagdoc.render({}), notes
        else:
            partitions = {query.topics_arg: _static_partitions(query.partitions or ())}
            bootstrap = settings.reading.conn.bootstrap_servers or ",".join(
                _leader(lead) for lead in query.leaders or ()
            )
        snapshot, report = _old_spout_read(zk, key, partitions, bootstrap, settings, progress, deadline)
    cluster = snapshot.cluster or {}
    asked = lagdoc.Asked(key, old=True, partitions=partitions, folder=query.wildcard or key.store == JSTORM)
    doc, more = lagdoc.document(report, asked, settings.reading.profiles, cluster)
    return lagdoc.render(doc), notes + more


def _old_spout_node(query: LagQuery) -> tuple[str, str, str, str]:
    """The ZooKeeper hosts and the spout's node as KOLU takes them (-z, -n: <zkRoot>/<spout id>), and the zkRoot and
    spout id the node names."""
    zk_hosts = _hosts(query.zk_servers or "")
    if not zk_hosts:
        raise UsageError("zk-servers names no server")
    check_zk_hosts(zk_hosts)
    node = (query.zk_node or "").removesuffix("/") or "/"  # KOLU@v1.2.4 getOldConsumerOffsetsFromZk strips one '/'
    if not node.startswith("/") or node == "/":
        raise UsageError(f"zk-node {node!r}: expected the spout's node, <zkRoot>/<spout id>")
    root, spout = posixpath.split(node)
    check_spout_id(spout)
    return zk_hosts, node, root, spout


def _jstorm_key(query: LagQuery, node: str, roots: tuple[str, ...], notes: list[str]) -> ConsumerKey | None:
    """The JStorm Kafka spout -n names, <root>/kafka/offset/topic/<topic>/<client id> under a root of --jstorm-root
    (its topic must be -t's: the spout reads one topic, kafka.topic); None for any other node, with a note when the
    node is laid out as one under a root --jstorm-root does not name."""
    for root in (normalize_root(r, "--jstorm-root") for r in roots):
        base = jstorm.spouts_path(root) + "/"
        named = jstorm.split_id(node[len(base) :]) if node.startswith(base) else None
        if named is None:
            continue
        if query.wildcard or query.topics_arg != named[0]:
            raise UsageError(
                f"zk-node {node!r} is JStorm's Kafka spout of topic {named[0]!r} (under --jstorm-root {root}): it "
                f"reads that one topic, so ask for it with -t {named[0]} and no -w"
            )
        return ConsumerKey(JSTORM, jstorm.consumer_id(*named), root)
    root, sep, rest = node.rpartition(f"/{jstorm.LAYOUT}/")
    if sep and jstorm.split_id(rest) is not None:
        notes.append(
            f"zk-node {node} is laid out as a JStorm Kafka spout's (<root>/{jstorm.LAYOUT}/<topic>/<client id>): read "
            f"as storm-kafka's; give --jstorm-root {root or '/'} to read it as JStorm's"
        )
    return None


def _registry_partitions(
    zk, query: LagQuery, zk_hosts: str, progress: Progress, notes: list[str]
) -> tuple[dict[str, list[int]], str]:
    """The partitions of the topics asked for (-t, or -w's pattern) and the brokers, from Kafka's broker registry
    in ZooKeeper (-b); none, with a note, when -w matches no topic."""
    progress.step(
        f"reading Kafka's broker registry under {query.zk_brokers_root} in ZooKeeper at {zk_hosts}",
        "consumerCommittedOffset",
        "logHeadOffset",
    )
    registry = zk.read_broker_registry(query.zk_brokers_root, query.topics_arg, query.wildcard)
    if registry.missing:
        # KOLU@v1.2.4 306-349 fails the whole run on a topic (or, with -w, a topics node) it cannot list
        raise StoreUnavailable(
            "Kafka's broker registry in ZooKeeper at "
            + zk_hosts
            + ": "
            + "; ".join(f"{what}: {why}" for what, why in registry.missing.items())
        )
    partitions = {t: [pl.partition for pl in parts] for t, parts in registry.topics.items()}
    # a partition without a leader in the registry: its log end comes from the brokers all the same
    notes += [f"{t}/{pl.partition}: {pl.why}" for t, parts in registry.topics.items() for pl in parts if pl.why]
    notes += list(registry.notes)
    bootstrap = ",".join(registry.brokers)
    if not bootstrap and partitions:
        raise StoreUnavailable(
            f"no broker with a host and port is registered under {registry.root}ids in ZooKeeper at {zk_hosts}"
        )
    if not partitions:
        notes.append(f"no topic under {registry.root}topics matches {query.topics_arg!r}")
    return partitions, bootstrap


def _old_spout_read(
    zk,
    key: ConsumerKey,
    partitions: dict[str, list[int]],
    bootstrap: str,
    settings: MonitorSettings,
    progress: Progress,
    deadline: float,
):
    """The spout's records (storm-kafka's, or JStorm's) and its topics' log offsets, read and assessed: the snapshot
    and the report."""
    from offctl.adapters.kafka import KafkaStore

    check_bootstrap_servers(bootstrap)
    topics = list(partitions)
    js = key.store == JSTORM
    selection = Selection(
        spouts=() if js else (key.consumer,), jstorms=(key.consumer,) if js else (), log_topics=tuple(topics)
    )
    progress.step(
        f"reading the log offsets of {', '.join(topics) or 'no topic'} from Kafka at {bootstrap}", "logHeadOffset"
    )
    kafka = KafkaStore(
        bootstrap, config=dict(settings.reading.conn.kafka_config), timeout=_left(deadline), targeted=True
    )
    try:
        snapshot, records = read_snapshot(
            zk,
            kafka,
            [] if js else [key.zk_root],
            selection,
            settings.reading.conn.storm_root,
            int(time.time() * 1000),
            jstorm_roots=[key.zk_root] if js else (),
        )
        _complete(snapshot.incomplete)
        return snapshot, _assess(snapshot, kafka, settings, records, progress, deadline)
    finally:
        kafka.close()


def _static_partitions(given: tuple[str, ...]) -> list[int]:
    """-p as KOLU reads it: Integer.parseInt of each (KOLU@v1.2.4 getOldConsumerOffsetsFromZk: a
    NumberFormatException fails the run)."""
    out = []
    for p in given:
        try:
            out.append(int(p, 10))
        except ValueError:
            raise UsageError(f"partitions: {p!r} is not a partition number") from None
        if not 0 <= out[-1] <= 2**31 - 1:
            raise UsageError(f"partitions: {p!r} is not a partition number")
    return out


def _leader(lead: str) -> str:
    """A -l entry, host:port (KOLU@v1.2.4 splits it on ':')."""
    host, sep, port = lead.strip().rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UsageError(f"leaders: {lead!r} is not host:port")
    return f"{host}:{port}"
