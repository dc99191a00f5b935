/*
 * What storm-kafka-client's own CommitMetadataManager makes of commit metadata (issue 44): the differential oracle
 * offctl's model of it (offctl/core/storm.py, bind_commit_metadata) is held to on generated input.
 *
 * stdin: one input per line, "<storm id> <metadata>", each base64 of its UTF-8 bytes: the storm id the spout's
 * TopologyContext reports, and the metadata's bytes as the broker holds them. The metadata is decoded as kafka-clients decodes a commit's metadata string (UTF-8, a malformed
 * sequence replaced: new String(bytes, UTF_8)), made an OffsetAndMetadata, and asked of the real
 * CommitMetadataManager.isOffsetCommittedByThisTopology(tp, committed, no offset managers), the call
 * KafkaSpout.doSeek makes at start (v1.2.4 and v2.8.8 KafkaSpout.java; CommitMetadataManager.java is the same file at
 * v1.0.6 to v2.8.8): its ObjectMapper is Storm's (new ObjectMapper(), no feature changed), with the Jackson of the
 * line's jars. A TopologyContext is mocked as ClientSpoutRunner mocks it.
 *
 * stdout: one line per input, written as soon as it is read (a test keeps one JVM and asks one input at a time,
 * or sends a batch), in order: "own" (the call answered true), "other" (false: Jackson could not bind it,
 * CommitMetadataManager caught the IOException, or another topology's id), or "throws <exception class>" (the call
 * threw: the spout's start-up fails with it).
 */

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Collections;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.storm.kafka.spout.KafkaSpoutConfig.ProcessingGuarantee;
import org.apache.storm.kafka.spout.internal.CommitMetadataManager;
import org.apache.storm.task.TopologyContext;
import org.mockito.Mockito;

public class MetadataOracle {

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                                          false, "UTF-8");
        System.setOut(System.err);  // Storm's and Jackson's logging never reach the answers
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        String[] stormId = new String[1];
        TopologyContext context = Mockito.mock(TopologyContext.class);
        Mockito.when(context.getStormId()).thenAnswer(call -> stormId[0]);
        Mockito.when(context.getThisTaskId()).thenReturn(1);
        CommitMetadataManager manager = new CommitMetadataManager(context, ProcessingGuarantee.AT_LEAST_ONCE);
        TopicPartition tp = new TopicPartition("t", 0);
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] fields = line.split(" ", -1);
            stormId[0] = new String(Base64.getDecoder().decode(fields[0]), StandardCharsets.UTF_8);
            String metadata = new String(Base64.getDecoder().decode(fields[1]), StandardCharsets.UTF_8);
            String verdict;
            try {
                verdict = manager.isOffsetCommittedByThisTopology(tp, new OffsetAndMetadata(0, metadata),
                                                                   Collections.emptyMap()) ? "own" : "other";
            } catch (Throwable t) {
                verdict = "throws " + t.getClass().getName();
            }
            out.print(verdict + "\n");
            if (!in.ready()) {
                out.flush();  // the inputs sent so far are answered; a batch is written in one go
            }
            if (out.checkError()) {
                System.exit(2);
            }
        }
        out.flush();
    }
}
