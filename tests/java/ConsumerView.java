/*
 * What a real Java KafkaConsumer (kafka-clients, from the Kafka release's lib/) is handed from some partitions of a
 * topic, read from given offsets up to the end its isolation level lets it see: the reference that offctl's "last
 * stable offset" figures are checked against (tests/oracle/java_consumer.py runs it).
 *
 *   java -cp CLASSES:KAFKA_LIB/'*' ConsumerView BOOTSTRAP read_committed|read_uncommitted TOPIC P=START [P=START ...]
 *
 * It makes a KafkaConsumer with no group.id, enable.auto.commit=false, allow.auto.create.topics=false (a
 * reference must not create topics), byte-array deserializers and the given isolation.level; checks that
 * partitionsFor() lists the partitions (an unknown topic or partition fails at once); assign()s them; asks
 * endOffsets() for them (read_committed: the last stable offset, read_uncommitted: the high watermark, as
 * KafkaConsumer#endOffsets documents); seek()s each to its START; then poll()s until every partition's position()
 * has reached its end offset, or DEADLINE_MS has passed (then it still prints what it saw, and says so on stderr).
 * Output, one JSON line on stdout, partitions in argument order:
 *
 *   {"0": {"end_offset": 10, "position": 10, "records": [0, 1, 2, 7, 8]}, ...}
 *
 * records: the offsets of the records poll() handed for the partition, in the order it handed them (control
 * records, i.e. transaction markers, are never handed; under read_committed neither are aborted records).
 *
 * stdout carries that line only: System.out is pointed at stderr before kafka-clients is touched, so that any log
 * output that would go to the console (log4j2's default configuration logs ERRORs to stdout) lands on stderr. Any
 * failure: a message on stderr, exit status 1 (2 for bad arguments).
 */

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class ConsumerView {

    static final long DEADLINE_MS = 20_000;
    static final Duration API_TIMEOUT = Duration.ofSeconds(15);
    static final Duration POLL = Duration.ofMillis(200);

    public static void main(String[] args) {
        PrintStream out = RunnerIO.keepStdout();  // only our JSON line goes to the real stdout
        if (args.length < 4 || !(args[1].equals("read_committed") || args[1].equals("read_uncommitted"))) {
            System.err.println("usage: ConsumerView BOOTSTRAP read_committed|read_uncommitted TOPIC P=START ...");
            System.exit(2);
        }
        String bootstrap = args[0], isolation = args[1], topic = args[2];
        Map<TopicPartition, Long> starts = new LinkedHashMap<>();
        try {
            for (int i = 3; i < args.length; i++) {
                String[] pair = args[i].split("=", -1);
                if (pair.length != 2) {
                    throw new IllegalArgumentException("not PARTITION=START: " + args[i]);
                }
                TopicPartition tp = new TopicPartition(topic, Integer.parseInt(pair[0]));
                long start = Long.parseLong(pair[1]);
                if (start < 0 || starts.put(tp, start) != null) {
                    throw new IllegalArgumentException("a negative or repeated start: " + args[i]);
                }
            }
        } catch (IllegalArgumentException e) {  // NumberFormatException included
            System.err.println("ConsumerView: bad arguments: " + e.getMessage());
            System.exit(2);
        }
        try {
            RunnerIO.printLine(out, view(bootstrap, isolation, starts));
        } catch (Throwable t) {
            RunnerIO.fail("ConsumerView", t);
        }
        System.exit(0);  // whatever threads kafka-clients may have left
    }

    static String view(String bootstrap, String isolation, Map<TopicPartition, Long> starts) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, "offctl-tests-consumer-view");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<TopicPartition> tps = new ArrayList<>(starts.keySet());
        Map<TopicPartition, List<Long>> handed = new LinkedHashMap<>();
        Map<TopicPartition, Long> positions = new LinkedHashMap<>();
        Map<TopicPartition, Long> ends;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
            List<Integer> known = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(tps.get(0).topic(), API_TIMEOUT)) {
                known.add(info.partition());
            }
            for (TopicPartition tp : tps) {
                if (!known.contains(tp.partition())) {
                    throw new IllegalArgumentException("no such partition: " + tp + " (the topic's partitions: "
                                                       + known + ")");
                }
            }
            consumer.assign(tps);
            ends = consumer.endOffsets(tps, API_TIMEOUT);
            for (TopicPartition tp : tps) {
                if (ends.get(tp) == null) {
                    throw new IllegalStateException("no end offset for " + tp + ": " + ends);
                }
                consumer.seek(tp, starts.get(tp));
                handed.put(tp, new ArrayList<>());
            }
            long deadline = System.currentTimeMillis() + DEADLINE_MS;
            while (true) {
                boolean done = true;
                for (TopicPartition tp : tps) {
                    long position = consumer.position(tp, API_TIMEOUT);
                    positions.put(tp, position);
                    done &= position >= ends.get(tp);
                }
                if (done) {
                    break;
                }
                if (System.currentTimeMillis() >= deadline) {
                    System.err.println("ConsumerView: deadline of " + DEADLINE_MS + " ms passed: positions "
                                       + positions + ", end offsets " + ends);
                    break;
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(POLL);
                for (TopicPartition tp : records.partitions()) {
                    List<Long> seen = handed.get(tp);
                    if (seen == null) {
                        throw new IllegalStateException("handed records of a partition not assigned: " + tp);
                    }
                    for (ConsumerRecord<byte[], byte[]> record : records.records(tp)) {
                        seen.add(record.offset());
                    }
                }
            }
        }
        StringBuilder json = new StringBuilder("{");
        for (TopicPartition tp : tps) {
            if (json.length() > 1) {
                json.append(", ");
            }
            json.append('"').append(tp.partition()).append("\": {\"end_offset\": ").append(ends.get(tp))
                .append(", \"position\": ").append(positions.get(tp)).append(", \"records\": [");
            List<Long> seen = handed.get(tp);
            for (int i = 0; i < seen.size(); i++) {
                json.append(i == 0 ? "" : ", ").append(seen.get(i));
            }
            json.append("]}");
        }
        return json.append('}').toString();
    }
}
