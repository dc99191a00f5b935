/*
 * What storm-kafka's spout makes of a partition record's bytes (issue 44): the differential oracle that offctl's model
 * of the read (offctl/core/storm.py parse_zk_node, over offctl/core/jsonsimple.py) is held to on generated input.
 *
 * stdin: one input per line, the base64 of a record's bytes as ZooKeeper holds them.
 * For each, the real ZkState.readJSON (storm-kafka 1.2.4's class, json-simple 1.1 from its lib/) reads the bytes:
 * `(Map<Object, Object>) JSONValue.parseWithException(new String(b, "UTF-8"))`. ZkState is a Mockito mock that calls
 * its real methods, with readBytes stubbed to hand over the input (readJSON's own code runs; no ZooKeeper is asked).
 * Then the two casts of PartitionManager's constructor (PartitionManager.java at v1.2.4; the same lines at v0.9.6,
 * v0.10.2, v1.0.6, v1.1.3 read in the source), inside its `try { ... } catch (Throwable e)`, copied here as they are:
 *
 *     jsonTopologyId = (String) ((Map<Object, Object>) json.get("topology")).get("id");
 *     jsonOffset = (Long) json.get("offset");
 *
 * and its test `if (jsonTopologyId == null || jsonOffset == null)`: the spout then starts the partition as if it had
 * no record (`current`, its startOffsetTime).
 *
 * stdout: one line per input, in order, written as soon as it is read: "use <offset> <base64 of the topology id's
 * UTF-8>" (the spout takes the record: the offset and topology id it compares and resumes from) or "none <what made
 * it so>" (an exception class caught by the `catch (Throwable)`, or "null" where a field is missing or JSON null).
 * Whether the offset is then used (`<= 0`, maxOffsetBehind, ignoreZkOffsets) is decided later in the constructor from
 * these two values, as offctl's behaviour module decides it from the same two.
 */

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

import org.apache.storm.kafka.ZkState;
import org.mockito.ArgumentMatchers;
import org.mockito.Mockito;

public class RecordOracle {

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                                          false, "UTF-8");
        System.setOut(System.err);  // logging never reaches the answers
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        byte[][] stored = new byte[1][];
        ZkState state = Mockito.mock(ZkState.class, Mockito.withSettings().defaultAnswer(Mockito.CALLS_REAL_METHODS));
        Mockito.doAnswer(call -> stored[0]).when(state).readBytes(ArgumentMatchers.anyString());
        Base64.Encoder b64 = Base64.getEncoder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            stored[0] = Base64.getDecoder().decode(line.trim());
            String jsonTopologyId = null;
            Long jsonOffset = null;
            String caught = null;
            try {  // PartitionManager's constructor, v1.2.4
                Map<Object, Object> json = state.readJSON("/zkRoot/spout/partition_0");
                if (json != null) {
                    jsonTopologyId = (String) ((Map<Object, Object>) json.get("topology")).get("id");
                    jsonOffset = (Long) json.get("offset");
                }
            } catch (Throwable e) {
                caught = e.getClass().getName();
                if (e.getCause() != null) {
                    caught += " " + e.getCause().getClass().getName();
                }
            }
            String verdict;
            if (jsonTopologyId == null || jsonOffset == null) {
                verdict = "none " + (caught != null ? caught : "null");
            } else {
                verdict = "use " + jsonOffset + " " + b64.encodeToString(jsonTopologyId.getBytes(StandardCharsets.UTF_8));
            }
            out.print(verdict + "\n");
            if (!in.ready()) {
                out.flush();
            }
        }
        out.flush();
    }
}
