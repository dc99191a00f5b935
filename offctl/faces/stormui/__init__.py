"""`storm-kafka-monitor`, Storm UI's lag script answered by offctl: the run (monitor), KafkaOffsetLagUtil's arguments
(args) and the Java properties of its consumer config (javaprops)."""
