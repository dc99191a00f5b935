/*
 * What a Trident Kafka spout makes of a partition's stored state (issue 44): the differential oracle that offctl's
 * model (offctl/core/storm.py parse_trident_node, over load_json_simple) is held to on generated input.
 *
 *   java -cp CLASSES:LIB/'*' StateOracle kafka|client
 *
 * stdin: one input per line, the base64 of a state node's bytes as ZooKeeper holds them. For each:
 * 1. the real TransactionalState.getData (storm-core 1.2.4: json-simple; storm-client 2.8.3: the shaded json-smart,
 *    TransactionalState.java at v2.6.0 on), a Mockito mock that runs its real method over a Curator mock whose
 *    checkExists() finds the node and getData() hands over the input. What it returns is the state
 *    RotatingTransactionalState keeps for the txid; what it throws ends the batch (it is called from sync(), in
 *    OpaquePartitionedTridentSpoutExecutor.emitBatch).
 * 2. what the emitter does with it, as the executor hands it over (its emitPartitionBatch takes a Map: a state of
 *    another type fails the cast):
 *    kafka:  TridentKafkaEmitter.doEmitNewPartitionBatch (storm-kafka v1.2.4), its lines copied as they are:
 *              Map lastTopoMeta = (Map) lastMeta.get("topology"); lastInstanceId = (String) lastTopoMeta.get("id");
 *              offset = (Long) lastMeta.get("nextOffset");   (into a long)
 *            (without ignoreZkOffsets: the offset it fetches from).
 *    client: the real KafkaTridentSpoutBatchMetadata.fromMap of the line's jars (storm-kafka-client 1.2.4 or 2.8.3),
 *            then KafkaTridentSpoutEmitter.seek's `lastBatchMeta.getLastOffset() + 1` (v1.2.4, v2.8.8), which
 *            KafkaConsumer.seek refuses when negative ("seek offset must not be a negative number",
 *            IllegalArgumentException), and (2.x) getTopologyId().
 *
 * stdout: one line per input, in order: "none" (getData gave null: the spout starts the partition as with no state),
 * "use <offset> <base64 of the topology id's UTF-8, or - for none>", or "throws <exception class>" (the batch fails;
 * the worker ends).
 */

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import org.apache.storm.trident.topology.state.TransactionalState;
import org.mockito.Answers;
import org.mockito.ArgumentMatchers;
import org.mockito.Mockito;

public class StateOracle {

    public static void main(String[] args) throws Exception {
        boolean client = args.length > 0 && args[0].equals("client");
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                                          false, "UTF-8");
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        byte[][] stored = new byte[1][];
        TransactionalState state = Mockito.mock(TransactionalState.class,
                                                Mockito.withSettings().defaultAnswer(Mockito.CALLS_REAL_METHODS));
        Class<?> curatorClass = curatorField().getType();
        Object curator = Mockito.mock(curatorClass, Answers.RETURNS_DEEP_STUBS);
        stubCurator(curator, stored);
        Field field = curatorField();
        field.setAccessible(true);
        field.set(state, curator);
        Method fromMap = client ? Class.forName("org.apache.storm.kafka.spout.trident.KafkaTridentSpoutBatchMetadata")
                                       .getMethod("fromMap", Map.class) : null;
        Base64.Encoder b64 = Base64.getEncoder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            stored[0] = Base64.getDecoder().decode(line.trim());
            String verdict;
            try {
                Object data = state.getData("spout/user/partition_0/7");
                if (data == null) {
                    verdict = "none";
                } else {
                    Map lastMeta = (Map) data;  // the executor's emitPartitionBatch(..., Map lastPartitionMeta)
                    long offset;
                    String topologyId = null;
                    if (client) {
                        Object meta = invoke(fromMap, lastMeta);
                        offset = (Long) meta.getClass().getMethod("getLastOffset").invoke(meta) + 1;
                        if (offset < 0) {
                            throw new IllegalArgumentException("seek offset must not be a negative number");
                        }
                        try {
                            topologyId = (String) meta.getClass().getMethod("getTopologyId").invoke(meta);
                        } catch (NoSuchMethodException none) {  // 1.x keeps no topology id
                        }
                    } else {
                        Map lastTopoMeta = (Map) lastMeta.get("topology");
                        if (lastTopoMeta != null) {
                            topologyId = (String) lastTopoMeta.get("id");
                        }
                        offset = (Long) lastMeta.get("nextOffset");
                    }
                    verdict = "use " + offset + " " + (topologyId == null ? "-"
                        : b64.encodeToString(topologyId.getBytes(StandardCharsets.UTF_8)));
                }
            } catch (Throwable t) {
                verdict = "throws " + t.getClass().getName();
            }
            out.print(verdict + "\n");
            if (!in.ready()) {
                out.flush();
            }
        }
        out.flush();
    }

    static Object invoke(Method method, Object argument) throws Throwable {
        try {
            return method.invoke(null, argument);
        } catch (java.lang.reflect.InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** The Curator field: `_curator` in storm-core 1.2.4, `curator` in storm-client 2.x (TransactionalState.java). */
    static Field curatorField() throws NoSuchFieldException {
        for (String name : new String[] {"curator", "_curator"}) {
            try {
                return TransactionalState.class.getDeclaredField(name);
            } catch (NoSuchFieldException next) {
            }
        }
        throw new NoSuchFieldException("TransactionalState has no curator field");
    }

    /** checkExists().forPath(p) a Stat (the node exists); getData().forPath(p) the input. By reflection: Curator is
     *  shaded in storm-client 2.x (org.apache.storm.shade.org.apache.curator), plain in storm-core 1.2.4. */
    static void stubCurator(Object curator, byte[][] stored) throws Exception {
        Object exists = curator.getClass().getMethod("checkExists").invoke(curator);
        Method existsFor = exists.getClass().getMethod("forPath", String.class);
        Object stat = Mockito.mock(existsFor.getReturnType());
        Mockito.doReturn(stat).when(exists);
        existsFor.invoke(exists, ArgumentMatchers.anyString());
        Object getData = curator.getClass().getMethod("getData").invoke(curator);
        Method getDataFor = getData.getClass().getMethod("forPath", String.class);
        Mockito.doAnswer(call -> stored[0]).when(getData);
        getDataFor.invoke(getData, ArgumentMatchers.anyString());
    }
}
