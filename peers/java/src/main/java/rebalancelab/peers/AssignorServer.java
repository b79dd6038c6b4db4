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
 * Kafka Streams), decides how its input is built (a Kafka Streams TaskAssignor's: StreamsClientRun).  The interfaces are looked up by name, so that the
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
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignor;

import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
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
        /** Each partition's member position (-1: none), when the run made it directly, else null. */
        int[] owner;
        long inputNanos;

        Answer(String[] members) {
            for (String member : members)
                byMember.put(member, new LinkedHashMap<>());
        }

        void add(String member, String topic, int partition) {
            byMember.computeIfAbsent(member, k -> new LinkedHashMap<>())
                .computeIfAbsent(topic, k -> new ArrayList<>()).add(partition);
        }

        /**
         * The answer object: {"owner": [...]} (each partition's member position, -1 for none, in the
         * document's order: what the lab's evaluator reads, the shortest to write and to read) when
         * {@code owners} and the assignor gave each partition of the document to one of its members at
         * most; else {"assignment": {member: {topic: [partitions ascending]}}}, topics in the document's
         * order, which shows whatever else it did (a partition twice, an unknown member or topic).
         */
        void write(JsonGenerator out, GroupDocument doc, boolean owners) throws IOException {
            int[] owner = !owners ? null : this.owner != null ? this.owner : ownerArray(doc);
            out.writeStartObject();
            if (owner != null) {
                out.writeFieldName("owner");
                out.writeArray(owner, 0, owner.length);
            } else {
                writeAssignment(out, doc);
            }
            writeTail(out, assignNanos, inputNanos, rounds);
        }

        private int[] ownerArray(GroupDocument doc) {
            int[] owner = new int[doc.numPartitions()];
            Arrays.fill(owner, -1);
            for (Map.Entry<String, Map<String, List<Integer>>> member : byMember.entrySet()) {
                Integer m = doc.memberIndex.get(member.getKey());
                for (Map.Entry<String, List<Integer>> topic : member.getValue().entrySet()) {
                    for (int partition : topic.getValue()) {
                        int global = doc.globalId(topic.getKey(), partition);
                        if (m == null || global < 0 || owner[global] != -1)
                            return null;
                        owner[global] = m;
                    }
                }
            }
            return owner;
        }

        private void writeAssignment(JsonGenerator out, GroupDocument doc) throws IOException {
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
        }
    }

    /**
     * An owner array from the assignor's answer, member by member and topic by topic (one lookup
     * each, then the partitions as primitive ints), or null when the answer gives a partition twice,
     * names a member or topic the document does not have or a partition that does not exist: the
     * answer is then written in the assignment form, which shows that.
     */
    static final class Owners {
        final GroupDocument doc;
        final int[] owner;
        private boolean broken;

        Owners(GroupDocument doc) {
            this.doc = doc;
            owner = new int[doc.numPartitions()];
            Arrays.fill(owner, -1);
        }

        /** Member {@code member}'s partitions of {@code topic} (a document topic index, -1: unknown). */
        void add(Integer member, int topic, Iterable<Integer> partitions) {
            if (member == null || topic < 0) {
                broken = true;
                return;
            }
            int m = member;
            int base = (int) doc.topicStart[topic];
            int count = doc.counts[topic];
            for (int p : partitions) {
                if (p < 0 || p >= count || owner[base + p] != -1) {
                    broken = true;
                    return;
                }
                owner[base + p] = m;
            }
        }

        /** Member {@code member}'s partition {@code p} of {@code topic}. */
        void add(Integer member, int topic, int p) {
            if (member == null || topic < 0 || p < 0 || p >= doc.counts[topic]
                || owner[(int) doc.topicStart[topic] + p] != -1) {
                broken = true;
                return;
            }
            owner[(int) doc.topicStart[topic] + p] = member;
        }

        int[] result() {
            return broken ? null : owner;
        }
    }

    /** When the current request's line was read, and the nanoseconds its document took to read. */
    static long lineRead;
    static long parseNanos;

    /** The fields after the assignment: status and info (times inside the JVM); closes the object. */
    static void writeTail(JsonGenerator out, long assignNanos, long inputNanos, int rounds) throws IOException {
        out.writeStringField("status", "heuristic");
        out.writeFieldName("info");
        out.writeStartObject();
        out.writeNumberField("assign_seconds", assignNanos / 1e9);
        out.writeNumberField("input_seconds", inputNanos / 1e9);
        if (parseNanos > 0)
            out.writeNumberField("parse_seconds", parseNanos / 1e9);
        if (rounds != 1)
            out.writeNumberField("rounds", rounds);
        out.writeEndObject();
        out.writeEndObject();
    }

    /** The answer to one request's problem, read from {@code in} (standing at its START_OBJECT). */
    static void answer(String kind, Class<?> type, JsonParser in, ObjectMapper mapper, JsonGenerator out)
        throws Exception {
        switch (kind) {
            case "client": {
                GroupDocument doc = new GroupDocument(in);
                parseNanos = System.nanoTime() - lineRead;
                ClientAssignorRun.run(type.getName(), doc).write(out, doc, true);
                return;
            }
            case "consumer-group":
            case "share": {
                GroupDocument doc = new GroupDocument(in);
                parseNanos = System.nanoTime() - lineRead;
                PartitionAssignor assignor = (PartitionAssignor) type.getConstructor().newInstance();
                // a share group's partition may have several members: only the assignment form holds that
                ServerAssignorRun.run(assignor, doc, kind.equals("share")).write(out, doc, !kind.equals("share"));
                return;
            }
            default: {
                JsonNode problem = mapper.readTree(in);
                if (!"streams-group".equals(problem.path("kind").asText()))
                    throw new IllegalArgumentException("a " + kind + " assignor answers streams-group documents only");
                if (kind.equals("kafka-streams"))
                    StreamsClientRun.assign(type, problem, out);
                else
                    StreamsAssignorRun.group(type, problem, out);
            }
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
        LineReader lines = new LineReader(System.in);
        ByteArrayOutputStream buffer = new ByteArrayOutputStream(1 << 12);
        for (int length = lines.next(); length >= 0; length = lines.next()) {
            if (lines.blank(length))
                continue;
            lineRead = System.nanoTime();
            parseNanos = 0;
            buffer.reset();
            try (JsonGenerator one = factory.createGenerator(buffer, JsonEncoding.UTF8);
                 JsonParser in = factory.createParser(lines.bytes(), 0, length)) {
                if (in.nextToken() != JsonToken.START_OBJECT)
                    throw new IllegalArgumentException("the request is not a JSON object");
                boolean answered = false;
                while (in.nextToken() == JsonToken.FIELD_NAME) {
                    String field = in.currentName();
                    JsonToken value = in.nextToken();
                    if (field.equals("describe") && value == JsonToken.VALUE_TRUE) {
                        describe(one, name, type, refused);
                        answered = true;
                        break;
                    } else if (field.equals("problem") && value == JsonToken.START_OBJECT) {
                        if (refused != null)
                            throw refused;
                        answer(kind, type, in, mapper, one);
                        answered = true;
                        break;
                    }
                    in.skipChildren();
                }
                if (!answered)
                    throw new IllegalArgumentException("the request has no problem object");
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

    /** Standard input line by line as UTF-8 bytes (no decoding to chars: Jackson parses the bytes). */
    static final class LineReader {
        private final InputStream in;
        private byte[] line = new byte[1 << 16];
        private final byte[] chunk = new byte[1 << 16];
        private int start;
        private int end;

        LineReader(InputStream in) {
            this.in = in;
        }

        byte[] bytes() {
            return line;
        }

        /** The next line's length (its bytes in {@link #bytes()}, without the newline), -1 at the end. */
        int next() throws IOException {
            int length = 0;
            while (true) {
                for (int i = start; i < end; i++) {
                    if (chunk[i] == '\n') {
                        length = append(length, start, i);
                        start = i + 1;
                        return length;
                    }
                }
                length = append(length, start, end);
                start = 0;
                end = in.read(chunk);
                if (end < 0) {
                    end = 0;
                    return length > 0 ? length : -1;
                }
            }
        }

        private int append(int length, int from, int to) {
            int more = to - from;
            if (length + more > line.length)
                line = Arrays.copyOf(line, Math.max(2 * line.length, length + more));
            System.arraycopy(chunk, from, line, length, more);
            return length + more;
        }

        boolean blank(int length) {
            for (int i = 0; i < length; i++)
                if (!Character.isWhitespace(line[i]))
                    return false;
            return true;
        }
    }
}
