"""offctl: inspect and repair the consumer offsets of Apache Storm Kafka spouts."""

__version__ = "0.1.0"
