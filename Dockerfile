# offctl and its runtime, installed the way the README's set-up does it, on Debian 12 (python3 is 3.11).
#   docker build -t offctl .
#   docker run --rm -e OFFCTL_ZK=zk1:2181 -e OFFCTL_ZK_ROOT=/kafka-spouts -e OFFCTL_BOOTSTRAP_SERVERS=k1:9092 offctl inspect
FROM debian:bookworm-slim

# README "Set up", first command: system packages (Java for Spark and ZooKeeper, Debian's ZooKeeper for the sandbox).
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv openjdk-17-jre-headless zookeeper \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 offctl
WORKDIR /opt/offctl
COPY --chown=offctl:offctl . .
USER offctl

# README "Set up", first command: the virtual environment and offctl with Spark. (The sandbox's Apache Kafka comes
# from Maven Central through Debian's maven, for the suite and rehearsals: not in this image.)
RUN python3 -m venv .venv && .venv/bin/pip install --no-cache-dir -e '.[spark]'

ENV PATH=/opt/offctl/.venv/bin:$PATH
ENTRYPOINT ["offctl"]
CMD ["--help"]
