"""offctl against real servers (ZooKeeper, Kafka, Spark) started by the fixtures, through its faces."""
