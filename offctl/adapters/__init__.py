"""offctl's adapters to the outside world, each thin and returning core types, each turning its client's
exceptions into offctl errors: ZooKeeper (kazoo), Kafka (confluent-kafka), Spark (pyspark), the file system
of the safe rewrite (backups, the audit log) and the local server processes of the sandbox and the tests."""
