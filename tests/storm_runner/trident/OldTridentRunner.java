/*
 * The real storm-kafka Trident spout (org.apache.storm.kafka.trident.OpaqueTridentKafkaSpout, storm-kafka 1.2.4, its
 * TridentKafkaEmitter) driven by Storm's own OpaquePartitionedTridentSpoutExecutor (storm-core 1.2.4), as a worker
 * drives them, without LocalCluster, against the test ZooKeeper (Storm's transactional state) and the Kafka 3.9
 * broker: where each partition's first batch starts, what it emits, what goes wrong, and the batch metas the
 * executor then writes under <transactional.zookeeper.root>/<txStateId>/user/. tests/oracle/storm_trident_spout.py
 * compiles and runs it, with the jars of tests/storm_runner/kafka/pom.xml (kafka-1.2.4/lib).
 *
 *   java -cp CLASSES:LIB/'*' OldTridentRunner -        (the document {"scenarios": [...]} on stdin)
 *
 * A scenario (JSON object):
 *   "name"                 any text, echoed back
 *   "zookeeper"            "127.0.0.1:2181": transactional.zookeeper.servers and .port (and storm.zookeeper.*)
 *   "transactional_root"   transactional.zookeeper.root, e.g. "/r/transactional"
 *   "tx_state_id"          the stream's txStateId (TridentTopology.newStream's name): the state is
 *                          <root>/<txStateId>/user/<partition id>/<txid>
 *   "storm_id"             what context.getStormId() answers: the topology instance id the emitter compares and writes
 *   "topology_name"        topology.name (default: the storm id less its "-<counter>-<timestamp>" tail)
 *   "topic"
 *   "hosts"                {"zk": "127.0.0.1:2181/kafka39", "path": "/brokers"}: ZkHosts(brokerZkStr, brokerZkPath)
 *   "spout_config"         public fields of TridentKafkaConfig/KafkaConfig by their Java names (startOffsetTime,
 *                          ignoreZkOffsets, useStartOffsetTimeIfOffsetOutOfRange, fetchSizeBytes, ...)
 *   "max_batches"          at most this many transactions (default 6)
 *   "idle_batches"         stop after this many batches in a row that emit nothing new (default 2)
 *   "deadline_ms"          no new batch after this long (default 20000): then "timed_out" is true
 *   "executor"             "opaque" (default): OpaquePartitionedTridentSpoutExecutor around OpaqueTridentKafkaSpout;
 *                          "transactional": PartitionedTridentSpoutExecutor around TransactionalTridentKafkaSpout
 *                          (TridentKafkaEmitter.asTransactionalEmitter), below
 *
 * What it does, as a Trident topology's components would (tags: storm-core and storm-kafka v1.2.4):
 *   - the conf: Storm's defaults.yaml + storm.zookeeper.servers/port + transactional.zookeeper.servers/port/root +
 *     topology.name + storm.id;
 *   - the spout: new OpaqueTridentKafkaSpout(TridentKafkaConfig) whose scheme is
 *     MessageMetadataSchemeAsMultiScheme(StringMessageAndMetadataScheme), so that each tuple carries its partition
 *     and offset (TridentKafkaEmitter.emit takes that branch; nothing else in the emitter depends on the scheme);
 *   - new OpaquePartitionedTridentSpoutExecutor(spout); its getCoordinator(txStateId, conf, context) and
 *     getEmitter(txStateId, conf, context) (the emitter's TransactionalState.newUserState connects here), with a
 *     Mockito-mocked TopologyContext: getStormId, task index 0 of one task of component "spout", and registerMetric
 *     answering as TopologyContext.registerMetric does (the metric itself; a ReducedMetric or CombinedMetric around
 *     a reducer or combiner: TopologyContext.java:385-394), which TridentKafkaEmitter's constructor needs;
 *   - the first txid as MasterBatchCoordinator.open reads it: "currtx" of
 *     TransactionalState.newCoordinatorState(conf, txStateId), else INIT_TXID 1 (MasterBatchCoordinator.java:262-270);
 *   - per txid: coordinator.initializeTransaction(txid, previous meta, null) (TridentSpoutCoordinator), then
 *     emitter.emitBatch(new TransactionAttempt(txid, 0), meta, collector) (TridentSpoutExecutor.execute), then
 *     emitter.commit(attempt) and emitter.success(attempt) (the commit and success streams), then "currtx" = txid + 1
 *     as MasterBatchCoordinator.ack writes it (MasterBatchCoordinator.java:141-148). An emitBatch or commit that
 *     throws ends the scenario there (in a worker the executor dies, and the batch is retried after the restart);
 *   - close() of the emitter and coordinator (the emitter's closes its SimpleConsumers), then, by reflection and off
 *     the main thread, what they leave open (the TransactionalStates' Curator clients, the DynamicBrokersReaders'
 *     ZooKeeper clients).
 * topology.transactional.id is not set: only the pre-Trident org.apache.storm.transactional classes read it
 * (v1.2.4); Trident hands the txStateId to getCoordinator and getEmitter itself (TridentSpoutExecutor.prepare,
 * TridentSpoutCoordinator.prepare), as done here.
 * The spout is handed to the executor behind a java.lang.reflect.Proxy of IOpaquePartitionedTridentSpout whose
 * emitter passes every call straight through and only notes, per emitPartitionBatch, the partition, the lastMeta the
 * executor handed it, the meta it returned or what it threw: which txid's state the executor chose is the point.
 *
 * Output, one JSON line on stdout: {"scenarios": [{...}, ...]}, in input order, each:
 *   "name", "first_txid", "txids" (the txids run), "partitions" ([0, 1, 2]: those of the coordinator's meta),
 *   "first_emitted"  {"0": 4, "1": null}: per partition, the first offset emitted (the tuple's offset field), or null
 *   "started_at"     {"0": 4}: per partition, "offset" of the first batch meta the emitter returned (where its first
 *                    batch fetched from, after an out-of-range move)
 *   "emitted"        {"0": [[txid, first, last, count], ...]}: per partition and batch that emitted
 *   "handed"         {"0": <the lastMeta the executor handed the first batch, as JSON text, or null>}
 *   "returned"       {"0": [<meta text per batch>]}
 *   "errors"         {"0": ["emitPartitionBatch txid 9: java.lang.NullPointerException: null"], "batch": [...]}:
 *                    what a call threw, by partition where the proxy saw it, else under "batch"
 *   "nodes_before", "nodes_after"  {"partition_0": {"7": "<text>", ...}}: every txid node under user/, by folder
 *                    (a wildcard "<topic>/partition_N" folder keeps its path)
 *   "written"        {"partition_0": {"9": "<text>"}}: the txid nodes the run created or changed (mzxid moved)
 *   "log"            storm-kafka's and Trident's WARN and ERROR lines, distinct, in order
 *   "timed_out", "seconds"
 *
 * stdout carries that line only: System.out is pointed at stderr first. Bad input: exit 2; the runner's own
 * failure: the stack trace on stderr, exit 1.
 *
 * "executor": "transactional" (tags: storm-core and storm-kafka v1.2.4): new PartitionedTridentSpoutExecutor(new
 * TransactionalTridentKafkaSpout(config)), driven as above but for commit: its Emitter is no
 * ICommitterTridentSpout.Emitter, so TridentSpoutExecutor.execute (:68-70) never commits it, and emitBatch writes
 * each partition's meta itself, as it emits (PartitionedTridentSpoutExecutor.java:131-148,
 * RotatingTransactionalState.getStateOrCreate). The proxy then notes emitPartitionBatchNew as it notes the opaque
 * emitPartitionBatch, and each replay, emitPartitionBatch(tx, collector, partition, meta) of a txid whose state
 * exists (TridentKafkaEmitter.reEmitPartitionBatch):
 *   "replayed"       {"0": [<the meta the executor handed the replay, as JSON text>, ...]}
 * and "started_at" is, for a partition whose first batch was a replay, that meta's "offset".
 *
 * Java 17 (and 25). storm-core 1.2.4 shades ZooKeeper 3.4.14's client for TransactionalState, whose
 * StaticHostProvider.getHostString parses InetSocketAddress.toString(): on JDK 14+ that reads
 * "127.0.0.1/<unresolved>", which it then looks up by name. tests/oracle/storm_trident_spout.py starts the JVM with
 * -Djdk.net.hosts.file naming a hosts file that maps that text to 127.0.0.1 (and the ZooKeeper client storm-kafka's
 * own Curator uses is 3.5.3-beta: tests/storm_runner/kafka/1.2.4/pom.xml says why). Storm's code is not touched.
 */

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

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.storm.Config;
import org.apache.storm.kafka.MessageMetadataSchemeAsMultiScheme;
import org.apache.storm.kafka.StringMessageAndMetadataScheme;
import org.apache.storm.kafka.ZkHosts;
import org.apache.storm.kafka.trident.GlobalPartitionInformation;
import org.apache.storm.kafka.trident.OpaqueTridentKafkaSpout;
import org.apache.storm.kafka.trident.TransactionalTridentKafkaSpout;
import org.apache.storm.kafka.trident.TridentKafkaConfig;
import org.apache.storm.metric.api.CombinedMetric;
import org.apache.storm.metric.api.ICombiner;
import org.apache.storm.metric.api.IReducer;
import org.apache.storm.metric.api.ReducedMetric;
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
import org.apache.zookeeper.data.Stat;
import org.json.simple.JSONValue;
import org.json.simple.parser.JSONParser;
import org.mockito.Mockito;
import org.mockito.stubbing.Answer;

public final class OldTridentRunner extends RunnerIO {

    static final Pattern PARTITION_ID = Pattern.compile("(?:.*/)?partition_(\\d+)$");
    static final String[] CAPTURED = {"org.apache.storm.kafka", "org.apache.storm.trident"};
    static final int LOG_LINES = 200;

    static volatile Set<String> currentLog;

    public static void main(String[] args) {
        // Curator's and ZooKeeper's threads would keep the JVM up: runScenarios exits
        runScenarios("OldTridentRunner", args, document -> new JSONParser().parse(document),
                     OldTridentRunner::captureLogs, OldTridentRunner::run, JSONValue::toJSONString);
    }

    // --- one scenario ------------------------------------------------------------------------------------------

    /** What the proxy around the spout's emitter saw, per partition number. */
    static final class Seen {
        final Map<String, Object> handed = new TreeMap<>(OldTridentRunner::byNumber);
        final Map<String, List<Object>> returned = new TreeMap<>(OldTridentRunner::byNumber);
        final Map<String, List<String>> errors = new TreeMap<>(OldTridentRunner::byNumber);
        final Map<String, List<Object>> replayed = new TreeMap<>(OldTridentRunner::byNumber);
        final Map<String, Long> firstReplay = new TreeMap<>(OldTridentRunner::byNumber);  // partition -> txid
        final Map<String, Long> firstNew = new TreeMap<>(OldTridentRunner::byNumber);
        long txid;
        Object emitter;  // the spout's own emitter, behind the Proxy
    }

    static Map<String, Object> run(Map<String, Object> s) throws Exception {
        long t0 = System.nanoTime();
        String name = text(s, "name");
        String topic = text(s, "topic");
        String root = text(s, "transactional_root");
        String txStateId = text(s, "tx_state_id");
        String stormId = text(s, "storm_id");
        long maxBatches = number(s, "max_batches", 6);
        long idleBatches = number(s, "idle_batches", 2);
        long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(number(s, "deadline_ms", 20_000));

        // The topology conf a worker hands the executor: Storm's defaults, its ZooKeeper, the transactional root.
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        ZooKeeperServers zookeeper = zooKeeperServers(name, text(s, "zookeeper"));
        List<String> servers = zookeeper.hosts;
        Integer port = zookeeper.port;
        conf.put(Config.STORM_ZOOKEEPER_SERVERS, servers);
        conf.put(Config.STORM_ZOOKEEPER_PORT, port);
        conf.put(Config.TRANSACTIONAL_ZOOKEEPER_SERVERS, servers);
        conf.put(Config.TRANSACTIONAL_ZOOKEEPER_PORT, port);
        conf.put(Config.TRANSACTIONAL_ZOOKEEPER_ROOT, root);
        String topologyName = (String) s.get("topology_name");
        conf.put(Config.TOPOLOGY_NAME, topologyName != null ? topologyName : topologyOf(stormId));
        conf.put(Config.STORM_ID, stormId);

        Map<?, ?> hosts = (Map<?, ?>) s.get("hosts");
        if (hosts == null || !(hosts.get("zk") instanceof String)) {
            throw new IllegalArgumentException(name + ": hosts: want {\"zk\": ..., \"path\": ...}");
        }
        ZkHosts zkHosts = hosts.get("path") == null ? new ZkHosts((String) hosts.get("zk"))
                                                    : new ZkHosts((String) hosts.get("zk"), (String) hosts.get("path"));
        TridentKafkaConfig config = new TridentKafkaConfig(zkHosts, topic);
        config.scheme = new MessageMetadataSchemeAsMultiScheme(new StringMessageAndMetadataScheme());
        if (s.get("spout_config") instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) s.get("spout_config")).entrySet()) {
                setField(config, (String) e.getKey(), e.getValue());
            }
        }

        Object executorKind = s.get("executor");
        boolean transactional = "transactional".equals(executorKind);
        if (executorKind != null && !transactional && !"opaque".equals(executorKind)) {
            throw new IllegalArgumentException(name + ": executor: want \"opaque\" or \"transactional\"");
        }
        TopologyContext context = context(stormId);
        Seen seen = new Seen();
        Object spout = observed(transactional ? new TransactionalTridentKafkaSpout(config)
                                              : new OpaqueTridentKafkaSpout(config), seen, transactional);

        Map<String, List<Long>> offsets = new TreeMap<>(OldTridentRunner::byNumber);
        Map<String, List<Object>> emitted = new TreeMap<>(OldTridentRunner::byNumber);
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
                // MasterBatchCoordinator.getStoredCurrTransaction (v1.2.4: a Long, json-simple's), else INIT_TXID 1
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
                    Object meta = coordinator.initializeTransaction(txid, previous, null);
                    previous = meta;
                    if (partitions.isEmpty()) {
                        for (Object info : (List<?>) meta) {
                            for (Object p : ((GlobalPartitionInformation) info).getOrderedPartitions()) {
                                partitions.add((long) ((org.apache.storm.kafka.Partition) p).partition);
                            }
                        }
                    }
                    TransactionAttempt attempt = new TransactionAttempt(txid, 0);
                    txids.add(txid);
                    seen.txid = txid;
                    Map<String, List<Long>> batch = new TreeMap<>(OldTridentRunner::byNumber);
                    TridentCollector collector = new TridentCollector() {
                        @Override
                        public void emit(List<Object> values) {
                            // StringMessageAndMetadataScheme: (str, partition, offset)
                            String p = String.valueOf(values.get(1));
                            batch.computeIfAbsent(p, k -> new ArrayList<>()).add((Long) values.get(2));
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
                release(emitter, coordinator, coordinatorState, seen);
                currentLog = null;
            }
            Map<String, Map<String, Stat>> after = stats(zk, userPath);
            result.put("nodes_after", nodes(zk, userPath, after));
            Map<String, Object> written = new TreeMap<>();
            for (Map.Entry<String, Map<String, Stat>> folder : after.entrySet()) {
                Map<String, Stat> was = before.getOrDefault(folder.getKey(), Collections.emptyMap());
                Map<String, Object> changed = new TreeMap<>(OldTridentRunner::byNumber);
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

        Map<String, Object> first = new TreeMap<>(OldTridentRunner::byNumber);
        Map<String, Object> startedAt = new TreeMap<>(OldTridentRunner::byNumber);
        for (long p : partitions) {
            String key = String.valueOf(p);
            List<Long> got = offsets.get(key);
            first.put(key, got == null ? null : got.get(0));
            List<Object> metas = seen.returned.get(key);
            Object meta = metas == null || metas.isEmpty() ? null : metas.get(0);
            Long replay = seen.firstReplay.get(key);
            if (replay != null && (!seen.firstNew.containsKey(key) || replay < seen.firstNew.get(key))) {
                meta = seen.replayed.get(key).get(0);  // the replayed batch starts at its offset
            }
            startedAt.put(key, meta instanceof Map ? ((Map<?, ?>) meta).get("offset") : null);
        }
        Map<String, Object> errors = new TreeMap<>(OldTridentRunner::byNumber);
        errors.putAll(seen.errors);
        if (!batchErrors.isEmpty()) {
            errors.put("batch", batchErrors);
        }
        Map<String, Object> handed = new TreeMap<>(OldTridentRunner::byNumber);
        for (Map.Entry<String, Object> e : seen.handed.entrySet()) {
            handed.put(e.getKey(), e.getValue() == null ? null : JSONValue.toJSONString(e.getValue()));
        }
        Map<String, Object> returned = new TreeMap<>(OldTridentRunner::byNumber);
        for (Map.Entry<String, List<Object>> e : seen.returned.entrySet()) {
            List<Object> texts = new ArrayList<>();
            for (Object meta : e.getValue()) {
                texts.add(meta == null ? null : JSONValue.toJSONString(meta));
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
        Map<String, Object> replayed = new TreeMap<>(OldTridentRunner::byNumber);
        for (Map.Entry<String, List<Object>> e : seen.replayed.entrySet()) {
            List<Object> texts = new ArrayList<>();
            for (Object meta : e.getValue()) {
                texts.add(meta == null ? null : JSONValue.toJSONString(meta));
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

    /** The spout, its coordinator passed through, its emitter behind a Proxy that notes each new batch of a
     *  partition (IOpaquePartitionedTridentSpout.Emitter.emitPartitionBatch(tx, collector, partition, lastMeta), or
     *  IPartitionedTridentSpout.Emitter.emitPartitionBatchNew, v1.2.4) and, for the transactional spout, each replay
     *  (IPartitionedTridentSpout.Emitter.emitPartitionBatch(tx, collector, partition, meta)). */
    static Object observed(Object spout, Seen seen, boolean transactional) {
        ClassLoader loader = OldTridentRunner.class.getClassLoader();
        Class<?> spoutType = transactional ? IPartitionedTridentSpout.class : IOpaquePartitionedTridentSpout.class;
        Class<?> emitterType = transactional ? IPartitionedTridentSpout.Emitter.class
                                             : IOpaquePartitionedTridentSpout.Emitter.class;
        String fresh = transactional ? "emitPartitionBatchNew" : "emitPartitionBatch";
        return Proxy.newProxyInstance(loader, new Class<?>[] {spoutType},
            (proxy, method, args) -> {
                Object answer = invoke(spout, method, args);
                if (!method.getName().equals("getEmitter")) {
                    return answer;
                }
                Object emitter = answer;
                seen.emitter = emitter;
                return Proxy.newProxyInstance(loader, new Class<?>[] {emitterType},
                    (p, m, a) -> {
                        boolean replay = transactional && m.getName().equals("emitPartitionBatch");
                        if (!m.getName().equals(fresh) && !replay) {
                            return invoke(emitter, m, a);
                        }
                        String partition = partitionKey(((ISpoutPartition) a[2]).getId());
                        if (replay) {
                            seen.replayed.computeIfAbsent(partition, k -> new ArrayList<>()).add(a[3]);
                            seen.firstReplay.putIfAbsent(partition, seen.txid);
                        } else {
                            if (!seen.handed.containsKey(partition)) {
                                seen.handed.put(partition, a[3]);
                            }
                            seen.firstNew.putIfAbsent(partition, seen.txid);
                        }
                        try {
                            Object meta = invoke(emitter, m, a);
                            if (!replay) {
                                seen.returned.computeIfAbsent(partition, k -> new ArrayList<>()).add(meta);
                            }
                            return meta;
                        } catch (Throwable t) {
                            seen.errors.computeIfAbsent(partition, k -> new ArrayList<>())
                                .add(m.getName() + " txid " + seen.txid + ": " + t);
                            throw t;
                        }
                    });
            });
    }

    static String partitionKey(String id) {
        Matcher m = PARTITION_ID.matcher(id);
        return m.matches() ? m.group(1) : id;
    }

    /** A TopologyContext as a worker's for task 1, index 0 of one task of component "spout". registerMetric answers
     *  as TopologyContext.registerMetric (v1.2.4, TopologyContext.java:317-394) does, without its registry. */
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
        return call("old-trident", errors, what, step);
    }

    /** Closes what close() leaves open: the executor Emitter's TransactionalState (_state), the coordinator
     *  state read here, and the ZkBrokerReaders (each a DynamicBrokersReader's Curator client) of the storm-kafka
     *  Coordinator and of the TridentKafkaEmitter's DynamicPartitionConnections: Coordinator.close and the emitter's
     *  close (clear()) leave them open (v1.2.4). After the run only (closeLater): nothing here is what the spout
     *  does. */
    static void release(Object emitter, Object coordinator, TransactionalState coordinatorState, Seen seen) {
        closeLater("closing the coordinator state", coordinatorState::close);
        closeLater("closing the emitter's state", () -> ((TransactionalState) field(emitter, "_state")).close());
        closeLater("closing the coordinator's broker reader", () -> {
            Object reader = field(field(coordinator, "_coordinator"), "reader");
            reader.getClass().getMethod("close").invoke(reader);
        });
        if (seen.emitter != null) {
            closeLater("closing the emitter's broker reader", () -> {
                Object connections = field(field(seen.emitter, "this$0"), "_connections");  // TridentKafkaEmitter
                Object reader = field(connections, "_reader");
                reader.getClass().getMethod("close").invoke(reader);
            });
        }
    }

    // --- ZooKeeper, read as it is -------------------------------------------------------------------------------

    /** folder under user/ -> txid child -> Stat; wildcard folders "<topic>/partition_N" by their relative path. */
    static Map<String, Map<String, Stat>> stats(CuratorFramework zk, String userPath) throws Exception {
        Map<String, Map<String, Stat>> found = new TreeMap<>();
        if (zk.checkExists().forPath(userPath) == null) {
            return found;
        }
        List<String> folders = new ArrayList<>();
        for (String child : zk.getChildren().forPath(userPath)) {
            if (child.startsWith("partition_")) {
                folders.add(child);
            } else {
                for (String below : zk.getChildren().forPath(userPath + "/" + child)) {
                    folders.add(child + "/" + below);
                }
            }
        }
        for (String folder : folders) {
            Map<String, Stat> txids = new TreeMap<>(OldTridentRunner::byNumber);
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
            Map<String, Object> txids = new TreeMap<>(OldTridentRunner::byNumber);
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
    static final java.util.concurrent.ExecutorService CLOSER = closer("old-trident-closer");

    static void closeLater(String what, Step step) {
        CLOSER.submit(() -> call(new ArrayList<>(), what, step));
    }

    // --- helpers ------------------------------------------------------------------------------------------------

    /** storm-kafka's and Trident's WARN and ERROR lines into the current scenario's log (and on stderr). */
    static void captureLogs() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration configuration = context.getConfiguration();
        AbstractAppender appender = new AbstractAppender("old-trident-capture", null, null) {
            @Override
            public void append(LogEvent event) {
                Set<String> log = currentLog;
                String logger = event.getLoggerName();
                String message = event.getMessage() == null ? "" : event.getMessage().getFormattedMessage();
                Throwable thrown = event.getThrown();
                String line = event.getLevel() + " " + logger.substring(logger.lastIndexOf('.') + 1) + ": " + message
                        + (thrown == null ? "" : ": " + thrown);
                if (log != null && log.size() < LOG_LINES) {
                    log.add(line);
                }
                System.err.println("old-trident: " + line);
            }
        };
        appender.start();
        configuration.addAppender(appender);
        for (String name : CAPTURED) {
            LoggerConfig logger = new LoggerConfig(name, Level.WARN, false);
            logger.addAppender(appender, Level.WARN, null);
            configuration.addLogger(name, logger);
        }
        context.updateLoggers();
    }
}
