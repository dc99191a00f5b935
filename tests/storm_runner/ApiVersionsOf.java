import java.lang.reflect.Method;

/**
 * The request versions the kafka-clients jar on the class path can send, on one line of JSON: {"Fetch": [oldest,
 * newest], ...} by Kafka's API name (ApiKeys.name). Read by reflection, so one class runs on every release from
 * 0.9.0.1 on: ApiKeys.oldestVersion()/latestVersion(false) where the jar has them (0.11 on; latestVersion(false)
 * leaves out the versions a 4.x client does not enable), else ProtoUtils.latestVersion(id) and the first version
 * Protocol.REQUESTS defines (0.9.0.1 to 0.10.1.0, whose clients send the newest alone). Run by
 * tests/oracle/test_broker_support_e2e.py against offctl.core.storm.kafka_clients.CLIENTS.
 */
public class ApiVersionsOf {
    public static void main(String[] args) throws Exception {
        Class<?> keys = Class.forName("org.apache.kafka.common.protocol.ApiKeys");
        StringBuilder out = new StringBuilder("{");
        for (Object key : keys.getEnumConstants()) {
            int id = ((Number) keys.getField("id").get(key)).intValue();
            String name = (String) keys.getField("name").get(key);
            int[] span = span(keys, key, id);
            if (out.length() > 1) out.append(',');
            out.append('"').append(name).append("\":[").append(span[0]).append(',').append(span[1]).append(']');
        }
        System.out.println(out.append('}'));
    }

    private static int[] span(Class<?> keys, Object key, int id) throws Exception {
        Method oldest = method(keys, "oldestVersion");
        if (oldest != null) {
            Method stable = method(keys, "latestVersion", boolean.class);
            Object newest = stable != null ? stable.invoke(key, false) : keys.getMethod("latestVersion").invoke(key);
            return new int[] {((Number) oldest.invoke(key)).intValue(), ((Number) newest).intValue()};
        }
        Class<?> protoUtils = Class.forName("org.apache.kafka.common.protocol.ProtoUtils");
        int newest = ((Number) protoUtils.getMethod("latestVersion", int.class).invoke(null, id)).intValue();
        Object[][] requests = (Object[][]) Class.forName("org.apache.kafka.common.protocol.Protocol")
            .getField("REQUESTS").get(null);
        int first = 0;
        while (first < requests[id].length && requests[id][first] == null) first++;
        return new int[] {first, newest};
    }

    private static Method method(Class<?> c, String name, Class<?>... types) {
        try {
            return c.getMethod(name, types);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }
}
