// The floor for issue 15's read target: what the JVM's own clients take to fetch what `offctl inspect` needs,
// with no analysis. Lists the spout ids under a zkRoot and their partition nodes (async getChildren, all in
// flight), reads every node with ZooKeeper's multiRead (async multi of Op.getData, 256 per request, all in
// flight), then asks the broker for the log start and end of every partition the nodes name, once each: bare
// ListOffsets v1 requests (earliest, latest) of LIST_OFFSETS_BATCH partitions each, all pipelined on one connection, with
// nothing but the JDK. Batches, because the test broker's time grows faster than a request's size: at 100,000
// partitions one request per timestamp took it 2.35 s, requests of 1,000 partitions 1.0 s (10,000: 1.25 s;
// 500: 1.0 s).
//
// The broker side assumes a single broker leads every partition (the benchmark's set-up); a fleet would send
// one such request per leader. It prints one JSON line of timings, in seconds.
//
//   java -cp /usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/slf4j-api.jar:\
//     /usr/share/java/slf4j-nop.jar benchmarks/floor/Floor.java ZK_HOSTS ZK_ROOT BOOTSTRAP
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.ByteArrayOutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

public class Floor {
    static final int BATCH = 256;
    static final int LIST_OFFSETS_BATCH = 1000;
    static final Pattern TOPIC = Pattern.compile("\"topic\"\\s*:\\s*\"([^\"]*)\"");

    public static void main(String[] args) throws Exception {
        String hosts = args[0], root = args[1], bootstrap = args[2];
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(hosts, 30000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) up.countDown();
        });
        up.await();

        long t0 = System.nanoTime();
        List<String> spouts = zk.getChildren(root, false);
        Map<String, List<String>> listed = new ConcurrentHashMap<>();
        CountDownLatch lists = new CountDownLatch(spouts.size());
        for (String spout : spouts) {
            zk.getChildren(root + "/" + spout, false, (rc, path, ctx, children) -> {
                if (children != null) listed.put(path, children);
                lists.countDown();
            }, null);
        }
        lists.await();
        List<String> paths = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : listed.entrySet()) {
            for (String child : e.getValue()) paths.add(e.getKey() + "/" + child);
        }

        long t1 = System.nanoTime();
        int batches = (paths.size() + BATCH - 1) / BATCH;
        CountDownLatch reads = new CountDownLatch(batches);
        AtomicLong bytes = new AtomicLong();
        Map<String, byte[]> data = new ConcurrentHashMap<>();
        for (int i = 0; i < paths.size(); i += BATCH) {
            List<Op> ops = new ArrayList<>();
            List<String> batch = paths.subList(i, Math.min(i + BATCH, paths.size()));
            for (String p : batch) ops.add(Op.getData(p));
            zk.multi(ops, (rc, path, ctx, results) -> {
                if (rc == KeeperException.Code.OK.intValue()) {
                    for (int j = 0; j < results.size(); j++) {
                        if (results.get(j) instanceof OpResult.GetDataResult) {
                            byte[] d = ((OpResult.GetDataResult) results.get(j)).getData();
                            bytes.addAndGet(d == null ? 0 : d.length);
                            data.put(batch.get(j), d == null ? new byte[0] : d);
                        }
                    }
                }
                reads.countDown();
            }, null);
        }
        reads.await();

        long t2 = System.nanoTime();
        // The partitions the nodes name, each once: topic from the record, partition from the node name.
        Map<String, Collection<Integer>> partitions = new TreeMap<>();
        for (Map.Entry<String, byte[]> e : data.entrySet()) {
            Matcher m = TOPIC.matcher(new String(e.getValue(), StandardCharsets.UTF_8));
            String name = e.getKey().substring(e.getKey().lastIndexOf('/') + 1);
            if (!m.find() || !name.startsWith("partition_")) continue;
            partitions.computeIfAbsent(m.group(1), k -> new TreeSet<>())
                      .add(Integer.parseInt(name.substring("partition_".length())));
        }

        long t3 = System.nanoTime();
        String[] hp = bootstrap.split(":");
        long[] answered = new long[2];
        try (Socket s = new Socket(hp[0], Integer.parseInt(hp[1]))) {
            s.setTcpNoDelay(true);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(s.getInputStream(), 1 << 16));
            List<Map<String, Collection<Integer>>> requests = new ArrayList<>();
            Map<String, Collection<Integer>> request = new TreeMap<>();
            int size = 0;
            for (Map.Entry<String, Collection<Integer>> e : partitions.entrySet()) {
                request.put(e.getKey(), e.getValue());
                size += e.getValue().size();
                if (size >= LIST_OFFSETS_BATCH) {
                    requests.add(request);
                    request = new TreeMap<>();
                    size = 0;
                }
            }
            if (!request.isEmpty()) requests.add(request);
            int correlation = 0;
            for (Map<String, Collection<Integer>> b : requests) {
                out.write(listOffsets(++correlation, -2L, b));  // earliest
                out.write(listOffsets(++correlation, -1L, b));  // latest
            }
            out.flush();
            for (int r = 0; r < 2 * requests.size(); r++) answered[r % 2] += readListOffsets(in);
        }
        long t4 = System.nanoTime();
        zk.close();
        System.out.printf("{\"nodes\": %d, \"bytes\": %d, \"partitions_answered\": [%d, %d], \"list_s\": %.3f, "
                + "\"multiread_s\": %.3f, \"topics_s\": %.3f, \"list_offsets_s\": %.3f, \"total_s\": %.3f}%n",
                data.size(), bytes.get(), answered[0], answered[1], (t1 - t0) / 1e9, (t2 - t1) / 1e9,
                (t3 - t2) / 1e9, (t4 - t3) / 1e9, (t4 - t0) / 1e9);
    }

    static void string(DataOutputStream o, String s) throws Exception {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        o.writeShort(b.length);
        o.write(b);
    }

    // ListOffsets v1 (api key 2) with request header v1: every partition at one timestamp.
    static byte[] listOffsets(int correlation, long timestamp, Map<String, Collection<Integer>> partitions) throws Exception {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        DataOutputStream o = new DataOutputStream(body);
        o.writeShort(2);
        o.writeShort(1);
        o.writeInt(correlation);
        string(o, "floor");
        o.writeInt(-1);  // replica id: a consumer
        o.writeInt(partitions.size());
        for (Map.Entry<String, Collection<Integer>> e : partitions.entrySet()) {
            string(o, e.getKey());
            o.writeInt(e.getValue().size());
            for (int p : e.getValue()) {
                o.writeInt(p);
                o.writeLong(timestamp);
            }
        }
        ByteArrayOutputStream framed = new ByteArrayOutputStream();
        DataOutputStream f = new DataOutputStream(framed);
        f.writeInt(body.size());
        body.writeTo(f);
        return framed.toByteArray();
    }

    // Reads one ListOffsets v1 response; returns how many partitions it answered without error.
    static long readListOffsets(DataInputStream in) throws Exception {
        in.readInt();  // size
        in.readInt();  // correlation id
        long ok = 0;
        int topics = in.readInt();
        for (int t = 0; t < topics; t++) {
            in.skipNBytes(in.readShort());
            int n = in.readInt();
            for (int p = 0; p < n; p++) {
                in.readInt();  // partition
                short error = in.readShort();
                in.readLong();  // timestamp
                in.readLong();  // offset
                if (error == 0) ok++;
            }
        }
        return ok;
    }
}
