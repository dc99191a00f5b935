/*
 * The real old storm-kafka spout (org.apache.storm.kafka.KafkaSpout of storm-kafka 1.2.4, 1.1.3 or 1.0.6;
 * storm.kafka.KafkaSpout of 0.10.2, 0.9.7 or 0.9.2-incubating; from the lib/ that tests/storm_runner/kafka/pom.xml
 * fills for each) run against a real ZooKeeper and broker, outside a worker: where it starts reading each partition,
 * what it emits, what goes wrong, and the offset nodes it writes back (<zkRoot>/<id>/partition_<N>).
 * tests/oracle/storm_kafka_spout.py compiles and runs it, against one release's jars per compilation.
 *
 *   java -cp CLASSES:LIB/'*' OldSpoutRunner '{"scenarios": [...]}'    (or the document on stdin: argument "-" or none)
 *
 * One JSON document, many scenarios, one JVM. A scenario:
 *
 *   {"name": "a",                                     any text, echoed back
 *    "zookeeper": "127.0.0.1:2181",                   the topology conf's storm.zookeeper.servers and .port
 *                                                     ("h1:2181,h2:2181": one port for all, as Storm's conf has)
 *    "zk_root": "/kafka-spout", "spout_id": "orders", SpoutConfig.zkRoot and .id
 *    "topic": "orders",
 *    "hosts": {"zk": "127.0.0.1:2181/kafka39", "path": "/brokers"}     ZkHosts(brokerZkStr, brokerZkPath)
 *          or {"static": {"0": "127.0.0.1:9092", "1": ...}},          StaticHosts of a GlobalPartitionInformation
 *    "storm_id": "orders-topology-1-1700000000",      what context.getStormId() answers (the topology instance id)
 *    "topology_name": "orders-topology",              the conf's topology.name; by default the storm id less its
 *                                                     "-<counter>-<timestamp>" tail, as Nimbus makes ids
 *    "spout_config": {"startOffsetTime": -2, ...},    public fields of SpoutConfig/KafkaConfig by their Java names
 *                                                     (startOffsetTime, ignoreZkOffsets, maxOffsetBehind,
 *                                                     useStartOffsetTimeIfOffsetOutOfRange, stateUpdateIntervalMs,
 *                                                     zkServers, zkPort, fetchSizeBytes, ...); the rest keep
 *                                                     storm-kafka's defaults
 *    "conf": {...},                                   more topology conf entries, over Storm's defaults.yaml
 *    "deadline_ms": 20000, "idle_ms": 500,            nextTuple() runs until nothing was emitted for idle_ms
 *                                                     (counted from the end of the first call), or until
 *                                                     deadline_ms after the scenario began ("timed_out": true)
 *    "ack": true}                                     ack every emitted message id afterwards (false: ack none)
 *
 * What a scenario does, as a worker would (KafkaSpout.java at v1.2.4): new KafkaSpout(spoutConfig); open(conf,
 * context, collector), with the conf = Storm's defaults.yaml + storm.zookeeper.servers/port + topology.name +
 * "conf"; the context a Mockito mock (getStormId, task index 0 of one task, getThisComponentId "spout",
 * registerMetric answering null, which KafkaSpout ignores); the collector a SpoutOutputCollector over a recorder of
 * emits. activate(); nextTuple() as said, sleeping 1 ms after a call that emitted nothing (Storm's default spout
 * wait strategy); then, unless a spout method threw (a worker would have died: nothing more is called), ack() of
 * every emitted id, deactivate() (which commits: KafkaSpout.java:196-198) and close() (which only closes the
 * spout's ZkState: KafkaSpout.java:129-131). The ZooKeeper clients and broker connections the spout leaves open
 * after close() (its two DynamicBrokersReaders, its SimpleConsumers) are closed afterwards, by reflection.
 *
 * Output, one JSON line on stdout: {"scenarios": [{...}, ...]}, in input order, each:
 *
 *   "name":          as given
 *   "started_at":    {"0": 4, ...}: the offset each PartitionManager set out from, as its constructor logs it
 *                    ("Starting Kafka <host> Partition{..., partition=N} from offset M", PartitionManager.java:156
 *                    at v1.0.6 to v1.2.4; "Starting Kafka <host>:N from offset M" at v0.9.2-incubating to v0.10.2,
 *                    PartitionManager.java:102 at v0.9.2-incubating, :103 at v0.9.7, :110 at v0.10.2)
 *   "first_emitted": {"0": 4, "1": null, ...}: per partition the spout managed, the first offset emitted (a
 *                    KafkaMessageId's), or null
 *   "visit_order":   [0, 2, 1]: the partitions in the order nextTuple() visits their PartitionManagers (a HashMap's
 *                    order: KafkaSpout.java:135-152 stays on one that fails to fetch, so those after it starve)
 *   "emitted":       {"0": [4, 5, ...], ...}: every offset emitted, in order
 *   "errors":        {"0": [...], "spout": [...]}: per partition, the distinct WARN and ERROR lines storm-kafka logged
 *                    about it ("Logger: message[: ExceptionClass: its message]"; fetch failures, offsets out of
 *                    range); "spout": what a spout method threw ("nextTuple: java.lang.RuntimeException: ...") and
 *                    storm-kafka's WARN/ERROR lines that name no partition; "runner": the runner's own trouble
 *                    (its ZooKeeper client could not connect: then "written" and "nodes" are empty)
 *   "written":       {"0": "<the node's JSON text>", ...}: each node under <zkRoot>/<id> that the run created or
 *                    changed (its mzxid moved), read after close()
 *   "nodes":         {"0": "...", ...}: every node under <zkRoot>/<id> after close(), written or not
 *   "log":           the distinct lines storm-kafka logged, INFO and up, in first-seen order (at most 200)
 *   "timed_out":     true if deadline_ms passed before nextTuple() had been idle for idle_ms
 *   "seconds":       the scenario's wall time
 * Keys "0", "1", ... are partition numbers (a node not named partition_<N> keeps its name).
 *
 * stdout carries that line only: System.out is pointed at stderr first. A scenario whose spout fails still
 * reports; a malformed document: a message on stderr, exit status 2; a scenario the runner cannot set up (a missing
 * key, an unknown spout_config field) or a failure of its own: the stack trace on stderr, exit status 1.
 *
 * Java: runs on JDK 17 and 25 (the only ones here) with the ZooKeeper client each release's pom puts in lib/;
 * Storm 1.2.4's own 3.4.14 cannot connect to any server on JDK 14 and later (its pom says why), and open() then
 * throws ConnectionLossException. Nothing needs --add-opens: the reflection here is on classpath classes.
 *
 * Releases (one source for all):
 *   - 0.9.x and 0.10.x name their packages backtype.storm (storm-core) and storm.kafka (storm-kafka):
 *     tests/oracle/storm_kafka_spout.py compiles a copy of this file with "org.apache.storm.kafka" replaced by
 *     "storm.kafka" and then "org.apache.storm." by "backtype.storm." (imports, STORM_KAFKA, comments); every
 *     class and member named here exists under those names (KafkaSpout, SpoutConfig, ZkHosts, StaticHosts, Broker,
 *     GlobalPartitionInformation, PartitionManager.getPartition, Partition.partition, KafkaMessageId.partition and
 *     .offset, KafkaSpout._coordinator and ._connections, ZkCoordinator._cachedList and ._reader,
 *     StaticCoordinator._allManagers, DynamicPartitionConnections._reader and .clear, Config.TOPOLOGY_NAME,
 *     Utils.readDefaultConfig: read at v0.9.2-incubating, v0.9.7 and v0.10.2).
 *   - What differs is handled here, each where it is used: ISpoutOutputCollector.getPendingCount exists from 1.0
 *     only (so it is implemented without @Override); GlobalPartitionInformation(String topic) from 1.0, a no-argument
 *     constructor before (chosen by reflection); the "Starting Kafka" line's two forms (STARTING);
 *     CuratorFramework.blockUntilConnected(int, TimeUnit) is in Storm 1.x's Curator (2.10.0, 4.0.1), not in
 *     0.9.x/0.10.x's (2.4.0, 2.5.0): the runner's own client then polls CuratorZookeeperClient.isConnected() for
 *     up to the same 15 s; the spout_config field for another topology's offsets is forceFromStart
 *     before 0.10 and ignoreZkOffsets from 0.10 on (the caller names the release's field: an unknown one fails).
 *   - Logging: the runner captures storm-kafka's loggers through log4j2 (Storm's own binding from 0.10 on); the
 *     0.9.x poms replace storm-core's logback by log4j2's slf4j binding (their comments say why), since storm-kafka
 *     itself only calls slf4j.
 */

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
import org.apache.storm.kafka.Broker;
import org.apache.storm.kafka.BrokerHosts;
import org.apache.storm.kafka.KafkaSpout;
import org.apache.storm.kafka.PartitionManager;
import org.apache.storm.kafka.SpoutConfig;
import org.apache.storm.kafka.StaticHosts;
import org.apache.storm.kafka.ZkHosts;
import org.apache.storm.kafka.trident.GlobalPartitionInformation;
import org.apache.storm.spout.ISpoutOutputCollector;
import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.utils.Utils;
import org.apache.zookeeper.data.Stat;
import org.json.simple.JSONValue;
import org.json.simple.parser.JSONParser;
import org.mockito.Mockito;

public final class OldSpoutRunner extends RunnerIO {

    static final String STORM_KAFKA = "org.apache.storm.kafka";
    /** The line PartitionManager's constructor logs last: "Starting Kafka <host> Partition{host=..., topic=...,
     *  partition=N} from offset M" (1.x), "Starting Kafka <host>:N from offset M" (0.9.x, 0.10.x). */
    static final Pattern STARTING = Pattern.compile(
            "^Starting Kafka (?:.* partition=(\\d+)\\}|\\S*:(\\d+)) from offset (-?\\d+)$");
    static final Pattern NAMES_PARTITION = Pattern.compile("partition=(\\d+)\\}|/partition_(\\d+)\\b");
    static final int LOG_LINES = 200;

    /** What storm-kafka logs while a scenario runs (any thread), kept for that scenario's report. */
    static final class Capture {
        final Map<String, Long> startedAt = new TreeMap<>(OldSpoutRunner::byNumber);
        final Map<String, Set<String>> errors = new TreeMap<>(OldSpoutRunner::byNumber);
        final Set<String> log = new LinkedHashSet<>();

        synchronized void take(LogEvent event) {
            String logger = event.getLoggerName();
            String message = event.getMessage() == null ? "" : event.getMessage().getFormattedMessage();
            Throwable thrown = event.getThrown();
            String line = logger.substring(logger.lastIndexOf('.') + 1) + ": " + message
                    + (thrown == null ? "" : ": " + thrown);
            if (log.size() < LOG_LINES) {
                log.add(event.getLevel() + " " + line);
            }
            Matcher starting = STARTING.matcher(message);
            if (starting.matches()) {
                String partition = starting.group(1) != null ? starting.group(1) : starting.group(2);
                startedAt.put(partition, Long.parseLong(starting.group(3)));
            }
            if (event.getLevel().isMoreSpecificThan(Level.WARN)) {
                String where = partitionNamed(message + (thrown == null ? "" : " " + thrown));
                errors.computeIfAbsent(where == null ? "spout" : where, k -> new LinkedHashSet<>()).add(line);
                System.err.println("old-spout: " + event.getLevel() + " " + line);
            }
        }

        synchronized void spoutError(String what) {
            errors.computeIfAbsent("spout", k -> new LinkedHashSet<>()).add(what);
        }

        synchronized void runnerError(String what) {
            errors.computeIfAbsent("runner", k -> new LinkedHashSet<>()).add(what);
            System.err.println("old-spout: " + what);
        }
    }

    static volatile Capture current;

    public static void main(String[] args) {
        // Curator's and ZooKeeper's threads would keep the JVM up: runScenarios exits
        runScenarios("OldSpoutRunner", args, document -> new JSONParser().parse(document),
                     OldSpoutRunner::captureStormKafkaLogs, OldSpoutRunner::run, JSONValue::toJSONString);
    }

    // --- one scenario ------------------------------------------------------------------------------------------

    static Map<String, Object> run(Map<String, Object> s) throws Exception {
        long t0 = System.nanoTime();
        String name = text(s, "name");
        String topic = text(s, "topic");
        String zkRoot = text(s, "zk_root");
        String spoutId = text(s, "spout_id");
        String stormId = text(s, "storm_id");
        long deadlineMs = number(s, "deadline_ms", 20_000L);
        long idleMs = number(s, "idle_ms", 500L);
        boolean ack = !Boolean.FALSE.equals(s.get("ack"));

        // The topology conf a worker hands open(): Storm's defaults, its ZooKeeper, the topology's name.
        Map<String, Object> conf = new HashMap<>(Utils.readDefaultConfig());
        ZooKeeperServers zookeeper = zooKeeperServers(name, text(s, "zookeeper"));
        List<String> servers = zookeeper.hosts;
        Integer port = zookeeper.port;
        conf.put(Config.STORM_ZOOKEEPER_SERVERS, servers);
        conf.put(Config.STORM_ZOOKEEPER_PORT, port);
        String topologyName = (String) s.get("topology_name");
        conf.put(Config.TOPOLOGY_NAME, topologyName != null ? topologyName : topologyOf(stormId));
        if (s.get("conf") instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) s.get("conf")).entrySet()) {
                conf.put((String) e.getKey(), e.getValue());
            }
        }

        SpoutConfig spoutConfig = new SpoutConfig(hosts(s, topic), topic, zkRoot, spoutId);
        if (s.get("spout_config") instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) s.get("spout_config")).entrySet()) {
                setField(spoutConfig, (String) e.getKey(), e.getValue());
            }
        }

        // Where ZkState will keep the offsets: KafkaSpout.open, KafkaSpout.java:69-80 at v1.2.4.
        List<String> stateServers = spoutConfig.zkServers != null ? spoutConfig.zkServers : servers;
        int statePort = spoutConfig.zkPort != null ? spoutConfig.zkPort : port;
        StringBuilder stateConnect = new StringBuilder();
        for (String server : stateServers) {
            stateConnect.append(stateConnect.length() == 0 ? "" : ",").append(server).append(':').append(statePort);
        }
        String spoutPath = zkRoot + "/" + spoutId;

        Capture capture = new Capture();
        TopologyContext context = Mockito.mock(TopologyContext.class);
        Mockito.when(context.getStormId()).thenReturn(stormId);
        Mockito.when(context.getThisTaskIndex()).thenReturn(0);
        Mockito.when(context.getThisTaskId()).thenReturn(1);
        Mockito.when(context.getThisComponentId()).thenReturn("spout");
        Mockito.when(context.getComponentTasks(Mockito.anyString())).thenReturn(Collections.singletonList(1));

        List<Object> ids = new ArrayList<>();
        Map<String, List<Long>> emitted = new TreeMap<>(OldSpoutRunner::byNumber);
        ISpoutOutputCollector recorder = new ISpoutOutputCollector() {
            @Override
            public List<Integer> emit(String streamId, List<Object> tuple, Object messageId) {
                record(messageId);
                return Collections.singletonList(2);
            }

            @Override
            public void emitDirect(int taskId, String streamId, List<Object> tuple, Object messageId) {
                record(messageId);
            }

            // no @Override: ISpoutOutputCollector has it from 1.0 on (0.9.x, 0.10.x: emit, emitDirect, reportError)
            public long getPendingCount() {
                return ids.size();
            }

            @Override
            public void reportError(Throwable error) {
                capture.spoutError("reportError: " + error);
            }

            private void record(Object messageId) {
                ids.add(messageId);
                Object partition = field(messageId, "partition");
                String p = String.valueOf(field(partition, "partition"));
                emitted.computeIfAbsent(p, k -> new ArrayList<>()).add((Long) field(messageId, "offset"));
            }
        };

        boolean timedOut = false;
        Map<String, Object> result = new LinkedHashMap<>();
        try (CuratorFramework zk = CuratorFrameworkFactory.newClient(stateConnect.toString(),
                new RetryNTimes(3, 500))) {
            zk.start();
            boolean reading = blockUntilConnected(zk);
            if (!reading) {  // the spout is run all the same: what it does then is the report
                capture.runnerError("could not connect to ZooKeeper at " + stateConnect + " within 15 s: "
                        + "no nodes read before or after");
            }
            Map<String, Stat> before = reading ? stats(zk, spoutPath) : new TreeMap<>();

            current = capture;
            KafkaSpout spout = new KafkaSpout(spoutConfig);
            boolean alive = call(capture, "open", () -> spout.open(conf, context, new SpoutOutputCollector(recorder)));
            long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(deadlineMs);
            if (alive) {
                alive = call(capture, "activate", spout::activate);
                long lastEmit = 0;  // idle time counts from the end of the first call (which builds the managers)
                for (boolean first = true; alive; first = false) {
                    if (System.nanoTime() > deadline) {
                        timedOut = true;
                        break;
                    }
                    int count = ids.size();
                    alive = call(capture, "nextTuple", spout::nextTuple);
                    if (first || ids.size() > count) {
                        lastEmit = System.nanoTime();
                    } else if (System.nanoTime() - lastEmit > TimeUnit.MILLISECONDS.toNanos(idleMs)) {
                        break;
                    } else {
                        Thread.sleep(1);
                    }
                }
            }
            List<Object> order = visitOrder(spout);
            if (alive && ack) {
                for (Object id : ids) {
                    if (!(alive = call(capture, "ack", () -> spout.ack(id)))) {
                        break;
                    }
                }
            }
            if (alive) {
                alive = call(capture, "deactivate", spout::deactivate);
            }
            if (alive) {
                call(capture, "close", spout::close);
            }
            release(spout);
            current = null;

            Map<String, Stat> after = reading ? stats(zk, spoutPath) : new TreeMap<>();
            Map<String, Object> written = new TreeMap<>(OldSpoutRunner::byNumber);
            Map<String, Object> nodes = new TreeMap<>(OldSpoutRunner::byNumber);
            for (Map.Entry<String, Stat> e : after.entrySet()) {
                String child = e.getKey();
                String key = child.matches("partition_\\d+") ? child.substring("partition_".length()) : child;
                String data = new String(zk.getData().forPath(spoutPath + "/" + child), StandardCharsets.UTF_8);
                nodes.put(key, data);
                Stat was = before.get(child);
                if (was == null || was.getMzxid() != e.getValue().getMzxid()) {
                    written.put(key, data);
                }
            }

            Map<String, Object> first = new TreeMap<>(OldSpoutRunner::byNumber);
            synchronized (capture) {
                for (String p : capture.startedAt.keySet()) {
                    first.put(p, null);
                }
            }
            for (Map.Entry<String, List<Long>> e : emitted.entrySet()) {
                first.put(e.getKey(), e.getValue().get(0));
            }
            Map<String, Object> errors = new TreeMap<>(OldSpoutRunner::byNumber);
            synchronized (capture) {
                for (Map.Entry<String, Set<String>> e : capture.errors.entrySet()) {
                    errors.put(e.getKey(), new ArrayList<>(e.getValue()));
                }
                result.put("name", name);
                result.put("started_at", new TreeMap<>(capture.startedAt));
                result.put("first_emitted", first);
                result.put("visit_order", order);
                result.put("emitted", emitted);
                result.put("errors", errors);
                result.put("written", written);
                result.put("nodes", nodes);
                result.put("log", new ArrayList<>(capture.log));
            }
        } finally {
            current = null;
        }
        result.put("timed_out", timedOut);
        result.put("seconds", Math.round((System.nanoTime() - t0) / 1e6) / 1e3);
        return result;
    }

    /** Calls a spout method; false, with what it threw, if it threw (a worker would die there). */
    static boolean call(Capture capture, String what, Step step) {
        try {
            step.run();
            return true;
        } catch (Throwable t) {
            capture.spoutError(what + ": " + t);
            System.err.print("old-spout: " + what + " threw: ");
            t.printStackTrace(System.err);
            return false;
        }
    }

    static BrokerHosts hosts(Map<String, Object> s, String topic) {
        Object h = s.get("hosts");
        if (!(h instanceof Map)) {
            throw new IllegalArgumentException("hosts: want {\"zk\": ..., \"path\": ...} or {\"static\": {...}}");
        }
        Map<?, ?> hosts = (Map<?, ?>) h;
        if (hosts.get("static") instanceof Map) {
            GlobalPartitionInformation info = partitionInformation(topic);
            for (Map.Entry<?, ?> e : ((Map<?, ?>) hosts.get("static")).entrySet()) {
                info.addPartition(Integer.parseInt((String) e.getKey()), Broker.fromString((String) e.getValue()));
            }
            return new StaticHosts(info);
        }
        String zk = (String) hosts.get("zk");
        if (zk == null) {
            throw new IllegalArgumentException("hosts: want {\"zk\": ..., \"path\": ...} or {\"static\": {...}}");
        }
        ZkHosts zkHosts = hosts.get("path") == null ? new ZkHosts(zk) : new ZkHosts(zk, (String) hosts.get("path"));
        if (hosts.get("refresh_secs") != null) {
            zkHosts.refreshFreqSecs = ((Number) hosts.get("refresh_secs")).intValue();
        }
        return zkHosts;
    }

    /** The children of path with their Stat; empty if path is absent. */
    static Map<String, Stat> stats(CuratorFramework zk, String path) throws Exception {
        Map<String, Stat> found = new TreeMap<>();
        if (zk.checkExists().forPath(path) == null) {
            return found;
        }
        for (String child : zk.getChildren().forPath(path)) {
            Stat stat = zk.checkExists().forPath(path + "/" + child);
            if (stat != null) {
                found.put(child, stat);
            }
        }
        return found;
    }

    /** The partitions of the spout's PartitionManagers in the order nextTuple() visits them (KafkaSpout.java:135-152):
     *  ZkCoordinator's _cachedList, StaticCoordinator's _allManagers, read without calling anything (a call to
     *  getMyManagedPartitions() may refresh). Empty if open() failed. */
    static List<Object> visitOrder(KafkaSpout spout) {
        List<Object> order = new ArrayList<>();
        Object coordinator = field(spout, "_coordinator");
        if (coordinator != null) {
            boolean zk = coordinator.getClass().getSimpleName().equals("ZkCoordinator");
            List<?> managers = (List<?>) field(coordinator, zk ? "_cachedList" : "_allManagers");
            for (Object manager : managers == null ? Collections.emptyList() : managers) {  // 0.9.2: null until
                                                                                             // the first refresh
                order.add((long) ((PartitionManager) manager).getPartition().partition);
            }
        }
        return order;
    }

    /** Closes what KafkaSpout.close() leaves open: the DynamicBrokersReaders of its broker reader and ZkCoordinator
     *  (each a Curator client) and its SimpleConsumers. After the run: nothing here is what the spout does. */
    static void release(KafkaSpout spout) {
        try {
            Object connections = field(spout, "_connections");
            if (connections != null) {
                Object reader = field(connections, "_reader");
                if (reader != null) {
                    reader.getClass().getMethod("close").invoke(reader);
                }
                connections.getClass().getMethod("clear").invoke(connections);
            }
            Object coordinator = field(spout, "_coordinator");
            if (coordinator != null && coordinator.getClass().getSimpleName().equals("ZkCoordinator")) {
                Object reader = field(coordinator, "_reader");
                if (reader != null) {
                    reader.getClass().getMethod("close").invoke(reader);
                }
            }
        } catch (Throwable t) {
            System.err.println("old-spout: could not release the spout's clients: " + t);
        }
    }

    // --- what differs between releases ---------------------------------------------------------------------------

    /** GlobalPartitionInformation(String topic) from 1.0 on; a no-argument constructor in 0.9.x and 0.10.x. */
    static GlobalPartitionInformation partitionInformation(String topic) {
        try {
            try {
                return GlobalPartitionInformation.class.getConstructor(String.class).newInstance(topic);
            } catch (NoSuchMethodException before10) {
                return GlobalPartitionInformation.class.getConstructor().newInstance();
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("GlobalPartitionInformation: " + e, e);
        }
    }

    /** The runner's own ZooKeeper client connected within 15 s: CuratorFramework.blockUntilConnected where Curator
     *  has it (2.10.0 and 4.0.1 of Storm 1.x); else (Curator 2.4.0 and 2.5.0 of Storm 0.9.x and 0.10.x) its
     *  CuratorZookeeperClient.isConnected() polled every 5 ms (that client's blockUntilConnectedOrTimedOut waits on
     *  a watcher added after it found no connection, in steps of 1 s: up to a second lost when the connection
     *  comes in between). */
    static boolean blockUntilConnected(CuratorFramework zk) throws Exception {
        try {
            return (Boolean) zk.getClass().getMethod("blockUntilConnected", int.class, TimeUnit.class)
                    .invoke(zk, 15, TimeUnit.SECONDS);
        } catch (NoSuchMethodException olderCurator) {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
            while (!zk.getZookeeperClient().isConnected()) {
                if (System.nanoTime() > until) {
                    return false;
                }
                Thread.sleep(5);
            }
            return true;
        }
    }

    // --- helpers ------------------------------------------------------------------------------------------------

    static String partitionNamed(String text) {
        Matcher m = NAMES_PARTITION.matcher(text);
        return m.find() ? (m.group(1) != null ? m.group(1) : m.group(2)) : null;
    }

    /** storm-kafka's loggers (org.apache.storm.kafka.*) at INFO, into the current scenario's Capture; its WARNs and
     *  up are also printed on stderr. Other loggers keep the configuration given (-Dlog4j2.configurationFile). */
    static void captureStormKafkaLogs() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        Configuration configuration = context.getConfiguration();
        AbstractAppender appender = new AbstractAppender("old-spout-capture", null, null) {
            @Override
            public void append(LogEvent event) {
                Capture capture = current;
                if (capture != null) {
                    capture.take(event);
                }
            }
        };
        appender.start();
        configuration.addAppender(appender);
        LoggerConfig stormKafka = new LoggerConfig(STORM_KAFKA, Level.INFO, false);
        stormKafka.addAppender(appender, Level.INFO, null);
        configuration.addLogger(STORM_KAFKA, stormKafka);
        context.updateLoggers();
    }
}
