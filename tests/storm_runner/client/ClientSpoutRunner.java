/*
 * Drives the REAL storm-kafka-client KafkaSpout (org.apache.storm.kafka.spout.KafkaSpout, from the release line's
 * lib/: tests/storm_runner/client/pom.xml fetches them) against a real Kafka broker, outside a Storm worker, and says
 * where it starts and what it commits: the reference that offctl's "will resume at" verdicts are held to
 * (tests/oracle/storm_client_spout.py compiles and runs it).
 *
 *   java -cp CLASSES:LIB/'*' ClientSpoutRunner '{"scenarios": [SCENARIO, ...]}'     (or the document on stdin)
 *
 * One source for every release line (storm-kafka-client 2.x with storm-client, 1.x with storm-core): what is spelt
 * the same in all (KafkaSpout, its open/activate/nextTuple/ack/deactivate/close, SpoutOutputCollector,
 * ISpoutOutputCollector, TopologyContext, KafkaSpoutMessageId#partition/offset) is compiled against; what differs is
 * reached by reflection, each case naming the Storm file it follows. The line's API is told from the classes on the
 * classpath (API below, answered as "api"):
 *   "2.x"         2.0.0 to 2.8.x: subscription.NamedTopicFilter, subscription.ManualPartitioner, top-level
 *                 FirstPollOffsetStrategy, new Builder(bootstrap, TopicFilter, ManualPartitioner)
 *   "1.x"         1.0.6-1.0.7, 1.1.2+, 1.2.x (the "current" 1.x, CommitMetadataManager): new Builder(bootstrap,
 *                 ManualPartitionSubscription(ManualPartitioner, NamedTopicFilter)),
 *                 KafkaSpoutConfig$FirstPollOffsetStrategy
 *   "1.1-legacy"  1.1.0-1.1.1: new Builder(bootstrap, StringDeserializer.class, StringDeserializer.class,
 *                 Subscription) with the Builder's default NamedSubscription, which subscribes (consumer.subscribe,
 *                 then poll(0) in activate(), which joins the group and runs the rebalance listener's doSeek);
 *                 ManualPartitionNamedSubscription when "partitions" are named, though v1.1.1's first
 *                 refreshAssignment assigns without calling the listener, so that spout never initializes (run
 *                 once here: the consumer sat where auto.offset.reset put it and nothing was emitted); no
 *                 ProcessingGuarantee
 *   "1.0-legacy"  1.0.0-1.0.5: new Builder(Map kafkaProps, KafkaSpoutStreamsNamedTopics,
 *                 KafkaSpoutTuplesBuilderNamedTopics): the tuple builder is an abstract class, made here with
 *                 Mockito (a mock that calls the real constructor and methods, buildTuple answering [topic,
 *                 partition, offset, key, value] as DefaultRecordTranslator does); the spout always subscribes
 *                 (KafkaSpout.subscribeKafkaConsumer, v1.0.5): "partitions" and a processing_guarantee other than
 *                 AT_LEAST_ONCE are refused
 * The spout's private consumer field ("consumer" in 2.x, "kafkaConsumer" in 1.x) and waitingToEmit (a map by
 * partition from 1.0.6/1.1.2 on; one Iterator over every partition's records in the legacy lines, so there "has
 * nothing more to emit" needs the whole iterator empty) are read, never written, to say where it stands. Before
 * kafka-clients 0.10.1 (the legacy lines' 0.9.0.1 and 0.10.0.0) there is no beginningOffsets/endOffsets: the log's
 * ends are read by seekToBeginning/seekToEnd and position() on an assigned reader.
 *
 * A SCENARIO (JSON object; only the first five are required):
 *   name                        any string, echoed back
 *   bootstrap_servers           "127.0.0.1:9092"
 *   topic                       one topic
 *   group_id                    the spout's consumer group (KafkaSpoutConfig's group.id)
 *   topology_id                 the storm id the spout's TopologyContext reports (getStormId()): what
 *                               CommitMetadataManager writes into commit metadata and compares commits with
 *   first_poll_offset_strategy  EARLIEST | LATEST | UNCOMMITTED_EARLIEST (Storm's default) | UNCOMMITTED_LATEST
 *   processing_guarantee        AT_LEAST_ONCE (Storm's default) | AT_MOST_ONCE | NO_GUARANTEE
 *   offset_commit_period_ms     KafkaSpoutConfig's offsetCommitPeriodMs (Storm's default 30000)
 *   partitions                  the partitions this one task is given, through the spout's own manual partition
 *                               assignment (a ManualPartitioner that keeps these); absent: Storm's
 *                               RoundRobinManualPartitioner with one task, i.e. every partition of the topic
 *   task_id                     the task id the context reports (getThisTaskId(); default 1); task index is 0 of 1
 *   commit_first                {"0": {"offset": 3, "metadata": "..."}}: committed for the group, byte for byte, by a
 *                               plain KafkaConsumer (commitSync) before the spout opens, as an earlier spout would
 *                               have left it (metadata absent: none)
 *   emit                        "first" (default): nextTuple() until every assigned partition has emitted once, or
 *                               has nothing to emit (see below); "all": until each has emitted up to its log end as
 *                               it was before the spout opened, or has nothing more to emit
 *   run_ms                      call nextTuple() for at least this long (default 0), e.g. to let the commit timer
 *                               (500 ms initial delay, then offset_commit_period_ms) fire
 *   ack                         true (default): ack every emitted tuple before deactivate()/close()
 *   deadline_ms                 no nextTuple() after this long from the scenario's start (default 20000): then
 *                               "timed_out" is true
 *   poll_ms                     nor after this long from the end of activate() (default: no such bound), also
 *                               "timed_out": bounds a spout that polls and gets nothing without counting the JVM's
 *                               first-scenario warm-up (class loading: seconds on a busy machine) against it
 *   kafka_props                 more consumer properties for KafkaSpoutConfig.Builder#setProp
 *
 * A partition "has nothing (more) to emit" when the spout holds no polled record of it (its private waitingToEmit)
 * and its consumer's position() is the log end: a position beyond the log end, or below the log start, is not the
 * end (the next fetch is out of range, and auto.offset.reset moves it).
 *
 * For each scenario, in order, on this (the main) thread: KafkaSpoutConfig from its Builder; new KafkaSpout(config);
 * open(conf, a Mockito-mocked TopologyContext, a SpoutOutputCollector around a recording ISpoutOutputCollector);
 * activate(), which assigns the partitions and seeks them (KafkaSpoutConsumerRebalanceListener#doSeek); the spout's
 * consumer's position() for each assigned partition, read through the spout's private consumer field (where doSeek
 * put it); nextTuple() until the stop condition or the deadline; ack() of each emitted message id in emit order;
 * deactivate() (commitOffsetsForAckedTuples in AT_LEAST_ONCE; nothing in the other guarantees); close() (the same,
 * then closes the consumer); then a plain KafkaConsumer of the group reads the committed offsets and metadata back.
 * A spout call that throws is recorded under its phase (open, activate, nextTuple, ack, deactivate, close; and
 * start_position if the spout's consumer could not be read) in "errors" ("<exception class>: <message> (caused by
 * ...)"), and the scenario goes on to close; nextTuple() stops at its first exception, as a worker's executor would
 * die.
 *
 * Output, one JSON line on stdout, partitions as strings, in the order of the input scenarios:
 *   {"scenarios": [{"name": ..., "storm_line": "2.x", "api": "2.x", "assigned": [0], "log_start": {"0": 0},
 *                   "log_end": {"0": 10}, "start_position": {"0": 3}, "end_position": {"0": 10},
 *                   "first_emitted": {"0": 3}, "emitted": {"0": [3, 4]}, "timed_out": false, "errors": {},
 *                   "committed": {"0": {"offset": 5, "metadata": "{...}"}}, "elapsed_ms": 812}, ...]}
 * storm_line: "2.x" or "1.x", the major line found on the classpath; api: the API (above); assigned: the partitions
 * the spout's consumer was assigned; log_start/log_end: beginningOffsets/endOffsets (or what stands for them, above)
 * before the spout opened; start_position: the spout consumer's position() right after activate(), where doSeek
 * left it (null if it could not be read); end_position:
 * the same after the last nextTuple(), before the acks; first_emitted: the first offset the spout emitted from the
 * partition, null if none; emitted: every offset emitted, in order (from the KafkaSpoutMessageId, or for
 * untracked emits without one from DefaultRecordTranslator's "partition" and "offset" values); committed: the group's
 * committed offset after close(), null if none.
 *
 * stdout carries that line only: System.out is pointed at stderr before anything else runs. On stderr each
 * scenario begins with the line "ClientSpoutRunner: scenario <name>" (SCENARIO_MARK), so that what the loggers write
 * there can be told apart by scenario (tests/oracle/broker_support.py does). A scenario the runner itself cannot set
 * up (bad JSON, an unknown strategy, a topic that does not exist): a message on stderr, exit 1.
 */

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.storm.kafka.spout.KafkaSpout;
import org.apache.storm.kafka.spout.KafkaSpoutConfig;
import org.apache.storm.kafka.spout.KafkaSpoutMessageId;
import org.apache.storm.spout.ISpoutOutputCollector;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.mockito.ArgumentMatchers;
import org.mockito.Mockito;

public final class ClientSpoutRunner extends RunnerIO {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String SPOUT = "org.apache.storm.kafka.spout.";
    static final String COMPONENT = "kafka-spout";
    static final long DEFAULT_DEADLINE_MS = 20_000;
    /** The stderr line that opens each scenario (then its name): the log lines after it, up to the next, are its. */
    static final String SCENARIO_MARK = "ClientSpoutRunner: scenario ";

    /** 2.x: FirstPollOffsetStrategy is a top-level enum (v2.0.0 to v2.8.3 FirstPollOffsetStrategy.java); 1.x: nested
     *  in KafkaSpoutConfig (v1.0.1 to v1.2.4 KafkaSpoutConfig.java). */
    static final boolean TWO_X = exists(SPOUT + "FirstPollOffsetStrategy");
    /** The line's configuration API (the header): 1.0.0-1.0.5 have KafkaSpoutStreams (v1.0.5), 1.1.0-1.1.1
     *  ManualPartitionNamedSubscription (v1.1.1), 1.0.6+, 1.1.2+ and 1.2.x ManualPartitionSubscription (v1.0.6, v1.1.2,
     *  v1.2.4). */
    static final String API = TWO_X ? "2.x"
        : exists(SPOUT + "KafkaSpoutStreams") ? "1.0-legacy"
        : exists(SPOUT + "ManualPartitionSubscription") ? "1.x"
        : "1.1-legacy";
    static final boolean LEGACY = API.endsWith("-legacy");

    public static void main(String[] args) {
        PrintStream out = keepStdout();  // only our JSON line goes to the real stdout
        try {
            String input = args.length > 0 ? args[0] : readAll(System.in);
            @SuppressWarnings("unchecked")
            Map<String, Object> doc = JSON.readValue(input, Map.class);
            Object scenarios = doc.get("scenarios");
            if (!(scenarios instanceof List)) {
                throw new IllegalArgumentException("the document has no \"scenarios\" list");
            }
            List<Object> results = new ArrayList<>();
            for (Object scenario : (List<?>) scenarios) {
                if (!(scenario instanceof Map)) {
                    throw new IllegalArgumentException("a scenario is not an object: " + scenario);
                }
                @SuppressWarnings("unchecked")
                Map<String, Object> s = (Map<String, Object>) scenario;
                results.add(run(s));
            }
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("scenarios", results);
            printLine(out, JSON.writeValueAsString(answer));
        } catch (Throwable t) {
            fail("ClientSpoutRunner", t);
        }
        System.exit(0);  // whatever threads kafka-clients or Storm may have left
    }

    // ---- one scenario -------------------------------------------------------------------------------------------

    static Map<String, Object> run(Map<String, Object> s) throws Exception {
        long started = System.currentTimeMillis();
        String name = String.valueOf(s.get("name"));
        System.err.println(SCENARIO_MARK + name);  // what the loggers write on stderr from here on is this scenario's
        String bootstrap = required(s, "bootstrap_servers");
        String topic = required(s, "topic");
        String group = required(s, "group_id");
        String topologyId = required(s, "topology_id");
        int taskId = s.get("task_id") == null ? 1 : ((Number) s.get("task_id")).intValue();
        String emitUntil = s.get("emit") == null ? "first" : String.valueOf(s.get("emit"));
        if (!emitUntil.equals("first") && !emitUntil.equals("all")) {
            throw new IllegalArgumentException(name + ": emit must be \"first\" or \"all\": " + emitUntil);
        }
        boolean ack = s.get("ack") == null || Boolean.TRUE.equals(s.get("ack"));
        long deadlineMs = s.get("deadline_ms") == null ? DEFAULT_DEADLINE_MS
                                                       : ((Number) s.get("deadline_ms")).longValue();
        Long pollMs = s.get("poll_ms") == null ? null : ((Number) s.get("poll_ms")).longValue();
        List<Integer> wanted = null;
        if (s.get("partitions") != null) {
            wanted = new ArrayList<>();
            for (Object p : (List<?>) s.get("partitions")) {
                wanted.add(((Number) p).intValue());
            }
        }

        KafkaSpoutConfig<String, String> config = config(s, bootstrap, topic, group, wanted);  // bad names fail here

        // The log as it is before the spout opens: which partitions exist, where each starts and ends.
        Map<Integer, Long> logStart = new TreeMap<>();
        Map<Integer, Long> logEnd = new TreeMap<>();
        try (KafkaConsumer<String, String> reader = reader(bootstrap, null)) {
            List<PartitionInfo> infos = reader.partitionsFor(topic);
            if (infos == null || infos.isEmpty()) {
                throw new IllegalArgumentException(name + ": topic " + topic + " has no partitions (does it exist?)");
            }
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo info : infos) {
                if (wanted == null || wanted.contains(info.partition())) {
                    tps.add(new TopicPartition(topic, info.partition()));
                }
            }
            if (wanted != null && tps.size() != new HashSet<>(wanted).size()) {
                throw new IllegalArgumentException(name + ": partitions " + wanted + " are not all in " + topic);
            }
            for (Map.Entry<TopicPartition, Long> e : logOffsets(reader, tps, false).entrySet()) {
                logStart.put(e.getKey().partition(), e.getValue());
            }
            for (Map.Entry<TopicPartition, Long> e : logOffsets(reader, tps, true).entrySet()) {
                logEnd.put(e.getKey().partition(), e.getValue());
            }
        }

        if (s.get("commit_first") != null) {
            commitFirst(bootstrap, group, topic, (Map<?, ?>) s.get("commit_first"));
        }
        long runMs = s.get("run_ms") == null ? 0 : ((Number) s.get("run_ms")).longValue();

        Map<String, String> errors = new LinkedHashMap<>();
        Recorder recorder = new Recorder();
        Map<Integer, Long> startPosition = new TreeMap<>();
        Map<Integer, Long> endPosition = new TreeMap<>();
        List<Integer> assigned = new ArrayList<>();
        boolean timedOut = false;

        KafkaSpout<String, String> spout = new KafkaSpout<>(config);
        TopologyContext context = context(topologyId, taskId);
        Map<String, Object> conf = new HashMap<>();
        conf.put("topology.name", topologyId.replaceAll("-\\d+-\\d+$", ""));
        conf.put("storm.id", topologyId);

        boolean opened = call(errors, "open", () -> spout.open(conf, context, new SpoutOutputCollector(recorder)));
        if (opened && call(errors, "activate", spout::activate)) {
            Consumer<?, ?> consumer = null;
            try {
                consumer = spoutConsumer(spout);
                for (TopicPartition tp : consumer.assignment()) {
                    assigned.add(tp.partition());
                }
                Collections.sort(assigned);
                for (int p : assigned) {
                    startPosition.put(p, consumer.position(new TopicPartition(topic, p)));
                }
            } catch (Exception e) {
                errors.put("start_position", describe(e));
            }
            long deadline = pollMs == null ? started + deadlineMs
                                           : Math.min(started + deadlineMs, System.currentTimeMillis() + pollMs);
            long runUntil = System.currentTimeMillis() + runMs;
            while (System.currentTimeMillis() < runUntil
                   || !done(spout, consumer, topic, assigned, logEnd, recorder, emitUntil)) {
                if (System.currentTimeMillis() >= deadline) {
                    timedOut = true;
                    break;
                }
                if (!call(errors, "nextTuple", spout::nextTuple)) {
                    break;
                }
            }
            for (int p : assigned) {
                endPosition.put(p, position(consumer, new TopicPartition(topic, p)));
            }
            if (ack) {
                for (Object messageId : recorder.messageIds) {
                    if (!call(errors, "ack", () -> spout.ack(messageId))) {
                        break;
                    }
                }
            }
            call(errors, "deactivate", spout::deactivate);
        }
        if (opened) {
            call(errors, "close", spout::close);
        }

        // What the group holds now, read as any client would.
        Map<String, Object> committed = new LinkedHashMap<>();
        Set<Integer> report = new LinkedHashSet<>(logEnd.keySet());
        report.addAll(assigned);
        try (KafkaConsumer<String, String> reader = reader(bootstrap, group)) {
            for (int p : report) {
                OffsetAndMetadata c = committed(reader, new TopicPartition(topic, p));
                if (c == null) {
                    committed.put(String.valueOf(p), null);
                } else {
                    Map<String, Object> one = new LinkedHashMap<>();
                    one.put("offset", c.offset());
                    one.put("metadata", c.metadata());
                    committed.put(String.valueOf(p), one);
                }
            }
        }

        Map<String, Object> result = new LinkedHashMap<>();
        result.put("name", s.get("name"));
        result.put("storm_line", TWO_X ? "2.x" : "1.x");
        result.put("api", API);
        result.put("assigned", assigned);
        result.put("log_start", keyed(logStart));
        result.put("log_end", keyed(logEnd));
        Map<String, Object> start = new LinkedHashMap<>();
        Map<String, Object> end = new LinkedHashMap<>();
        Map<String, Object> first = new LinkedHashMap<>();
        Map<String, Object> emitted = new LinkedHashMap<>();
        for (int p : report) {
            start.put(String.valueOf(p), startPosition.get(p));
            end.put(String.valueOf(p), endPosition.get(p));
            List<Long> offsets = recorder.offsets.getOrDefault(p, Collections.emptyList());
            first.put(String.valueOf(p), offsets.isEmpty() ? null : offsets.get(0));
            emitted.put(String.valueOf(p), offsets);
        }
        result.put("start_position", start);
        result.put("end_position", end);
        result.put("first_emitted", first);
        result.put("emitted", emitted);
        result.put("timed_out", timedOut);
        result.put("errors", errors);
        result.put("committed", committed);
        result.put("elapsed_ms", System.currentTimeMillis() - started);
        return result;
    }

    /** Every assigned partition has emitted what the scenario waits for, or has nothing (more) to emit. */
    static boolean done(KafkaSpout<?, ?> spout, Consumer<?, ?> consumer, String topic, List<Integer> assigned,
                        Map<Integer, Long> logEnd, Recorder recorder, String emitUntil) {
        if (consumer == null) {
            return false;  // the start could not be read: nextTuple() until the deadline
        }
        for (int p : assigned) {
            List<Long> offsets = recorder.offsets.getOrDefault(p, Collections.emptyList());
            Long end = logEnd.get(p);
            if (emitUntil.equals("first") ? !offsets.isEmpty()
                                          : !offsets.isEmpty() && end != null && Collections.max(offsets) >= end - 1) {
                continue;
            }
            TopicPartition tp = new TopicPartition(topic, p);
            if (waiting(spout, tp) || end == null || !end.equals(position(consumer, tp))) {
                return false;
            }
        }
        return true;
    }

    /** Records of `tp` the spout has polled and not yet emitted: its private waitingToEmit, a map by partition
     *  (1.0.6+, 1.1.2+, 1.2.x, 2.x), or in the legacy lines one Iterator over the records of every partition polled
     *  (v1.0.5, v1.1.1 KafkaSpout.java), which cannot be read without moving it: any record left counts for every
     *  partition. */
    static boolean waiting(KafkaSpout<?, ?> spout, TopicPartition tp) {
        try {
            Field field = KafkaSpout.class.getDeclaredField("waitingToEmit");
            field.setAccessible(true);
            Object value = field.get(spout);
            if (value instanceof java.util.Iterator) {
                return ((java.util.Iterator<?>) value).hasNext();
            }
            Map<?, ?> waiting = (Map<?, ?>) value;
            List<?> records = waiting == null ? null : (List<?>) waiting.get(tp);
            return records != null && !records.isEmpty();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("KafkaSpout has no waitingToEmit map", e);
        }
    }

    /** The consumer's position, or null if it cannot say (an exception, e.g. an out-of-range position under
     *  auto.offset.reset=none). */
    static Long position(Consumer<?, ?> consumer, TopicPartition tp) {
        if (consumer == null) {
            return null;
        }
        try {
            return consumer.position(tp);
        } catch (RuntimeException e) {
            return null;
        }
    }

    // ---- the spout's configuration, by line ----------------------------------------------------------------------

    /** KafkaSpoutConfig from its Builder, as a topology would make it. 2.x (v2.8.3 KafkaSpoutConfig.java):
     *  new Builder(bootstrap, TopicFilter, ManualPartitioner) with subscription.NamedTopicFilter; 1.x (v1.2.4):
     *  new Builder(bootstrap, new ManualPartitionSubscription(ManualPartitioner, NamedTopicFilter)); 1.1-legacy
     *  (v1.1.1): new Builder(bootstrap, key and value deserializer classes, NamedSubscription or
     *  ManualPartitionNamedSubscription); 1.0-legacy (v1.0.5): legacy10Builder. All but 1.0-legacy then setProp
     *  (deserializers, group.id, kafka_props); all setFirstPollOffsetStrategy and setOffsetCommitPeriodMs; 2.x and
     *  1.x setProcessingGuarantee (the legacy lines have none: they commit acked offsets, as AT_LEAST_ONCE). */
    @SuppressWarnings("unchecked")
    static KafkaSpoutConfig<String, String> config(Map<String, Object> s, String bootstrap, String topic, String group,
                                                   List<Integer> wanted) throws Exception {
        String guarantee = s.get("processing_guarantee") == null ? "AT_LEAST_ONCE"
                                                                 : String.valueOf(s.get("processing_guarantee"));
        if (LEGACY && !guarantee.equals("AT_LEAST_ONCE")) {
            throw new IllegalArgumentException(s.get("name") + ": storm-kafka-client " + API + " has no "
                                               + "ProcessingGuarantee (it commits acked offsets): " + guarantee);
        }
        Object builder;
        if (TWO_X) {
            String sub = SPOUT + "subscription.";
            Object filter = Class.forName(sub + "NamedTopicFilter").getConstructor(String[].class)
                .newInstance((Object) new String[] {topic});
            Object partitioner = partitioner(Class.forName(sub + "ManualPartitioner"), wanted,
                                             sub + "RoundRobinManualPartitioner");
            builder = KafkaSpoutConfig.Builder.class.getConstructor(String.class, Class.forName(sub + "TopicFilter"),
                                                                    Class.forName(sub + "ManualPartitioner"))
                .newInstance(bootstrap, filter, partitioner);
        } else if (API.equals("1.x")) {
            Object filter = Class.forName(SPOUT + "NamedTopicFilter").getConstructor(String[].class)
                .newInstance((Object) new String[] {topic});
            Class<?> partitionerType = Class.forName(SPOUT + "ManualPartitioner");
            Object partitioner = partitioner(partitionerType, wanted, SPOUT + "RoundRobinManualPartitioner");
            Object subscription = Class.forName(SPOUT + "ManualPartitionSubscription")
                .getConstructor(partitionerType, Class.forName(SPOUT + "TopicFilter")).newInstance(partitioner, filter);
            builder = KafkaSpoutConfig.Builder.class.getConstructor(String.class, Class.forName(SPOUT + "Subscription"))
                .newInstance(bootstrap, subscription);
        } else if (API.equals("1.1-legacy")) {
            Object subscription;
            if (wanted == null) {  // the Builder's default (v1.1.1 KafkaSpoutConfig.Builder(bootstrap, ..., topics))
                subscription = Class.forName(SPOUT + "NamedSubscription").getConstructor(String[].class)
                    .newInstance((Object) new String[] {topic});
            } else {
                Class<?> partitionerType = Class.forName(SPOUT + "ManualPartitioner");
                subscription = Class.forName(SPOUT + "ManualPartitionNamedSubscription")
                    .getConstructor(partitionerType, String[].class)
                    .newInstance(partitioner(partitionerType, wanted, null), new String[] {topic});
            }
            builder = KafkaSpoutConfig.Builder.class.getConstructor(String.class, Class.class, Class.class,
                                                                    Class.forName(SPOUT + "Subscription"))
                .newInstance(bootstrap, StringDeserializer.class, StringDeserializer.class, subscription);
        } else {
            builder = legacy10Builder(s, bootstrap, topic, group, wanted);
        }
        if (!API.equals("1.0-legacy")) {
            Method setProp = builder.getClass().getMethod("setProp", String.class, Object.class);
            setProp.invoke(builder, ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
            setProp.invoke(builder, ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
            setProp.invoke(builder, ConsumerConfig.GROUP_ID_CONFIG, group);
            if (s.get("kafka_props") != null) {
                for (Map.Entry<String, Object> e : ((Map<String, Object>) s.get("kafka_props")).entrySet()) {
                    setProp.invoke(builder, e.getKey(), e.getValue());
                }
            }
        }
        Class<?> strategyType = Class.forName(TWO_X ? SPOUT + "FirstPollOffsetStrategy"
                                                    : SPOUT + "KafkaSpoutConfig$FirstPollOffsetStrategy");
        Object strategy = s.get("first_poll_offset_strategy") == null ? "UNCOMMITTED_EARLIEST"
                                                                      : s.get("first_poll_offset_strategy");
        builder.getClass().getMethod("setFirstPollOffsetStrategy", strategyType)
            .invoke(builder, enumValue(strategyType, String.valueOf(strategy)));
        if (!LEGACY) {
            Class<?> guaranteeType = Class.forName(SPOUT + "KafkaSpoutConfig$ProcessingGuarantee");
            builder.getClass().getMethod("setProcessingGuarantee", guaranteeType)
                .invoke(builder, enumValue(guaranteeType, guarantee));
        }
        if (s.get("offset_commit_period_ms") != null) {
            builder.getClass().getMethod("setOffsetCommitPeriodMs", long.class)
                .invoke(builder, ((Number) s.get("offset_commit_period_ms")).longValue());
        }
        return (KafkaSpoutConfig<String, String>) builder.getClass().getMethod("build").invoke(builder);
    }

    /** 1.0.0-1.0.5 (v1.0.5 KafkaSpoutConfig.java, KafkaSpoutStreamsNamedTopics.java,
     *  KafkaSpoutTuplesBuilderNamedTopics.java, KafkaSpoutTupleBuilder.java): new Builder(kafkaProps, streams,
     *  tuplesBuilder), kafkaProps holding bootstrap.servers, group.id, the deserializers and kafka_props; one stream
     *  ("default") of the topic with DefaultRecordTranslator's fields; KafkaSpoutTupleBuilder is abstract, so it is a
     *  Mockito mock built through its real constructor (the topic) whose buildTuple answers [topic, partition,
     *  offset, key, value] and whose other methods are the real ones. */
    static Object legacy10Builder(Map<String, Object> s, String bootstrap, String topic, String group,
                                  List<Integer> wanted) throws Exception {
        if (wanted != null) {
            throw new IllegalArgumentException(s.get("name") + ": storm-kafka-client 1.0.0-1.0.5 subscribes "
                                               + "(KafkaSpout.subscribeKafkaConsumer): no \"partitions\" of one task");
        }
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        if (s.get("kafka_props") != null) {
            @SuppressWarnings("unchecked")
            Map<String, Object> more = (Map<String, Object>) s.get("kafka_props");
            props.putAll(more);
        }
        org.apache.storm.tuple.Fields fields =
            new org.apache.storm.tuple.Fields("topic", "partition", "offset", "key", "value");
        Object streamsBuilder = Class.forName(SPOUT + "KafkaSpoutStreamsNamedTopics$Builder")
            .getConstructor(org.apache.storm.tuple.Fields.class, String[].class)
            .newInstance(fields, new String[] {topic});
        Object streams = streamsBuilder.getClass().getMethod("build").invoke(streamsBuilder);
        Class<?> tupleBuilderType = Class.forName(SPOUT + "KafkaSpoutTupleBuilder");
        Object tupleBuilder = Mockito.mock(tupleBuilderType, Mockito.withSettings()
            .useConstructor((Object) new String[] {topic})
            .defaultAnswer(invocation -> {
                if (invocation.getMethod().getName().equals("buildTuple")) {
                    org.apache.kafka.clients.consumer.ConsumerRecord<?, ?> r =
                        (org.apache.kafka.clients.consumer.ConsumerRecord<?, ?>) invocation.getArgument(0);
                    return new ArrayList<Object>(java.util.Arrays.asList(r.topic(), r.partition(), r.offset(), r.key(),
                                                                         r.value()));
                }
                return Mockito.CALLS_REAL_METHODS.answer(invocation);
            }));
        Object tuplesArray = java.lang.reflect.Array.newInstance(tupleBuilderType, 1);
        java.lang.reflect.Array.set(tuplesArray, 0, tupleBuilder);
        Object tuplesBuilderBuilder = Class.forName(SPOUT + "KafkaSpoutTuplesBuilderNamedTopics$Builder")
            .getConstructor(tuplesArray.getClass()).newInstance(tuplesArray);
        Object tuplesBuilder = tuplesBuilderBuilder.getClass().getMethod("build").invoke(tuplesBuilderBuilder);
        return KafkaSpoutConfig.Builder.class.getConstructor(Map.class, Class.forName(SPOUT + "KafkaSpoutStreams"),
                                                             Class.forName(SPOUT + "KafkaSpoutTuplesBuilder"))
            .newInstance(props, streams, tuplesBuilder);
    }

    /** Storm's RoundRobinManualPartitioner when no partitions are named (one task: every partition); else a
     *  ManualPartitioner keeping the named ones. Its one method is getPartitionsForThisTask(List, TopologyContext)
     *  returning a Set in 2.x (v2.8.3 subscription/ManualPartitioner.java), partition(List, TopologyContext)
     *  returning a List in 1.x (v1.2.4 ManualPartitioner.java). */
    static Object partitioner(Class<?> type, List<Integer> wanted, String roundRobin) throws Exception {
        if (wanted == null) {
            return Class.forName(roundRobin).getConstructor().newInstance();
        }
        String label = "ClientSpoutRunner partitions " + wanted;
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            switch (method.getName()) {
                case "toString":
                    return label;
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                default:
                    List<TopicPartition> kept = new ArrayList<>();
                    for (Object tp : (List<?>) args[0]) {
                        if (wanted.contains(((TopicPartition) tp).partition())) {
                            kept.add((TopicPartition) tp);
                        }
                    }
                    return Set.class.isAssignableFrom(method.getReturnType()) ? new HashSet<>(kept) : kept;
            }
        });
    }

    static Object enumValue(Class<?> type, String name) {
        for (Object constant : type.getEnumConstants()) {
            if (((Enum<?>) constant).name().equals(name)) {
                return constant;
            }
        }
        List<String> names = new ArrayList<>();
        for (Object constant : type.getEnumConstants()) {
            names.add(((Enum<?>) constant).name());
        }
        throw new IllegalArgumentException("no " + type.getSimpleName() + " " + name + " in this release: " + names);
    }

    // ---- what the spout is handed in a worker, mocked -------------------------------------------------------------

    /** The context of task `taskId`, index 0 of one task of component "kafka-spout", of topology `topologyId`. What
     *  KafkaSpout.open and its helpers ask: getStormId and getThisTaskId (CommitMetadataManager), getThisTaskIndex,
     *  getThisComponentId and getComponentTasks (RoundRobinManualPartitioner), registerMetric (1.x) and
     *  registerMetricSet (2.x), left to the mock's defaults. */
    static TopologyContext context(String topologyId, int taskId) {
        TopologyContext context = Mockito.mock(TopologyContext.class);
        Mockito.when(context.getStormId()).thenReturn(topologyId);
        Mockito.when(context.getThisTaskId()).thenReturn(taskId);
        Mockito.when(context.getThisTaskIndex()).thenReturn(0);
        Mockito.when(context.getThisComponentId()).thenReturn(COMPONENT);
        Mockito.when(context.getComponentTasks(ArgumentMatchers.anyString()))
            .thenReturn(Collections.singletonList(taskId));
        return context;
    }

    /** An ISpoutOutputCollector that records each emit: the message id (KafkaSpoutMessageId when the spout tracks
     *  the tuple) or, for untracked emits, DefaultRecordTranslator's partition and offset values. flush() is 2.x's
     *  only: declared without @Override so that this compiles against both lines. */
    static final class Recorder implements ISpoutOutputCollector {
        final Map<Integer, List<Long>> offsets = new TreeMap<>();
        final List<Object> messageIds = new ArrayList<>();

        public List<Integer> emit(String streamId, List<Object> tuple, Object messageId) {
            record(tuple, messageId);
            return Collections.singletonList(0);
        }

        public void emitDirect(int taskId, String streamId, List<Object> tuple, Object messageId) {
            record(tuple, messageId);
        }

        public long getPendingCount() {
            return 0;
        }

        public void flush() {
        }

        public void reportError(Throwable error) {
            System.err.println("ClientSpoutRunner: the spout reported " + describe(error));
        }

        void record(List<Object> tuple, Object messageId) {
            int partition;
            long offset;
            if (messageId instanceof KafkaSpoutMessageId) {
                KafkaSpoutMessageId id = (KafkaSpoutMessageId) messageId;
                partition = id.partition();
                offset = id.offset();
                messageIds.add(messageId);
            } else {  // DefaultRecordTranslator: topic, partition, offset, key, value
                partition = ((Number) tuple.get(1)).intValue();
                offset = ((Number) tuple.get(2)).longValue();
            }
            offsets.computeIfAbsent(partition, p -> new ArrayList<>()).add(offset);
        }
    }

    // ---- reading the spout's consumer and the group back ----------------------------------------------------------

    /** The spout's own consumer: field "consumer" in 2.x (v2.8.3 KafkaSpout.java), "kafkaConsumer" in 1.x. */
    static Consumer<?, ?> spoutConsumer(KafkaSpout<?, ?> spout) throws Exception {
        Field field;
        try {
            field = KafkaSpout.class.getDeclaredField("consumer");
        } catch (NoSuchFieldException e) {
            field = KafkaSpout.class.getDeclaredField("kafkaConsumer");
        }
        field.setAccessible(true);
        return (Consumer<?, ?>) field.get(spout);
    }

    /** commit_first: {partition: {"offset": N, "metadata": "..."}} committed for `group` with commitSync. */
    static void commitFirst(String bootstrap, String group, String topic, Map<?, ?> commits) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (Map.Entry<?, ?> e : commits.entrySet()) {
            Map<?, ?> one = (Map<?, ?>) e.getValue();
            Object metadata = one.get("metadata");
            offsets.put(new TopicPartition(topic, Integer.parseInt(String.valueOf(e.getKey()))),
                        new OffsetAndMetadata(((Number) one.get("offset")).longValue(),
                                              metadata == null ? "" : String.valueOf(metadata)));
        }
        try (KafkaConsumer<String, String> committer = reader(bootstrap, group)) {
            committer.commitSync(offsets);
        }
    }

    /** The log start (end: the log end) of each partition: beginningOffsets/endOffsets (kafka-clients 0.10.1 on);
     *  before, as those did it, assign, seekToBeginning/seekToEnd (varargs in 0.9, a Collection from 0.10.0) and
     *  position(). */
    @SuppressWarnings("unchecked")
    static Map<TopicPartition, Long> logOffsets(KafkaConsumer<?, ?> reader, List<TopicPartition> tps, boolean end)
            throws Exception {
        String name = end ? "endOffsets" : "beginningOffsets";
        try {
            return (Map<TopicPartition, Long>) KafkaConsumer.class.getMethod(name, Collection.class)
                .invoke(reader, tps);
        } catch (NoSuchMethodException e) {
            reader.assign(tps);
            String seek = end ? "seekToEnd" : "seekToBeginning";
            try {
                KafkaConsumer.class.getMethod(seek, Collection.class).invoke(reader, tps);
            } catch (NoSuchMethodException old) {
                KafkaConsumer.class.getMethod(seek, TopicPartition[].class)
                    .invoke(reader, (Object) tps.toArray(new TopicPartition[0]));
            }
            Map<TopicPartition, Long> offsets = new HashMap<>();
            for (TopicPartition tp : tps) {
                offsets.put(tp, reader.position(tp));
            }
            return offsets;
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }

    static KafkaConsumer<String, String> reader(String bootstrap, String group) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        if (group != null) {
            props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        return new KafkaConsumer<>(props);
    }

    /** committed(Set) (kafka-clients 2.4 on; committed(TopicPartition) is gone in 4.0), else committed(TopicPartition)
     *  (0.10.1.0 has no other). */
    @SuppressWarnings("unchecked")
    static OffsetAndMetadata committed(KafkaConsumer<?, ?> reader, TopicPartition tp) throws Exception {
        try {
            Method bySet = KafkaConsumer.class.getMethod("committed", Set.class);
            Map<TopicPartition, OffsetAndMetadata> all =
                (Map<TopicPartition, OffsetAndMetadata>) bySet.invoke(reader, Collections.singleton(tp));
            return all.get(tp);
        } catch (NoSuchMethodException e) {
            return (OffsetAndMetadata) KafkaConsumer.class.getMethod("committed", TopicPartition.class)
                .invoke(reader, tp);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
        }
    }

    // ---- small things -------------------------------------------------------------------------------------------

    /** Runs one spout call; an exception is recorded under `phase` (the first of that phase) and false returned. */
    static boolean call(Map<String, String> errors, String phase, Step call) {
        try {
            call.run();
            return true;
        } catch (Throwable t) {
            System.err.print("ClientSpoutRunner: " + phase + " threw: ");
            t.printStackTrace(System.err);
            errors.putIfAbsent(phase, describe(t));
            return false;
        }
    }

    static Map<String, Long> keyed(Map<Integer, Long> byPartition) {
        Map<String, Long> keyed = new LinkedHashMap<>();
        for (Map.Entry<Integer, Long> e : byPartition.entrySet()) {
            keyed.put(String.valueOf(e.getKey()), e.getValue());
        }
        return keyed;
    }

    static String required(Map<String, Object> s, String key) {
        Object value = s.get(key);
        if (value == null || String.valueOf(value).isEmpty()) {
            throw new IllegalArgumentException("scenario " + s.get("name") + " has no " + key);
        }
        return String.valueOf(value);
    }

    static boolean exists(String className) {
        try {
            Class.forName(className, false, ClientSpoutRunner.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
