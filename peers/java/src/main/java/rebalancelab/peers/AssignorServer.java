/*
 * Any JVM assignor class as a strategy of rebalance-lab (`--plugin NAME=java:CLASS`): a long-lived
 * program speaking the lab's process-plugin protocol (docs/plugins.md).  It reads one request per
 * line on standard input, {"problem": DOCUMENT, "judged_on": ..., "time_limit": ...}, builds the
 * assignor's input from the document the way Kafka's client or group coordinator builds it, calls
 * the assignor, and writes one answer per line on standard output:
 * {"assignment": ..., "status": "heuristic", "info": {"assign_seconds": ..., "input_seconds": ...}},
 * the assignment in the shape of docs/formats.md, timed inside the JVM (assign_seconds: the
 * assignor's own calls; input_seconds: building their input).  An assignor that throws is an
 * answer {"error": "..."}; the program goes on with the next request.
 *
 * The class may implement Kafka's client ConsumerPartitionAssignor, the group coordinator's
 * ConsumerGroupPartitionAssignor (KIP-848), the share-group ShareGroupPartitionAssignor (KIP-932),
 * the streams-group TaskAssignor (KIP-1071) or Kafka Streams' TaskAssignor (KIP-924); the first of
 * those it implements, in that order of specificity (share, streams group, consumer group, client,
 * Kafka Streams), decides how its input is built.  The interfaces are looked up by name, so that the
 * program runs on any Kafka 4.x release on the classpath (the user's classpath comes first).
 *
 * Usage: AssignorServer CLASS.  The describe request ({"describe": true}, the first line the lab
 * sends) is answered with the class's simple name, what judges it ("judged_on": sticky and rack-aware for a
 * consumer-group assignor, share, streams-sticky), its "interface" and the "kafka_version" on the
 * classpath; or, for a class that is missing, cannot be created or implements none of the
 * interfaces, with {"error": one line saying so}, as is every request after it.
 */
package rebalancelab.peers;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignor;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class AssignorServer {
    private AssignorServer() {
    }

    /** The interfaces, most specific first: the name the lab knows each by, and the Java interfaces. */
    static final String[][] INTERFACES = {
        {"share", "org.apache.kafka.coordinator.group.api.assignor.ShareGroupPartitionAssignor"},
        {"streams-group", "org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor",
            "org.apache.kafka.coordinator.group.streams.assignor.TaskAssignor"},
        {"consumer-group", "org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor",
            "org.apache.kafka.coordinator.group.api.assignor.PartitionAssignor"},
        {"client", "org.apache.kafka.clients.consumer.ConsumerPartitionAssignor"},
        {"kafka-streams", "org.apache.kafka.streams.processor.assignment.TaskAssignor"},
    };

    /** A bad class: the one-line message and exit status 2. */
    static final class Refused extends Exception {
        Refused(String message) {
            super(message);
        }
    }

    /** The kind of assignor (a first column of INTERFACES) {@code type} is. */
    static String kind(Class<?> type) {
        for (String[] row : INTERFACES) {
            for (int i = 1; i < row.length; i++) {
                try {
                    if (Class.forName(row[i], false, type.getClassLoader()).isAssignableFrom(type))
                        return row[0];
                } catch (ClassNotFoundException | LinkageError e) {
                    // not in this release
                }
            }
        }
        return null;
    }

    static Class<?> load(String name) throws Refused {
        Class<?> type;
        try {
            type = Class.forName(name);
        } catch (ClassNotFoundException e) {
            throw new Refused("class " + name + " is not on the classpath");
        } catch (LinkageError e) {
            throw new Refused("class " + name + " cannot be loaded: " + e);
        }
        if (kind(type) == null) {
            throw new Refused("class " + name + " implements none of Kafka's assignor interfaces "
                + "(ConsumerPartitionAssignor, ConsumerGroupPartitionAssignor, ShareGroupPartitionAssignor, "
                + "the streams-group TaskAssignor, Kafka Streams' TaskAssignor)");
        }
        try {
            type.getConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            throw new Refused("class " + name + " has no public constructor without arguments that works: " + e);
        }
        return type;
    }

    /** The Kafka release on the classpath (AppInfoParser.getVersion), "unknown" if there is none. */
    static String kafkaVersion() {
        for (String name : new String[] {"org.apache.kafka.common.utils.internals.AppInfoParser",
            "org.apache.kafka.common.utils.AppInfoParser"}) {
            try {
                return String.valueOf(Class.forName(name).getMethod("getVersion").invoke(null));
            } catch (ReflectiveOperationException | LinkageError e) {
                // the other name
            }
        }
        return "unknown";
    }

    /** A consumer-group answer: each member's partitions by topic, members and topics as they come. */
    static final class Answer {
        final Map<String, Map<String, List<Integer>>> byMember = new LinkedHashMap<>();
        int rounds = 1;
        long assignNanos;
        long inputNanos;

        Answer(String[] members) {
            for (String member : members)
                byMember.put(member, new LinkedHashMap<>());
        }

        void add(String member, String topic, int partition) {
            byMember.computeIfAbsent(member, k -> new LinkedHashMap<>())
                .computeIfAbsent(topic, k -> new ArrayList<>()).add(partition);
        }

        /** {"assignment": {member: {topic: [partitions ascending]}}, ...}: topics in the document's order. */
        void write(JsonGenerator out, GroupDocument doc) throws IOException {
            out.writeStartObject();
            out.writeFieldName("assignment");
            out.writeStartObject();
            for (Map.Entry<String, Map<String, List<Integer>>> member : byMember.entrySet()) {
                out.writeFieldName(member.getKey());
                out.writeStartObject();
                List<String> topics = new ArrayList<>(member.getValue().keySet());
                topics.sort((a, b) -> Integer.compare(doc.topicIndex.getOrDefault(a, Integer.MAX_VALUE),
                    doc.topicIndex.getOrDefault(b, Integer.MAX_VALUE)));
                for (String topic : topics) {
                    List<Integer> partitions = member.getValue().get(topic);
                    Collections.sort(partitions);
                    out.writeFieldName(topic);
                    out.writeStartArray();
                    for (int p : partitions)
                        out.writeNumber(p);
                    out.writeEndArray();
                }
                out.writeEndObject();
            }
            out.writeEndObject();
            writeTail(out, assignNanos, inputNanos, rounds);
        }
    }

    /** The fields after the assignment: status and info (times inside the JVM); closes the object. */
    static void writeTail(JsonGenerator out, long assignNanos, long inputNanos, int rounds) throws IOException {
        out.writeStringField("status", "heuristic");
        out.writeFieldName("info");
        out.writeStartObject();
        out.writeNumberField("assign_seconds", assignNanos / 1e9);
        out.writeNumberField("input_seconds", inputNanos / 1e9);
        if (rounds != 1)
            out.writeNumberField("rounds", rounds);
        out.writeEndObject();
        out.writeEndObject();
    }

    /** The answer to one request, written to {@code out}. */
    static void answer(String kind, Class<?> type, JsonNode problem, JsonGenerator out) throws Exception {
        boolean streams = "streams-group".equals(problem.path("kind").asText());
        if (streams != kind.equals("streams-group") && streams != kind.equals("kafka-streams")) {
            throw new IllegalArgumentException("a " + kind + " assignor cannot answer a "
                + (streams ? "streams-group" : "consumer-group") + " document");
        }
        switch (kind) {
            case "client": {
                GroupDocument doc = new GroupDocument(problem);
                ClientAssignorRun.run(type.getName(), doc).write(out, doc);
                return;
            }
            case "consumer-group":
            case "share": {
                GroupDocument doc = new GroupDocument(problem);
                PartitionAssignor assignor = (PartitionAssignor) type.getConstructor().newInstance();
                ServerAssignorRun.run(assignor, doc, kind.equals("share")).write(out, doc);
                return;
            }
            case "streams-group":
                StreamsAssignorRun.group(type, problem, out);
                return;
            default:
                StreamsAssignorRun.kafkaStreams(type, problem, out);
        }
    }

    /** What the assignor of {@code kind} is judged on (the lab's objectives). */
    static String[] judgedOn(String kind) {
        switch (kind) {
            case "share":
                return new String[] {"share"};
            case "streams-group":
            case "kafka-streams":
                return new String[] {"streams-sticky"};
            default:
                return new String[] {"sticky", "rack-aware"};
        }
    }

    /** The answer to the describe request: what judges the class, its interface and Kafka's release. */
    static void describe(JsonGenerator out, String name, Class<?> type, Refused refused) throws IOException {
        out.writeStartObject();
        if (refused != null) {
            out.writeStringField("error", refused.getMessage());
        } else {
            String kind = kind(type);
            out.writeStringField("name", type.getSimpleName());
            out.writeArrayFieldStart("judged_on");
            for (String judged : judgedOn(kind))
                out.writeString(judged);
            out.writeEndArray();
            out.writeStringField("class", name);
            out.writeStringField("interface", kind);
            out.writeStringField("kafka_version", kafkaVersion());
        }
        out.writeEndObject();
    }

    public static void main(String[] args) throws IOException {
        // What the assignor prints goes to standard error: standard output carries the answers only.
        OutputStream answers = new FileOutputStream(FileDescriptor.out);
        System.setOut(new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8));
        if (args.length != 1) {
            System.err.println("usage: AssignorServer CLASS");
            System.exit(2);
        }
        String name = args[0];
        Class<?> type = null;
        Refused refused = null;
        try {
            type = load(name);
        } catch (Refused e) {
            refused = e;
        }
        JsonFactory factory = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxStringLength(Integer.MAX_VALUE).build())
            .build();
        ObjectMapper mapper = new ObjectMapper(factory);
        String kind = type == null ? null : kind(type);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
        ByteArrayOutputStream buffer = new ByteArrayOutputStream(1 << 12);
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isBlank())
                continue;
            buffer.reset();
            try (JsonGenerator one = factory.createGenerator(buffer, JsonEncoding.UTF8)) {
                JsonNode request = mapper.readTree(line);
                if (request.path("describe").asBoolean(false)) {
                    describe(one, name, type, refused);
                } else if (refused != null) {
                    throw refused;
                } else {
                    JsonNode problem = request.path("problem");
                    if (!problem.isObject())
                        throw new IllegalArgumentException("the request has no problem object");
                    answer(kind, type, problem, one);
                }
            } catch (Throwable e) { // the assignor failed on this input: an answer that says so
                buffer.reset();
                try (JsonGenerator one = factory.createGenerator(buffer, JsonEncoding.UTF8)) {
                    one.writeStartObject();
                    String message = e instanceof Refused ? e.getMessage() : e.getClass().getSimpleName() + ": " + e.getMessage();
                    one.writeStringField("error", message);
                    one.writeEndObject();
                }
            }
            buffer.write('\n');
            try {
                buffer.writeTo(answers);
                answers.flush();
            } catch (IOException e) { // the lab closed its end: nobody is listening any more
                return;
            }
        }
    }
}
