/*
 * What Storm UI shows for one Kafka spout, given what storm-kafka-monitor wrote on stdout and its exit code.
 *
 *   java -cp /usr/share/java/json-simple.jar:CLASSES StormUiLag RELEASE UI_DEFAULT_CHARSET EXIT_CODE STDOUT_FILE
 *
 * It does, in order, what these do (apache/storm at the tag; TSL = storm-core/src/jvm/org/apache/storm/utils/
 * TopologySpoutLag.java):
 *  1. ShellUtils reads the script's stdout: ShellCommandExecutor.parseExecResult appends char[512] reads of a
 *     BufferedReader over new InputStreamReader(process.getInputStream()) until EOF. No line splitting, nothing
 *     dropped or added: a trailing newline stays. The charset is the UI JVM's default (file.encoding) through v2.5.0
 *     (storm-core/.../ShellUtils.java@v1.2.4:183-185, storm-client/.../ShellUtils.java@v2.5.0) and UTF-8 from v2.6.0
 *     (ShellUtils.java@v2.8.8:221-224, STORM-3762). A non-zero exit throws ExitCodeException(exitCode, <stderr>)
 *     (@v1.2.4:222-223, @v2.8.8:263-264); stderr is not modelled here, so the message is "".
 *  2. TSL.getLagResultForKafka (@v1.2.4:207-239, @v2.8.8:171-203): (Map) JSONValue.parseWithException(output);
 *     ParseException -> errorInfo = the whole output; a null result keeps the default message. v2.8.8 adds
 *     `parsed instanceof Map` (else errorInfo = output); before it a non-Map value is a ClassCastException. Any
 *     exception leaves getLagResultForKafka, TSL.lag (@v1.2.4:60-72) logs it and the spout is left out.
 *  3. The page (storm-core/src/ui/public/topology.html@v1.2.4:412-441, storm-webapp/src/main/java/org/apache/storm/
 *     daemon/ui/WEB-INF/topology.html@v2.8.8:450-479): if spoutLagResult !== undefined, for (topicName in result)
 *     for (partitionId in result[topicName]) read .logHeadOffset, .consumerCommittedOffset, .lag; else errorInfo.
 *     JavaScript's rules are applied to the Java values: for-in gives an object's array-index keys ascending, then
 *     its other keys in order (here: the parsed HashMap's order), a string's and an array's indices, nothing for
 *     a number, boolean or null; a missing property is undefined; a property of null is a TypeError, which stops
 *     the callback before anything is rendered.
 *
 * RELEASE: v1.2.4 (json-simple, default charset, no guard), v2.5.0 (same, 2.x default message) or v2.8.8 (UTF-8,
 * the instanceof-Map guard). All three parse with json-simple: v2.6.0+ really parse with json-smart (permissive
 * mode, TSL@v2.8.8:33), which is NOT modelled, so v2.8.8 here is "v2.8.8's TSL over json-simple's parse".
 *
 * Output, one line per outcome (fields escaped to printable ASCII: any other char, tab included, and backslash
 * and quote as backslash-u and 4 hex digits, as in a JSON string):
 *   ROW <tab> topic <tab> partition <tab> (type <tab> value) x3 for logHeadOffset, consumerCommittedOffset, lag
 *       type is the Java class's simple name (Long, Double, String, ...), "null", or "undefined" (value empty);
 *       value is String.valueOf(the value)
 *   ERRORINFO <tab> errorInfo
 *   OMITTED <tab> <exception class>: <message>   (Throwable.toString())
 *   PAGEERROR <tab> the JavaScript TypeError
 * No line at all: the spout is shown with neither rows nor an error (the page renders nothing for it).
 *
 * json-simple 1.1 (Storm's, root pom.xml json-simple.version @v1.1.0-v2.5.0) vs Debian's cliftonlabs 2.3.0 (this
 * jar), compared with comments and whitespace stripped: fangyidong/json-simple src/org/json/simple/... at
 * tag_release_1_1 (parser identical at tag_release_1_1_1), cliftonlabs/json-simple src/main/java/org/json/simple/...
 * at json-simple-2.3.0:
 *  - parser/JSONParser.java, parser/Yytoken.java: identical code.
 *  - parser/Yylex.java: identical scanner tables and actions, except that the opening quote resets the string
 *    buffer with `sb = new StringBuffer()` instead of `sb.delete(0, sb.length())`, and an unused zzEOFDone field
 *    (JFlex 1.4.3 vs 1.4.2). No input is scanned differently.
 *  - parser/ParseException.java: 1.1 overrides toString() (getMessage() is null); 2.3.0 overrides getMessage()
 *    (toString() is "org.json.simple.parser.ParseException: " + it). TSL never shows either: it uses the output.
 *  - JSONValue/JSONObject/JSONArray: writing only (2.3.0 writes any Collection and primitive arrays, through a
 *    Writer); JSONObject is a HashMap and JSONArray an ArrayList in both. parseWithException is the same.
 * So on every input here the two give the same map, the same ParseException/no ParseException and the same
 * NumberFormatException (Long.valueOf of an integer beyond a long, which is not a ParseException: the spout is
 * left out). Shared quirks of both: a scalar or array at the top level is parsed, leading zeros ("01") are
 * Longs, raw control characters inside strings are accepted, "\x" is kept as backslash + x, only space, tab, CR
 * and LF count as whitespace (a BOM or NBSP is a ParseException), and duplicate keys keep the last value.
 */

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.json.simple.JSONValue;
import org.json.simple.parser.ParseException;

public final class StormUiLag {

    // TSL@v1.2.4:181 and TSL@v2.8.8:138-145 (the message when the monitor's result is null)
    static final String DEFAULT_1X = "Offset lags for kafka not supported for older versions. "
        + "Please update kafka spout to latest version.";
    static final String DEFAULT_2X = "Make sure Kafka spout version is latest and config.topics, config.groupid "
        + "& config.bootstrap.servers are not null for newer versions of Kafka spout.";

    /** ShellUtils.ExitCodeException (ShellUtils.java@v1.2.4:294-305), under its own name for the report. */
    static final class ExitCodeException extends IOException {
        ExitCodeException(int exitCode, String message) {
            super(message);
        }

        @Override
        public String toString() {
            return "org.apache.storm.utils.ShellUtils$ExitCodeException: " + getMessage();
        }
    }

    /** The page's TypeError (reading a property of null). */
    static final class TypeError extends RuntimeException {
        TypeError(String message) {
            super(message);
        }
    }

    static final Object UNDEFINED = new Object();

    public static void main(String[] args) throws IOException {
        String release = args[0];
        if (!List.of("v1.2.4", "v2.5.0", "v2.8.8").contains(release)) {
            throw new IllegalArgumentException("release must be v1.2.4, v2.5.0 or v2.8.8: " + release);
        }
        boolean since260 = release.equals("v2.8.8");
        Charset charset = since260 ? StandardCharsets.UTF_8 : Charset.forName(args[1]);
        int exitCode = Integer.parseInt(args[2]);
        byte[] stdout = Files.readAllBytes(Paths.get(args[3]));

        Map<String, Object> spout;
        try {
            String output = execCommandOutput(stdout, charset, exitCode);
            spout = getLagResultForKafka(output, release.equals("v1.2.4") ? DEFAULT_1X : DEFAULT_2X, since260);
        } catch (Exception e) { // TSL.lag: logged, the spout is not in the response
            System.out.println("OMITTED\t" + escape(e.toString()));
            return;
        }
        page(spout);
    }

    /** ShellCommandExecutor.parseExecResult and runCommand's exit check (see 1. above). */
    static String execCommandOutput(byte[] stdout, Charset charset, int exitCode) throws IOException {
        BufferedReader lines = new BufferedReader(new InputStreamReader(new ByteArrayInputStream(stdout), charset));
        StringBuffer output = new StringBuffer();
        char[] buf = new char[512];
        int read;
        while ((read = lines.read(buf, 0, buf.length)) > 0) {
            output.append(buf, 0, read);
        }
        if (exitCode != 0) {
            throw new ExitCodeException(exitCode, "");
        }
        return output.toString();
    }

    /** TSL.getLagResultForKafka from the monitor's output on (see 2. above). */
    @SuppressWarnings("unchecked")
    static Map<String, Object> getLagResultForKafka(String resultFromMonitor, String errorMsg, boolean instanceofGuard) {
        Map<String, Object> result = null;
        try {
            if (instanceofGuard) { // TSL@v2.8.8:174-182
                Object parsed = JSONValue.parseWithException(resultFromMonitor);
                if (parsed instanceof Map) {
                    result = (Map<String, Object>) parsed;
                } else {
                    errorMsg = resultFromMonitor;
                }
            } else { // TSL@v1.2.4:210; a non-Map throws ClassCastException here
                result = (Map<String, Object>) JSONValue.parseWithException(resultFromMonitor);
            }
        } catch (ParseException e) {
            errorMsg = resultFromMonitor;
        }
        Map<String, Object> kafkaSpoutLagInfo = new HashMap<>();
        kafkaSpoutLagInfo.put("spoutType", "KAFKA");
        if (result != null) {
            kafkaSpoutLagInfo.put("spoutLagResult", result);
        } else {
            kafkaSpoutLagInfo.put("errorInfo", errorMsg);
        }
        return kafkaSpoutLagInfo;
    }

    /** topology.html's loop over one spout (see 3. above); rows are rendered only if the loop completes. */
    static void page(Map<String, Object> spout) {
        List<String> lines = new ArrayList<>();
        try {
            if (spout.containsKey("spoutLagResult")) {
                Object spoutLagResult = spout.get("spoutLagResult");
                for (String topicName : forIn(spoutLagResult)) {
                    Object topicLagResult = get(spoutLagResult, topicName);
                    for (String partitionId : forIn(topicLagResult)) {
                        Object partitionLagResult = get(topicLagResult, partitionId);
                        lines.add("ROW\t" + escape(topicName) + "\t" + escape(partitionId)
                            + cell(get(partitionLagResult, "logHeadOffset"))
                            + cell(get(partitionLagResult, "consumerCommittedOffset"))
                            + cell(get(partitionLagResult, "lag")));
                    }
                }
            } else if (spout.containsKey("errorInfo")) {
                lines.add("ERRORINFO\t" + escape(String.valueOf(spout.get("errorInfo"))));
            }
        } catch (TypeError e) {
            lines = List.of("PAGEERROR\t" + escape(e.getMessage()));
        }
        lines.forEach(System.out::println);
    }

    /** for (k in value): array-index keys ascending, then the other keys in the map's order. */
    static List<String> forIn(Object value) {
        List<String> keys = new ArrayList<>();
        if (value instanceof Map) {
            List<String> others = new ArrayList<>();
            for (Object k : ((Map<?, ?>) value).keySet()) {
                (isArrayIndex(String.valueOf(k)) ? keys : others).add(String.valueOf(k));
            }
            keys.sort((a, b) -> Long.compare(Long.parseLong(a), Long.parseLong(b)));
            keys.addAll(others);
        } else if (value instanceof List || value instanceof String) {
            int n = value instanceof List ? ((List<?>) value).size() : ((String) value).length();
            for (int i = 0; i < n; i++) {
                keys.add(String.valueOf(i));
            }
        }
        return keys;
    }

    /** A canonical uint32 below 2^32 - 1 (ECMA-262 array index): "0", "7", not "07" or "-1". */
    static boolean isArrayIndex(String key) {
        if (!key.matches("0|[1-9][0-9]{0,9}")) {
            return false;
        }
        return Long.parseLong(key) < 4294967295L;
    }

    /** value[key] in JavaScript. */
    static Object get(Object value, String key) {
        if (value == null) {
            throw new TypeError("TypeError: Cannot read properties of null (reading '" + key + "')");
        }
        if (value instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) value;
            return map.containsKey(key) ? map.get(key) : UNDEFINED;
        }
        if (isArrayIndex(key) && value instanceof List && Long.parseLong(key) < ((List<?>) value).size()) {
            return ((List<?>) value).get(Integer.parseInt(key));
        }
        if (isArrayIndex(key) && value instanceof String && Long.parseLong(key) < ((String) value).length()) {
            return String.valueOf(((String) value).charAt(Integer.parseInt(key)));
        }
        return UNDEFINED;
    }

    static String cell(Object value) {
        if (value == UNDEFINED) {
            return "\tundefined\t";
        }
        if (value == null) {
            return "\tnull\t";
        }
        return "\t" + value.getClass().getSimpleName() + "\t" + escape(String.valueOf(value));
    }

    /** Printable ASCII as is, except backslash and quote; everything else as backslash-u and four hex digits. */
    static String escape(String s) {
        StringBuilder sb = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
                sb.append(c);
            } else {
                sb.append(String.format("\\u%04x", (int) c));
            }
        }
        return sb.toString();
    }
}
