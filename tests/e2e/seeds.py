"""What the end-to-end tests seed on the fixture servers (tests/conftest.py), written once: a fixture on each
broker, a spout's records, Storm's root, the `orders` fleet, a config file naming the servers."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import storm_record

ON_KAFKA_39 = (
    "`{name}` on Apache Kafka 3.9 (`broker39`), the broker of the storm-kafka era, for the tests whose only "
    "consumer is an old spout."
)


def on_each_broker(name: str, build: Callable):
    """Two fixtures made of `build`: `name` on Apache Kafka 4.4 (`kafka`, `broker`) and `name`39 on Apache Kafka 3.9
    (`kafka39`, `broker39`). `build` is called as a fixture is, with those it names of zk, zk_server, kafka, broker,
    names and tmp_path; its docstring is the fixture's."""
    wanted = inspect.signature(build).parameters

    def called(**given):
        return build(**{k: given[k] for k in wanted})

    def on_44(zk, zk_server, kafka, broker, names, tmp_path):
        return called(zk=zk, zk_server=zk_server, kafka=kafka, broker=broker, names=names, tmp_path=tmp_path)

    def on_39(zk, zk_server, kafka39, broker39, names, tmp_path):
        return called(zk=zk, zk_server=zk_server, kafka=kafka39, broker=broker39, names=names, tmp_path=tmp_path)

    on_44.__doc__, on_39.__doc__ = build.__doc__, ON_KAFKA_39.format(name=name)
    return pytest.fixture(on_44, name=name), pytest.fixture(on_39, name=name + "39")


def spout(zk, root: str, spout_id: str, topic: str, offsets: Mapping[int, int], **record) -> None:
    """storm-kafka's records of spout `spout_id` under zkRoot `root`: partition p at offsets[p] of `topic`
    (storm_record's keywords, topology_id and broker, for the rest)."""
    for partition, offset in offsets.items():
        zk.create(
            f"{root}/{spout_id}/partition_{partition}", storm_record(topic, partition, offset, **record), makepath=True
        )


def storm_root(zk, path: str, *running: str) -> str:
    """Storm's root at `path`, with the storm ids `running` listed under storms/ (none: nothing runs); returns it."""
    zk.ensure_path(f"{path}/storms")
    for storm_id in running:
        zk.create(f"{path}/storms/{storm_id}", b"", makepath=True)
    return path


def orders_fleet(zk, kafka, names) -> SimpleNamespace:
    """A topic of 3 partitions of 10 messages, the spout `orders` at 4, 5, 6 (zkRoot ROOT/spouts) and an empty
    Storm root (ROOT/storm): its topic, root, storm_root, and path(p), the node of partition p."""
    topic = kafka.filled_topic(names("orders"), 3, 10)
    root = names.root + "/spouts"
    spout(zk, root, "orders", topic, {p: 4 + p for p in range(3)})
    return SimpleNamespace(
        topic=topic,
        root=root,
        storm_root=storm_root(zk, names.root + "/storm"),
        path=lambda p: f"{root}/orders/partition_{p}",
    )


def leader(kafka, topic: str, partition: int) -> str:
    """The partition's leader as the broker's metadata names it, host:port: what a spout writes as its broker."""
    md = kafka.admin.list_topics(topic, timeout=30)
    broker = md.brokers[md.topics[topic].partitions[partition].leader]
    return f"{broker.host}:{broker.port}"


def fixture_config(path: Path, zk_server, broker, zk_root: str, storm_root: str, more: str = "") -> Path:
    """A config file at `path`, readable by its owner alone, whose default context `fixture` names the fixture
    servers, followed by `more` (the context's further settings first); returns the path."""
    path.write_text(f"""default-context = "fixture"

[contexts.fixture]
zk = "{zk_server.address}"
zk-root = ["{zk_root}"]
bootstrap-servers = "{broker.address}"
storm-root = "{storm_root}"
{more}""")
    path.chmod(0o600)
    return path
