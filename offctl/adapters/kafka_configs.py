"""KafkaStore's reads of configs (kafka.py): a topic's retention as the broker applies it, and broker settings."""

from __future__ import annotations

import re
from collections.abc import Iterable

from confluent_kafka import KafkaException
from confluent_kafka.admin import ConfigResource, ResourceType

from offctl.adapters.kafka_client import KafkaClient, kafka_error
from offctl.core.records.model import TopicRetention, is_topic_name


class KafkaConfigs(KafkaClient):
    def read_topic_configs(self, topics: Iterable[str]) -> dict[str, TopicRetention]:
        """retention.ms, retention.bytes and cleanup.policy of each topic as the broker applies them (DescribeConfigs,
        one request). Apache Kafka reports every config of a topic, set on it or not, and the value is used whatever
        source the broker names: a topic without retention.ms reports the broker's log.retention.* or Kafka's 7 days,
        and Kafka 3.9 and 4.4 both call the first a default (DEFAULT_CONFIG; measured with confluent-kafka 2.16 and
        log.retention.hours 24 in server.properties). A topic the broker refuses (no DescribeConfigs permission) or
        does not know, or a broker that cannot answer, gives a TopicRetention that reports nothing and says why: the
        retention risk is then not estimated, the rest of the report stands. A setting not reported, or not a
        number, is None."""
        names = [t for t in dict.fromkeys(topics) if is_topic_name(t)]
        if not names:
            return {}
        try:
            futures = self.admin.describe_configs(
                [ConfigResource(ResourceType.TOPIC, t) for t in names], request_timeout=self.timeout
            )
        except (KafkaException, ValueError) as exc:
            why = f"the broker's topic configs were not read ({exc})"
            return {t: TopicRetention(t, why=why) for t in names}
        out: dict[str, TopicRetention] = {}
        for resource, future in futures.items():
            topic = resource.name
            try:
                entries = future.result(timeout=self.timeout + 5)
            except (KafkaException, TimeoutError) as exc:
                err = kafka_error(exc)
                out[topic] = TopicRetention(
                    topic,
                    why=f"the broker did not report topic {topic}'s configs ({err.str() if err else 'no answer'})",
                )
                continue
            out[topic] = TopicRetention(
                topic,
                _long(entries.get("retention.ms")),
                _long(entries.get("retention.bytes")),
                _value(entries.get("cleanup.policy")),
            )
        return out

    def read_broker_config(self, names: Iterable[str]) -> tuple[dict[str, str], str]:
        """The broker settings `names` as one broker reports them (DescribeConfigs of a BROKER resource: the
        first broker DescribeCluster names), and why the others are not reported ("" when all are).

        Apache Kafka reports every broker setting, defaults included (offsets.retention.minutes 10080 where
        server.properties does not set it): the value it applies, used whatever source it names. Never fails: a
        broker that refuses (no DescribeConfigs permission on the cluster: CLUSTER_AUTHORIZATION_FAILED), lacks
        DescribeConfigs (before Kafka 0.11) or the setting, or does not answer in time leaves the setting
        unreported, with the reason, and the caller says what it assumes."""
        names = list(names)
        what = "a describe-configs request"
        try:
            cluster = self.admin.describe_cluster(request_timeout=self.timeout).result(timeout=self.timeout + 5)
            nodes = sorted(cluster.nodes or (), key=lambda n: n.id)
            if not nodes:
                return {}, "the broker named no broker to describe"
            resource = ConfigResource(ResourceType.BROKER, str(nodes[0].id))
            futures = self.admin.describe_configs([resource], request_timeout=self.timeout)
            entries = next(iter(futures.values())).result(timeout=self.timeout + 5)
        except TimeoutError:
            return {}, f"{what} was not answered within {self.timeout:g}s"
        except (KafkaException, ValueError, TypeError, AttributeError) as exc:
            err = kafka_error(exc)
            return {}, f"{what} failed: {(err.str() if err else str(exc) or type(exc).__name__).strip()}"
        found = {n: entries[n].value for n in names if n in entries and entries[n].value is not None}
        missing = [n for n in names if n not in found]
        return found, (f"broker {nodes[0].id} does not report {', '.join(missing)}" if missing else "")


def _value(entry) -> str | None:
    return None if entry is None or entry.value is None else str(entry.value)


def _long(entry) -> int | None:
    """A config entry's value as a Java long; None when absent or not a number (then it is not used)."""
    text = _value(entry)
    if text is None or not re.fullmatch(r"-?\d{1,19}", text.strip()):
        return None
    return int(text)
