/*
 * The real storm-kafka-client Trident spout (org.apache.storm.kafka.spout.trident.KafkaTridentSpoutOpaque,
 * storm-kafka-client 2.8.3, its KafkaTridentSpoutEmitter) driven by Storm's own OpaquePartitionedTridentSpoutExecutor
 * (storm-client 2.8.3), as a worker drives them, without LocalCluster, against the test ZooKeeper (Storm's
 * transactional state) and the Kafka 4.4 broker: where each partition's first batch starts, what it emits, what goes
 * wrong, and the batch metas the executor then writes under <transactional.zookeeper.root>/<txStateId>/user/.
 * tests/oracle/storm_trident_spout.py compiles and runs it, with the jars of tests/storm_runner/client/pom.xml
 * (client-2.8.3/lib: storm-client 2.8.3 holds Trident's executor classes and, in storm-shaded-deps, Curator).
 *
 *   java -cp CLASSES:LIB/'*' ClientTridentRunner -        (the document {"scenarios": [...]} on stdin)
 *
 * A scenario (JSON object):
 *   "name"                        any text, echoed back
 *   "zookeeper"                   "127.0.0.1:2181": transactional.zookeeper.servers and .port (and storm.zookeeper.*)
 *   "transactional_root"          transactional.zookeeper.root
 *   "tx_state_id"                 the stream's txStateId: the state is <root>/<txStateId>/user/<topic>@<N>/<txid>
 *   "storm_id"                    what context.getStormId() answers: the topologyId the emitter compares and writes
 *   "bootstrap_servers", "topic"
 *   "first_poll_offset_strategy"  EARLIEST | LATEST | UNCOMMITTED_EARLIEST (Storm's default) | UNCOMMITTED_LATEST
 *   "kafka_props"                 more consumer properties (KafkaTridentSpoutConfig.Builder#setProp)
 *   "executor"                    "opaque" (default): OpaquePartitionedTridentSpoutExecutor around
 *                                 KafkaTridentSpoutOpaque; "transactional": PartitionedTridentSpoutExecutor around
 *                                 KafkaTridentSpoutTransactional (a real spout from 2.0.0; a stub whose getCoordinator
 *                                 and getEmitter answer null in 1.x: KafkaTridentSpoutTransactional.java at v1.2.4)
 *   "max_batches"                 at most this many transactions (default 6)
 *   "idle_batches"                stop after this many batches in a row that emit nothing new (default 3; an empty
 *                                 batch costs the emitter's poll timeout, 200 ms)
 *   "deadline_ms"                 no new batch after this long (default 20000): then "timed_out" is true
 *
 * What it does, as a Trident topology's components would (tags: storm-client and storm-kafka-client v2.8.3):
 *   - the conf: Storm's defaults.yaml + storm.zookeeper.servers/port + transactional.zookeeper.servers/port/root +
 *     topology.name + storm.id;
 *   - the spout: new KafkaTridentSpoutOpaque(KafkaTridentSpoutConfig.builder(bootstrap, topic)
 *     .setFirstPollOffsetStrategy(...).build()), its default DefaultRecordTranslator (tuples: topic, partition,
 *     offset, key, value) and RoundRobinManualPartitioner;
 *   - new OpaquePartitionedTridentSpoutExecutor(spout); getCoordinator and getEmitter(txStateId, conf, context), with
 *     a Mockito-mocked TopologyContext: getStormId, task index 0 of one task of component "spout", registerMetric
 *     answering as TopologyContext.registerMetric does (TopologyContext.java:349-404);
 *   - the first txid as MasterBatchCoordinator.open reads it ("currtx" of TransactionalState.newCoordinatorState,
 *     else INIT_TXID 1); per txid: coordinator.initializeTransaction(txid, previous meta, null);
 *     emitter.emitBatch(new TransactionAttempt(txid, 0), meta, collector); emitter.commit(attempt);
 *     emitter.success(attempt); "currtx" = txid + 1 (MasterBatchCoordinator.ack). A call that throws ends the
 *     scenario there (the executor would die);
 *   - close() of the emitter and coordinator (each closes its KafkaConsumer), then, by reflection and off the main
 *     thread, the two TransactionalStates' Curator clients, which nothing in Storm closes.
 * topology.transactional.id is not set: only the pre-Trident org.apache.storm.transactional classes read it
 * (v1.2.4); Trident hands the txStateId to getCoordinator and getEmitter itself (TridentSpoutExecutor.prepare,
 * TridentSpoutCoordinator.prepare), as done here.
 * The spout is handed to the executor behind a java.lang.reflect.Proxy of IOpaquePartitionedTridentSpout whose
 * emitter passes every call straight through and only notes, per emitBatchNew, the last metas the executor handed it
 * (which txid's state it chose), the metas it returned, or what it threw.
 *
 * Output, one JSON line on stdout: {"scenarios": [{...}, ...]}, in input order, each as OldTridentRunner's:
 *   "name", "first_txid", "txids", "partitions",
 *   "first_emitted"  {"0": 4, "1": null}: per partition, the first offset emitted (the tuple's offset), or null
 *   "started_at"     {"0": 4}: per partition, where the first batch started: its meta's firstOffset when it
 *                    emitted, else lastOffset + 1 (KafkaTridentSpoutEmitter.emitBatchNew: an empty batch's meta is
 *                    position - 1)
 *   "emitted", "handed", "returned", "errors" (by partition, and "batch": emitBatchNew seeks every partition before it
 *   polls, so what it throws is the whole batch's), "nodes_before", "nodes_after", "written", "log", "timed_out",
 *   "seconds".
 *
 * stdout carries that line only. Bad input: exit 2; the runner's own failure: exit 1. Java 17 (and 25).
 *
 * The same source runs on storm-kafka-client 1.2.4's jars (client-1.2.4/lib: storm-core 1.2.4 holds Trident,
 * kafka-clients 0.10.1.0, so against the Kafka 3.9 broker): what differs between the releases is reached by
 * reflection and by method name, never imported. In 1.x the spout is new KafkaTridentSpoutOpaque(KafkaSpoutConfig
 * .builder(bootstrap, topic).setFirstPollOffsetStrategy(KafkaSpoutConfig.FirstPollOffsetStrategy...).build())
 * (its default ManualPartitionSubscription, RoundRobinManualPartitioner), the executor calls the emitter's
 * emitPartitionBatch(tx, collector, partition, lastMeta) once per partition (storm-core v1.2.4,
 * OpaquePartitionedTridentSpoutExecutor.java:135-145), which the proxy notes as it notes emitBatchNew, and the
 * coordinator's partitions are those KafkaTridentSpoutTopicPartitionRegistry.INSTANCE holds: a JVM-wide enum the
 * emitter's consumer fills as it is assigned partitions and nothing empties but a revocation, emptied here before
 * each scenario as a fresh worker's JVM starts it (else a scenario's coordinator would also name the partitions of
 * the topics before it). 1.x's meta is {"tp": {"topic", "partition"}, "firstOffset", "lastOffset"}, no topologyId,
 * and an empty batch returns the meta it was handed (null without one: KafkaTridentSpoutEmitter.java:113-150), so
 * "started_at" of a partition whose first batch emitted nothing is, in 1.x, the consumer's position after that batch
 * (where its seek put it: KafkaTridentSpoutEmitter.kafkaConsumer.position, read by reflection).
 * storm-core 1.2.4's TransactionalState connects through its shaded ZooKeeper 3.4.14 client: the JVM needs the
 * hosts file tests/oracle/storm_trident_spout.py gives OldTridentRunner's.
 *
 * "executor": "transactional" (tags: storm-core v1.2.4, storm-client v2.8.3, PartitionedTridentSpoutExecutor.java):
 * the executor's Emitter is no ICommitterTridentSpout.Emitter, so TridentSpoutExecutor never calls commit (it is
 * not called here either); emitBatch writes each partition's meta itself, as it emits (RotatingTransactionalState
 * .getStateOrCreate), and replays a txid whose state exists (reEmitPartitionBatch in 2.x, emitPartitionBatch in
 * the 1.x IPartitionedTridentSpout.Emitter), which the proxy notes too:
 *   "replayed"       {"0": [<the meta the executor handed a replay, as JSON text>, ...]}
 * and "started_at" is then, for a partition whose first batch was a replay, that meta's firstOffset.
 */

import com.fasterxml.jackson.databind.ObjectMapper;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.storm.Config;
import org.apache.storm.metric.api.CombinedMetric;
import org.apache.storm.metric.api.ICombiner;
import org.apache.storm.metric.api.IReducer;
import org.apache.storm.metric.api.ReducedMetric;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFramework;
import org.apache.storm.shade.org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.storm.shade.org.apache.curator.retry.RetryNTimes;
import org.apache.storm.shade.org.apache.zookeeper.data.Stat;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.trident.operation.TridentCollector;
import org.apache.storm.trident.spout.ICommitterTridentSpout;
import org.apache.storm.trident.spout.IOpaquePartitionedTridentSpout;
import org.apache.storm.trident.spout.IPartitionedTridentSpout;
import org.apache.storm.trident.spout.ISpoutPartition;
import org.apache.storm.trident.spout.ITridentSpout;
import org.apache.storm.trident.spout.OpaquePartitionedTridentSpoutExecutor;
import org.apache.storm.trident.spout.PartitionedTridentSpoutExecutor;
import org.apache.storm.trident.topology.TransactionAttempt;
import org.apache.storm.trident.topology.state.TransactionalState;
import org.apache.storm.utils.Utils;
import org.mockito.Mockito;
import org.mockito.stubbing.Answer;

public final class ClientTridentRunner extends RunnerIO {

    static final ObjectMapper JSON = new ObjectMapper();
    static final Pattern PARTITION_ID = Pattern.compile("^.*@(\\d+)$");  // KafkaTridentSpoutTopicPartition.getId
    static final String[] CAPTURED = {"org.apache.storm.kafka", "org.apache.storm.trident",
                                      "org.apache.kafka.clients.consumer"};
    static final int LOG_LINES = 200;

    static volatile Set<String> currentLog;

    public static void main(String[] args) {
        // Curator's and ZooKeeper's threads would keep the JVM up: runScenarios exits
        runScenarios("ClientTridentRunner", args, document -> JSON.readValue(document, Object.class),
                     ClientTridentRunner::captureLogs, ClientTridentRunner::run, JSON::writeValueAsString);
    }

    // --- one scenario ------------------------------------------------------------------------------------------

    /** What the proxy around the spout's emitter saw, per partition number. */
    static final class Seen {
        final Map<String, Object> handed = new TreeMap<>(ClientTridentRunner::byNumber);
        final Map<String, List<Object>> returned = new TreeMap<>(ClientTridentRunner::byNumber);
        final Map<String, List<Object>> replayed = new TreeMap<>(ClientTridentRunner::byNumber);
        final Map<String, Long> firstReplay = new TreeMap<>(ClientTridentRunner::byNumber);  // partition -> txid
        final Map<String, Long> firstNew = new TreeMap<>(ClientTridentRunner::byNumber);
        // 1.x: the consumer's position after a partition's first batch (where an empty one started)
        final Map<String, Long> position = new TreeMap<>(ClientTridentRunner::byNumber);
        long txid;
    }

    static Map<String, Object> run(Map<String, Object> s) throws Exception {
        long t0 = System.nanoTime();
        String name = text(s, "name");
        String topic = text(s, "topic");
        String root = text(s, "transactional_root");
        String txStateId = text(s, "tx_state_id");
        String stormId = text(s, "storm_id");
        String bootstrap = text(s, "bootstrap_servers");
        long maxBatches = number(s, "max_batches", 6);
        long idleBatches = number(s, "idle_batches", 3);
        long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(number(s, "deadline_ms", 20_000));

        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        ZooKeeperServers zookeeper = zooKeeperServers(name, text(s, "zookeeper"));
        List<String> servers = zookeeper.hosts;
        Integer port = zookeeper.port;
        conf.put(Config.STORM_ZOOKEEPER_SERVERS, servers);
        conf.put(Config.STORM_ZOOKEEPER_PORT, port);
        conf.put(Config.TRANSACTIONAL_ZOOKEEPER_SERVERS, servers);
        conf.put(Config.TRANSACTIONAL_ZOOKEEPER_PORT, port);
        conf.put(Config.TRANSACTIONAL_ZOOKEEPER_ROOT, root);
        conf.put(Config.TOPOLOGY_NAME, topologyOf(stormId));
        conf.put(Config.STORM_ID, stormId);

        Object executorKind = s.get("executor");
        boolean transactional = "transactional".equals(executorKind);
        if (executorKind != null && !transactional && !"opaque".equals(executorKind)) {
            throw new IllegalArgumentException(name + ": executor: want \"opaque\" or \"transactional\"");
        }
        Object real = spout(s, bootstrap, topic, transactional);

        TopologyContext context = context(stormId);
        Seen seen = new Seen();
        Object spout = observed(real, seen, transactional);
        if (!TWO_X) {
            // a fresh worker's JVM: the JVM-wide registry 1.x's coordinator reads holds no partition yet
            Object registry = Class.forName(PACKAGE + "KafkaTridentSpoutTopicPartitionRegistry").getEnumConstants()[0];
            Object held = registry.getClass().getMethod("getTopicPartitions").invoke(registry);
            registry.getClass().getMethod("removeAll", java.util.Collection.class)
                .invoke(registry, new ArrayList<>((java.util.Collection<?>) held));
        }

        Map<String, List<Long>> offsets = new TreeMap<>(ClientTridentRunner::byNumber);
        Map<String, List<Object>> emitted = new TreeMap<>(ClientTridentRunner::byNumber);
        List<String> batchErrors = new ArrayList<>();
        Set<String> log = Collections.synchronizedSet(new LinkedHashSet<>());
        List<Long> txids = new ArrayList<>();
        List<Long> partitions = new ArrayList<>();
        boolean timedOut = false;
        String userPath = root + "/" + txStateId + "/user";
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("name", name);

        try {
            CuratorFramework zk = reader(String.join(",", hostPorts(servers, port)), name);
            Map<String, Map<String, Stat>> before = stats(zk, userPath);
            result.put("nodes_before", nodes(zk, userPath, before));

            currentLog = log;
            @SuppressWarnings({"unchecked", "rawtypes"})
            ITridentSpout<Object> executor = transactional
                ? new PartitionedTridentSpoutExecutor((IPartitionedTridentSpout) spout)
                : new OpaquePartitionedTridentSpoutExecutor((IOpaquePartitionedTridentSpout) spout);
            ITridentSpout.BatchCoordinator<Object> coordinator = executor.getCoordinator(txStateId, conf, context);
            ITridentSpout.Emitter<Object> emitter = executor.getEmitter(txStateId, conf, context);
            TransactionalState coordinatorState = TransactionalState.newCoordinatorState(conf, txStateId);
            try {
                // MasterBatchCoordinator.getStoredCurrTransaction (v2.8.3): any Number (json-smart reads "9" as an
                // Integer), else INIT_TXID 1
                Object stored = coordinatorState.getData("currtx");
                long firstTxid = stored instanceof Number && ((Number) stored).longValue() > 1
                    ? ((Number) stored).longValue() : 1L;
                Object previous = null;
                int idle = 0;
                for (long txid = firstTxid; txids.size() < maxBatches; txid++) {
                    if (System.nanoTime() > deadline) {
                        timedOut = true;
                        break;
                    }
                    Object[] initialized = new Object[1];
                    long tx = txid;
                    Object prior = previous;
                    if (!call(batchErrors, "initializeTransaction txid " + txid,
                              () -> initialized[0] = coordinator.initializeTransaction(tx, prior, null))) {
                        break;  // the coordinator would die here (1.x's KafkaTridentSpoutTransactional: null)
                    }
                    Object meta = initialized[0];
                    previous = meta;
                    if (partitions.isEmpty()) {
                        for (Object tp : (List<?>) meta) {  // TopicPartitionSerializer.toMap
                            partitions.add(((Number) ((Map<?, ?>) tp).get("partition")).longValue());
                        }
                        Collections.sort(partitions);
                    }
                    TransactionAttempt attempt = new TransactionAttempt(txid, 0);
                    txids.add(txid);
                    seen.txid = txid;
                    Map<String, List<Long>> batch = new TreeMap<>(ClientTridentRunner::byNumber);
                    TridentCollector collector = new TridentCollector() {
                        @Override
                        public void emit(List<Object> values) {
                            // DefaultRecordTranslator: (topic, partition, offset, key, value)
                            String p = String.valueOf(values.get(1));
                            batch.computeIfAbsent(p, k -> new ArrayList<>()).add(((Number) values.get(2)).longValue());
                        }

                        // TridentCollector.flush, from 2.x (not @Override: 1.x's interface has none)
                        public void flush() {
                        }

                        @Override
                        public void reportError(Throwable t) {
                            batchErrors.add("reportError txid " + seen.txid + ": " + t);
                        }
                    };
                    boolean ok = call(batchErrors, "emitBatch txid " + txid, () -> emitter.emitBatch(attempt, meta,
                                                                                                     collector));
                    boolean fresh = false;
                    for (Map.Entry<String, List<Long>> e : batch.entrySet()) {
                        List<Long> got = e.getValue();
                        fresh |= !offsets.containsKey(e.getKey());
                        offsets.computeIfAbsent(e.getKey(), k -> new ArrayList<>()).addAll(got);
                        emitted.computeIfAbsent(e.getKey(), k -> new ArrayList<>())
                            .add(List.of(txid, got.get(0), got.get(got.size() - 1), (long) got.size()));
                    }
                    // TridentSpoutExecutor.execute commits a committer's batches only (the opaque executor's)
                    if (!ok || emitter instanceof ICommitterTridentSpout.Emitter && !call(batchErrors,
                            "commit txid " + txid, () -> ((ICommitterTridentSpout.Emitter) emitter).commit(attempt))) {
                        break;  // the executor would die here: nothing more is called
                    }
                    if (!call(batchErrors, "success txid " + txid, () -> emitter.success(attempt))) {
                        break;
                    }
                    coordinatorState.setData("currtx", txid + 1);  // MasterBatchCoordinator.ack
                    idle = fresh ? 0 : idle + 1;
                    if (offsets.keySet().size() >= partitions.size() || idle >= idleBatches) {
                        break;
                    }
                }
            } finally {
                call(batchErrors, "emitter.close", emitter::close);
                call(batchErrors, "coordinator.close", coordinator::close);
                // after the run, what nothing in Storm closes: the two TransactionalStates' Curator clients
                closeLater("closing the coordinator state", coordinatorState::close);
                String stateField = TWO_X ? "state" : "_state";  // the executor Emitter's (1.x: _state)
                closeLater("closing the emitter's state",
                           () -> ((TransactionalState) field(emitter, stateField)).close());
                currentLog = null;
            }
            Map<String, Map<String, Stat>> after = stats(zk, userPath);
            result.put("nodes_after", nodes(zk, userPath, after));
            Map<String, Object> written = new TreeMap<>();
            for (Map.Entry<String, Map<String, Stat>> folder : after.entrySet()) {
                Map<String, Stat> was = before.getOrDefault(folder.getKey(), Collections.emptyMap());
                Map<String, Object> changed = new TreeMap<>(ClientTridentRunner::byNumber);
                for (Map.Entry<String, Stat> node : folder.getValue().entrySet()) {
                    Stat old = was.get(node.getKey());
                    if (old == null || old.getMzxid() != node.getValue().getMzxid()) {
                        changed.put(node.getKey(), read(zk, userPath + "/" + folder.getKey() + "/" + node.getKey()));
                    }
                }
                if (!changed.isEmpty()) {
                    written.put(folder.getKey(), changed);
                }
            }
            result.put("written", written);
        } finally {
            currentLog = null;
        }

        Map<String, Object> first = new TreeMap<>(ClientTridentRunner::byNumber);
        Map<String, Object> startedAt = new TreeMap<>(ClientTridentRunner::byNumber);
        for (long p : partitions) {
            String key = String.valueOf(p);
            List<Long> got = offsets.get(key);
            first.put(key, got == null ? null : got.get(0));
            List<Object> metas = seen.returned.get(key);
            Object meta = metas == null || metas.isEmpty() ? null : metas.get(0);
            Object start = null;
            Long replay = seen.firstReplay.get(key);
            if (replay != null && (!seen.firstNew.containsKey(key) || replay < seen.firstNew.get(key))) {
                Object replayedMeta = seen.replayed.get(key).get(0);  // the replayed batch starts at its firstOffset
                start = replayedMeta instanceof Map ? ((Map<?, ?>) replayedMeta).get("firstOffset") : null;
            } else if (!TWO_X && !(emitted.containsKey(key)
                                   && ((List<?>) emitted.get(key).get(0)).get(0).equals(txids.get(0)))) {
                start = seen.position.get(key);  // 1.x: an empty first batch returns the meta handed, or null
            } else if (meta instanceof Map) {
                boolean emittedFirst = !emitted.getOrDefault(key, Collections.emptyList()).isEmpty()
                    && ((List<?>) emitted.get(key).get(0)).get(0).equals(txids.get(0));
                Map<?, ?> m = (Map<?, ?>) meta;
                start = emittedFirst ? m.get("firstOffset") : ((Number) m.get("lastOffset")).longValue() + 1;
            }
            startedAt.put(key, start);
        }
        Map<String, Object> errors = new TreeMap<>(ClientTridentRunner::byNumber);
        if (!batchErrors.isEmpty()) {
            errors.put("batch", batchErrors);
        }
        Map<String, Object> handed = new TreeMap<>(ClientTridentRunner::byNumber);
        for (Map.Entry<String, Object> e : seen.handed.entrySet()) {
            handed.put(e.getKey(), e.getValue() == null ? null : JSON.writeValueAsString(e.getValue()));
        }
        Map<String, Object> returned = new TreeMap<>(ClientTridentRunner::byNumber);
        for (Map.Entry<String, List<Object>> e : seen.returned.entrySet()) {
            List<Object> texts = new ArrayList<>();
            for (Object meta : e.getValue()) {
                texts.add(meta == null ? null : JSON.writeValueAsString(meta));
            }
            returned.put(e.getKey(), texts);
        }
        result.put("first_txid", txids.isEmpty() ? null : txids.get(0));
        result.put("txids", txids);
        result.put("partitions", partitions);
        result.put("first_emitted", first);
        result.put("started_at", startedAt);
        result.put("emitted", emitted);
        result.put("handed", handed);
        result.put("returned", returned);
        Map<String, Object> replayed = new TreeMap<>(ClientTridentRunner::byNumber);
        for (Map.Entry<String, List<Object>> e : seen.replayed.entrySet()) {
            List<Object> texts = new ArrayList<>();
            for (Object meta : e.getValue()) {
                texts.add(meta == null ? null : JSON.writeValueAsString(meta));
            }
            replayed.put(e.getKey(), texts);
        }
        result.put("replayed", replayed);
        result.put("errors", errors);
        synchronized (log) {
            result.put("log", new ArrayList<>(log));
        }
        result.put("timed_out", timedOut);
        result.put("seconds", Math.round((System.nanoTime() - t0) / 1e6) / 1e3);
        return result;
    }

    static final String PACKAGE = "org.apache.storm.kafka.spout.trident.";
    /** storm-kafka-client 2.x (KafkaTridentSpoutConfig, from 2.0.0) or 1.x (KafkaSpoutConfig) on the classpath. */
    static final boolean TWO_X = present(PACKAGE + "KafkaTridentSpoutConfig");

    static boolean present(String name) {
        try {
            Class.forName(name, false, ClientTridentRunner.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** The real spout, built by reflection as a topology builds it (the two releases share no config class):
     *  2.x new KafkaTridentSpoutOpaque|KafkaTridentSpoutTransactional(KafkaTridentSpoutConfig.builder(bootstrap,
     *  topic).setFirstPollOffsetStrategy(FirstPollOffsetStrategy.X).setProp(...).build());
     *  1.x new KafkaTridentSpoutOpaque(KafkaSpoutConfig.builder(bootstrap, topic)
     *  .setFirstPollOffsetStrategy(KafkaSpoutConfig.FirstPollOffsetStrategy.X).setProp(...).build()), and 1.x's
     *  stub new KafkaTridentSpoutTransactional(). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static Object spout(Map<String, Object> s, String bootstrap, String topic, boolean transactional)
            throws Exception {
        String spoutClass = PACKAGE + (transactional ? "KafkaTridentSpoutTransactional" : "KafkaTridentSpoutOpaque");
        if (!TWO_X && transactional) {
            return Class.forName(spoutClass).getConstructor().newInstance();
        }
        Class<?> config = Class.forName(TWO_X ? PACKAGE + "KafkaTridentSpoutConfig"
                                              : "org.apache.storm.kafka.spout.KafkaSpoutConfig");
        Object builder = config.getMethod("builder", String.class, String[].class)
            .invoke(null, bootstrap, new String[] {topic});
        if (s.get("first_poll_offset_strategy") != null) {
            Class<? extends Enum> strategy = (Class<? extends Enum>) Class.forName(TWO_X
                ? "org.apache.storm.kafka.spout.FirstPollOffsetStrategy"
                : "org.apache.storm.kafka.spout.KafkaSpoutConfig$FirstPollOffsetStrategy");
            builder.getClass().getMethod("setFirstPollOffsetStrategy", strategy)
                .invoke(builder, Enum.valueOf(strategy, text(s, "first_poll_offset_strategy")));
        }
        if (s.get("kafka_props") instanceof Map) {
            Method setProp = builder.getClass().getMethod("setProp", String.class, Object.class);
            for (Map.Entry<?, ?> e : ((Map<?, ?>) s.get("kafka_props")).entrySet()) {
                setProp.invoke(builder, e.getKey(), e.getValue());
            }
        }
        Object built = builder.getClass().getMethod("build").invoke(builder);
        for (java.lang.reflect.Constructor<?> c : Class.forName(spoutClass).getConstructors()) {
            if (c.getParameterCount() == 1 && c.getParameterTypes()[0].isInstance(built)) {
                return c.newInstance(built);
            }
        }
        throw new IllegalStateException(spoutClass + " has no constructor taking " + built.getClass().getName());
    }

    /** The spout, its coordinator passed through, its emitter behind a Proxy that notes, per batch, the last metas
     *  the executor handed it (which txid's state it chose), the metas it returned, and the metas of the batches it
     *  was asked to replay: emitBatchNew(tx, collector, partitions, lastPartitionMetaMap) (2.x, both executors: v2.8.3
     *  OpaquePartitionedTridentSpoutExecutor.Emitter.emitBatch, PartitionedTridentSpoutExecutor.Emitter.emitBatch),
     *  emitPartitionBatch(tx, collector, partition, lastMeta) (1.x opaque, per partition), reEmitPartitionBatch(tx,
     *  collector, partition, meta) (2.x transactional) and emitPartitionBatchNew / emitPartitionBatch (the 1.x
     *  IPartitionedTridentSpout.Emitter, which 1.x's stub never makes). */
    static Object observed(Object spout, Seen seen, boolean transactional) {
        ClassLoader loader = ClientTridentRunner.class.getClassLoader();
        Class<?> spoutType = transactional ? IPartitionedTridentSpout.class : IOpaquePartitionedTridentSpout.class;
        Class<?> emitterType = transactional ? IPartitionedTridentSpout.Emitter.class
                                             : IOpaquePartitionedTridentSpout.Emitter.class;
        return Proxy.newProxyInstance(loader, new Class<?>[] {spoutType},
            (proxy, method, args) -> {
                Object answer = invoke(spout, method, args);
                if (!method.getName().equals("getEmitter") || answer == null) {
                    return answer;
                }
                Object emitter = answer;
                return Proxy.newProxyInstance(loader, new Class<?>[] {emitterType},
                    (p, m, a) -> {
                        String called = m.getName();
                        boolean replay = transactional && (called.equals("reEmitPartitionBatch")
                                                           || called.equals("emitPartitionBatch"));
                        if (replay) {
                            String partition = partitionKey(((ISpoutPartition) a[2]).getId());
                            seen.replayed.computeIfAbsent(partition, k -> new ArrayList<>()).add(a[3]);
                            seen.firstReplay.putIfAbsent(partition, seen.txid);
                            return invoke(emitter, m, a);
                        }
                        if (called.equals("emitBatchNew")) {
                            for (Map.Entry<?, ?> e : ((Map<?, ?>) a[3]).entrySet()) {
                                String partition = partitionKey(((ISpoutPartition) e.getKey()).getId());
                                if (!seen.handed.containsKey(partition)) {
                                    seen.handed.put(partition, e.getValue());
                                }
                            }
                            for (Object partition : (java.util.Collection<?>) a[2]) {
                                seen.firstNew.putIfAbsent(partitionKey(((ISpoutPartition) partition).getId()),
                                                          seen.txid);
                            }
                            Object metas = invoke(emitter, m, a);
                            for (Map.Entry<?, ?> e : ((Map<?, ?>) metas).entrySet()) {
                                String partition = partitionKey(((ISpoutPartition) e.getKey()).getId());
                                seen.returned.computeIfAbsent(partition, k -> new ArrayList<>()).add(e.getValue());
                            }
                            return metas;
                        }
                        if (called.equals("emitPartitionBatch") || called.equals("emitPartitionBatchNew")) {
                            String partition = partitionKey(((ISpoutPartition) a[2]).getId());
                            if (!seen.handed.containsKey(partition)) {
                                seen.handed.put(partition, a[3]);
                            }
                            seen.firstNew.putIfAbsent(partition, seen.txid);
                            Object meta = invoke(emitter, m, a);
                            seen.returned.computeIfAbsent(partition, k -> new ArrayList<>()).add(meta);
                            if (!TWO_X && !seen.position.containsKey(partition)) {
                                // 1.x's KafkaTridentSpoutEmitter.kafkaConsumer, after the batch's seek and poll
                                Object tp = a[2].getClass().getMethod("getTopicPartition").invoke(a[2]);
                                Object consumer = field(emitter, "kafkaConsumer");
                                seen.position.put(partition, ((Number) consumer.getClass()
                                    .getMethod("position", tp.getClass()).invoke(consumer, tp)).longValue());
                            }
                            return meta;
                        }
                        return invoke(emitter, m, a);
                    });
            });
    }

    static String partitionKey(String id) {
        Matcher m = PARTITION_ID.matcher(id);
        return m.matches() ? m.group(1) : id;
    }

    /** A TopologyContext as a worker's for task 1, index 0 of one task of component "spout"; registerMetric
     *  answers as TopologyContext.registerMetric (v2.8.3, TopologyContext.java:349-404), without its registry. */
    static TopologyContext context(String stormId) {
        Answer<Object> answer = invocation -> {
            if (invocation.getMethod().getName().equals("registerMetric")) {
                Object metric = invocation.getArgument(1);
                if (metric instanceof IReducer) {
                    return new ReducedMetric((IReducer) metric);
                }
                if (metric instanceof ICombiner) {
                    return new CombinedMetric((ICombiner) metric);
                }
                return metric;
            }
            return Mockito.RETURNS_DEFAULTS.answer(invocation);
        };
        TopologyContext context = Mockito.mock(TopologyContext.class, answer);
        Mockito.doReturn(stormId).when(context).getStormId();
        Mockito.doReturn(0).when(context).getThisTaskIndex();
        Mockito.doReturn(1).when(context).getThisTaskId();
        Mockito.doReturn("spout").when(context).getThisComponentId();
        Mockito.doReturn(Collections.singletonList(1)).when(context).getComponentTasks(Mockito.anyString());
        return context;
    }

    static boolean call(List<String> errors, String what, Step step) {
        return call("client-trident", errors, what, step);
    }

    // --- ZooKeeper, read as it is -------------------------------------------------------------------------------

    /** folder under user/ (<topic>@N) -> txid child -> Stat. */
    static Map<String, Map<String, Stat>> stats(CuratorFramework zk, String userPath) throws Exception {
        Map<String, Map<String, Stat>> found = new TreeMap<>();
        if (zk.checkExists().forPath(userPath) == null) {
            return found;
        }
        for (String folder : zk.getChildren().forPath(userPath)) {
            Map<String, Stat> txids = new TreeMap<>(ClientTridentRunner::byNumber);
            for (String txid : zk.getChildren().forPath(userPath + "/" + folder)) {
                Stat stat = zk.checkExists().forPath(userPath + "/" + folder + "/" + txid);
                if (stat != null) {
                    txids.put(txid, stat);
                }
            }
            found.put(folder, txids);
        }
        return found;
    }

    static Map<String, Object> nodes(CuratorFramework zk, String userPath, Map<String, Map<String, Stat>> stats)
            throws Exception {
        Map<String, Object> nodes = new TreeMap<>();
        for (Map.Entry<String, Map<String, Stat>> folder : stats.entrySet()) {
            Map<String, Object> txids = new TreeMap<>(ClientTridentRunner::byNumber);
            for (String txid : folder.getValue().keySet()) {
                txids.put(txid, read(zk, userPath + "/" + folder.getKey() + "/" + txid));
            }
            nodes.put(folder.getKey(), txids);
        }
        return nodes;
    }

    static String read(CuratorFramework zk, String path) throws Exception {
        byte[] data = zk.getData().forPath(path);
        return data == null ? null : new String(data, StandardCharsets.UTF_8);
    }

    /** The runner's own ZooKeeper client for a connect string, one for all scenarios: it only reads the nodes
     *  before and after a run. */
    static final Map<String, CuratorFramework> READERS = new HashMap<>();

    static CuratorFramework reader(String connect, String scenario) throws InterruptedException {
        CuratorFramework zk = READERS.get(connect);
        if (zk == null) {
            zk = CuratorFrameworkFactory.newClient(connect, new RetryNTimes(3, 500));
            zk.start();
            if (!zk.blockUntilConnected(15, TimeUnit.SECONDS)) {
                throw new IllegalStateException(scenario + ": the runner's ZooKeeper client could not connect");
            }
            READERS.put(connect, zk);
        }
        return zk;
    }

    /** Closes what a scenario leaves open, off the main thread: a ZooKeeper session takes about 100 ms to close,
     *  and nothing the next scenario does depends on it. The JVM ends with System.exit, whatever is left. */
    static final java.util.concurrent.ExecutorService CLOSER = closer("client-trident-closer");

    static void closeLater(String what, Step step) {
        CLOSER.submit(() -> call(new ArrayList<>(), what, step));
    }

    /** storm-kafka-client's, Trident's and the consumer's WARN and ERROR lines, and the consumer's INFO lines
     *  about resetting a position (auto.offset.reset), into the current scenario's log (and on stderr). */
    static void captureLogs() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration configuration = context.getConfiguration();
        // (name, filter, layout, ignoreExceptions): log4j 2.8.2's (1.x) and 2.25's (2.x) both have it
        AbstractAppender appender = new AbstractAppender("client-trident-capture", null, null, true) {
            @Override
            public void append(LogEvent event) {
                String message = event.getMessage() == null ? "" : event.getMessage().getFormattedMessage();
                if (!event.getLevel().isMoreSpecificThan(Level.WARN)
                        && !message.toLowerCase().contains("resetting offset")) {
                    return;
                }
                Set<String> log = currentLog;
                String logger = event.getLoggerName();
                Throwable thrown = event.getThrown();
                String line = event.getLevel() + " " + logger.substring(logger.lastIndexOf('.') + 1) + ": " + message
                        + (thrown == null ? "" : ": " + thrown);
                if (log != null && log.size() < LOG_LINES) {
                    log.add(line);
                }
                System.err.println("client-trident: " + line);
            }
        };
        appender.start();
        configuration.addAppender(appender);
        for (String name : CAPTURED) {
            LoggerConfig logger = new LoggerConfig(name, Level.INFO, false);
            logger.addAppender(appender, Level.INFO, null);
            configuration.addLogger(name, logger);
        }
        context.updateLoggers();
    }
}
