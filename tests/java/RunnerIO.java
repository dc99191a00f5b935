/*
 * What the suite's small Java programs (tests/java/ConsumerView.java, the runners under tests/storm_runner) share:
 * stdout kept for one JSON line, the {"scenarios": [...]} document read and answered, and small helpers. Plain Java,
 * no library: tests/oracle/javarun.py's compile_java compiles it beside each program, against any of their classpaths.
 * The runners extend it (its static members are theirs); the JSON parser and writer stay each program's own.
 */

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

class RunnerIO {

    static final Pattern STORM_ID_TAIL = Pattern.compile("^(.*)-\\d+-\\d+$");

    RunnerIO() {
    }

    interface Step {
        void run() throws Exception;
    }

    interface Parser {
        Object parse(String document) throws Exception;
    }

    interface Writer {
        String write(Object value) throws Exception;
    }

    interface Scenario {
        Map<String, Object> run(Map<String, Object> scenario) throws Exception;
    }

    // --- stdout: one JSON line ----------------------------------------------------------------------------------

    /** The real stdout, System.out pointed at stderr from now on: only the program's JSON line goes to stdout. */
    static PrintStream keepStdout() {
        PrintStream out = System.out;
        System.setOut(System.err);
        return out;
    }

    /** `line` on `out`; IllegalStateException if it could not be written. */
    static void printLine(PrintStream out, String line) {
        out.println(line);
        out.flush();
        if (out.checkError()) {
            throw new IllegalStateException("could not write to stdout");
        }
    }

    /** The program's own failure: its stack trace on stderr, exit status 1. */
    static void fail(String program, Throwable t) {
        System.err.print(program + " failed: ");
        t.printStackTrace(System.err);
        System.exit(1);
    }

    /** A scenario runner's main: the document {"scenarios": [{...}, ...]} from the argument, or stdin (argument "-"
     *  or none), read with `parser` (bad input: a message on stderr, exit status 2); `setup`; each scenario `run` in
     *  order; {"scenarios": [report, ...]} written with `writer` as one line on stdout (a failure: exit status 1).
     *  Exits 0 then: the libraries' threads would keep the JVM up. */
    static void runScenarios(String program, String[] args, Parser parser, Step setup, Scenario run, Writer writer) {
        PrintStream out = keepStdout();
        List<Map<String, Object>> scenarios = new ArrayList<>();
        try {
            String document = args.length == 0 || args[0].equals("-") ? readAll(System.in) : args[0];
            Object parsed = parser.parse(document);
            Object list = parsed instanceof Map ? ((Map<?, ?>) parsed).get("scenarios") : null;
            if (!(list instanceof List) || ((List<?>) list).isEmpty()) {
                throw new IllegalArgumentException("want {\"scenarios\": [ {...}, ... ]}");
            }
            for (Object s : (List<?>) list) {
                if (!(s instanceof Map)) {
                    throw new IllegalArgumentException("a scenario is not an object: " + s);
                }
                @SuppressWarnings("unchecked") Map<String, Object> scenario = (Map<String, Object>) s;
                scenarios.add(scenario);
            }
        } catch (Exception e) {
            System.err.println(program + ": bad input: " + e);
            System.exit(2);
            return;
        }
        try {
            setup.run();
            List<Object> results = new ArrayList<>();
            for (Map<String, Object> scenario : scenarios) {
                results.add(run.run(scenario));
            }
            Map<String, Object> document = new LinkedHashMap<>();
            document.put("scenarios", results);
            printLine(out, writer.write(document));
        } catch (Throwable t) {
            fail(program, t);
        }
        System.exit(0);
    }

    static String readAll(InputStream in) throws Exception {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        byte[] chunk = new byte[8192];
        for (int n; (n = in.read(chunk)) > 0; ) {
            buffer.write(chunk, 0, n);
        }
        return new String(buffer.toByteArray(), StandardCharsets.UTF_8);
    }

    // --- a scenario's keys --------------------------------------------------------------------------------------

    static String text(Map<String, Object> s, String key) {
        Object v = s.get(key);
        if (!(v instanceof String)) {
            throw new IllegalArgumentException("scenario " + s.get("name") + ": " + key + " must be a string: " + v);
        }
        return (String) v;
    }

    static long number(Map<String, Object> s, String key, long otherwise) {
        Object v = s.get(key);
        return v instanceof Number ? ((Number) v).longValue() : otherwise;
    }

    /** "h1:2181,h2:2181" as Storm's conf holds it (storm.zookeeper.servers and .port): the hosts, one port for all. */
    static final class ZooKeeperServers {
        final List<String> hosts = new ArrayList<>();
        Integer port;
    }

    static ZooKeeperServers zooKeeperServers(String scenario, String servers) {
        ZooKeeperServers found = new ZooKeeperServers();
        for (String server : servers.split(",")) {
            int colon = server.lastIndexOf(':');
            int p = Integer.parseInt(server.substring(colon + 1).trim());
            if (found.port != null && found.port != p) {
                throw new IllegalArgumentException(scenario + ": Storm's conf has one ZooKeeper port for all servers");
            }
            found.port = p;
            found.hosts.add(server.substring(0, colon).trim());
        }
        return found;
    }

    static List<String> hostPorts(List<String> servers, int port) {
        List<String> out = new ArrayList<>();
        for (String server : servers) {
            out.add(server + ":" + port);
        }
        return out;
    }

    /** The topology's name in a storm id: the id less its "-<counter>-<timestamp>" tail, as Nimbus makes ids. */
    static String topologyOf(String stormId) {
        Matcher tail = STORM_ID_TAIL.matcher(stormId);
        return tail.matches() ? tail.group(1) : stormId;
    }

    // --- helpers ------------------------------------------------------------------------------------------------

    /** Runs one call; false, with what it threw (describe) added to `errors` and its stack trace on stderr under
     *  `prefix`, if it threw. */
    static boolean call(String prefix, List<String> errors, String what, Step step) {
        try {
            step.run();
            return true;
        } catch (Throwable t) {
            errors.add(what + ": " + describe(t));
            System.err.print(prefix + ": " + what + " threw: ");
            t.printStackTrace(System.err);
            return false;
        }
    }

    /** "<exception class>: <message> (caused by <class>: <message>)...". */
    static String describe(Throwable t) {
        StringBuilder text = new StringBuilder(t.getClass().getName() + ": " + t.getMessage());
        for (Throwable cause = t.getCause(); cause != null && cause != cause.getCause(); cause = cause.getCause()) {
            text.append(" (caused by ").append(cause.getClass().getName()).append(": ").append(cause.getMessage())
                .append(')');
        }
        return text.toString();
    }

    /** A pool of daemon threads named `name`, for what a scenario leaves open to close off the main thread. */
    static ExecutorService closer(String name) {
        return Executors.newFixedThreadPool(4, r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
    }

    /** Sets public field `fieldName` of `config` (a spout's config: SpoutConfig, TridentKafkaConfig) from a JSON value:
     *  an int, long or double (or its box) from a number; a boolean, String or List as it is. */
    static void setField(Object config, String fieldName, Object value) throws Exception {
        Field f = config.getClass().getField(fieldName);
        Class<?> type = f.getType();
        Object v;
        if (value == null) {
            v = null;
        } else if (type == int.class || type == Integer.class) {
            v = ((Number) value).intValue();
        } else if (type == long.class || type == Long.class) {
            v = ((Number) value).longValue();
        } else if (type == double.class || type == Double.class) {
            v = ((Number) value).doubleValue();
        } else if (type == boolean.class || type == Boolean.class || type == String.class || type == List.class) {
            v = value;
        } else {
            throw new IllegalArgumentException("spout_config." + fieldName + ": a " + type.getName()
                    + " is not set here");
        }
        f.set(config, v);
    }

    /** A field of `on` or of a superclass, read by reflection. */
    static Object field(Object on, String name) {
        for (Class<?> c = on.getClass(); c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f.get(on);
            } catch (NoSuchFieldException e) {
                // look in the superclass
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException(on.getClass().getName() + " has no field " + name);
    }

    /** method.invoke, throwing what the method threw. */
    static Object invoke(Object on, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(on, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** Numbers in numeric order first, then other keys by name. */
    static int byNumber(String a, String b) {
        boolean na = a.matches("\\d+"), nb = b.matches("\\d+");
        if (na && nb) {
            return Long.compare(Long.parseLong(a), Long.parseLong(b));
        }
        return na != nb ? (na ? -1 : 1) : a.compareTo(b);
    }
}
