/*
 * What JStorm's Kafka spout reads from a partition record's bytes, and the bytes it writes (issue 47): the differential
 * oracle that offctl's model of both (offctl/core/records/jstorm.py parse_jstorm_node, offctl/core/storm/jstorm.py
 * record_bytes) is held to on generated input, by tests/oracle/test_jstorm_record_differential.py.
 *
 * jstorm-kafka (alibaba/jstorm, jstorm-utility/jstorm-kafka, package com.alibaba.jstorm.kafka) was never published to
 * Maven Central, so its classes cannot be had: the lines below are copied from its source at the release tag 2.4.0 (the
 * same lines at 0.9.6.3, 2.1.0, 2.1.1 and 2.2.1), and run on the classes they call: json-simple 1.1
 * (com.googlecode.json-simple:json-simple:1.1, the module's own dependency at 2.2.1 and 2.4.0, through jstorm-client's
 * pom before) and Guava's ImmutableMap, both from the jars tests/storm_runner/kafka/pom.xml fetches for storm-kafka
 * 1.2.4 (json-simple-1.1.jar, guava-20.0.jar).
 *
 * stdin: one request per line, a read ("r " and the base64 of a record's bytes as ZooKeeper holds them) or a write
 * ("w " and a record's fields); stdout: one answer per request, in order, written as soon as it is read.
 *
 * A read: ZkState.readJSON (ZkState.java:85-94 at 2.4.0, readBytes replaced by the input) and the PartitionConsumer
 * constructor's read (PartitionConsumer.java:76-85), as they are:
 *
 *     return (Map<Object, Object>) JSONValue.parse(new String(b, "UTF-8"));  // in try { } catch (Exception e)
 *                                                                            // { throw new RuntimeException(e); }
 *     Long jsonOffset = null;
 *     try {
 *         Map<Object, Object> json = offsetState.readJSON(zkPath());
 *         if (json != null) {
 *             jsonOffset = (Long) json.get("offset");
 *         }
 *     } catch (Throwable e) { ... }
 *
 * Its answer: "use <offset>" (jsonOffset: the spout takes it, and fetches it + 1) or "none <why>" (jsonOffset stays
 * null: the spout starts the partition as without a record): "none parsed-null" where JSONValue.parse answers null (a
 * parse error, which json-simple's parse swallows, or JSON null), "none offset-null" where the object has no offset or
 * a null one, else the class of what the `catch (Throwable)` caught (and its cause's).
 *
 * A write: six fields separated by spaces: the topology name, the offset, the partition, the broker's host, its port,
 * the topic. Strings are "s" followed by the hex of their UTF-16 code units, four digits each (so that a lone surrogate
 * reaches Java as it is), or "-" for null; numbers are decimal. The map PartitionConsumer.commitState fills
 * (PartitionConsumer.java:174-179 at 2.4.0), written as ZkState.writeJSON writes it (ZkState.java:65-68):
 *
 *     Map<Object, Object> data = new HashMap<Object, Object>();
 *     data.put("topology", stormConf.get(Config.TOPOLOGY_NAME));
 *     data.put("offset", lastOffset);                                            // long
 *     data.put("partition", partition);                                          // int
 *     data.put("broker", ImmutableMap.of("host", consumer.getLeaderBroker().host(), "port",
 *                                        consumer.getLeaderBroker().port()));    // String, int
 *     data.put("topic", config.topic);
 *     writeBytes(path, JSONValue.toJSONString(data).getBytes(Charset.forName("UTF-8")));
 *
 * Its answer: the base64 of those bytes. The HashMap's order is the running JVM's (17 here; every Java from 8 on orders
 * these five keys alike, Java 7's HashMap otherwise: see docs/storm.md, "JStorm's Kafka spout").
 */

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;

import com.google.common.collect.ImmutableMap;
import org.json.simple.JSONValue;

public class JStormRecordOracle {

    /** ZkState.readJSON (alibaba/jstorm 2.4.0), with readBytes' answer given. */
    @SuppressWarnings("unchecked")
    static Map<Object, Object> readJSON(byte[] b) {
        try {
            if (b == null)
                return null;
            return (Map<Object, Object>) JSONValue.parse(new String(b, "UTF-8"));
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    static String read(byte[] stored) {
        Long jsonOffset = null;
        boolean parsed = false;
        String caught = null;
        try {  // the PartitionConsumer constructor, 2.4.0
            Map<Object, Object> json = readJSON(stored);
            if (json != null) {
                parsed = true;
                jsonOffset = (Long) json.get("offset");
            }
        } catch (Throwable e) {
            caught = e.getClass().getName();
            if (e.getCause() != null) {
                caught += " " + e.getCause().getClass().getName();
            }
        }
        if (jsonOffset != null) {
            return "use " + jsonOffset;
        }
        return "none " + (caught != null ? caught : parsed ? "offset-null" : "parsed-null");
    }

    static String text(String field) {
        if (field.equals("-")) {
            return null;
        }
        String hex = field.substring(1);
        char[] units = new char[hex.length() / 4];
        for (int i = 0; i < units.length; i++) {
            units[i] = (char) Integer.parseInt(hex.substring(4 * i, 4 * i + 4), 16);
        }
        return new String(units);
    }

    static byte[] write(String line) {
        String[] f = line.split(" ", -1);
        Map<Object, Object> data = new HashMap<Object, Object>();  // PartitionConsumer.commitState, 2.4.0
        data.put("topology", text(f[0]));
        data.put("offset", Long.parseLong(f[1]));
        data.put("partition", Integer.parseInt(f[2]));
        data.put("broker", ImmutableMap.of("host", text(f[3]), "port", Integer.parseInt(f[4])));
        data.put("topic", text(f[5]));
        return JSONValue.toJSONString(data).getBytes(Charset.forName("UTF-8"));  // ZkState.writeJSON
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                                          false, "UTF-8");
        System.setOut(System.err);  // nothing but the answers on stdout
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        Base64.Encoder b64 = Base64.getEncoder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String answer = line.startsWith("w ")
                ? b64.encodeToString(write(line.substring(2)))
                : read(Base64.getDecoder().decode(line.substring(2)));
            out.print(answer + "\n");
            if (!in.ready()) {
                out.flush();
            }
        }
        out.flush();
    }
}
