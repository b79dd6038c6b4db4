/*
 * Kafka's own assignors driven through a whole trace (a sequence of rebalances) in one call, each
 * step fed Kafka's own previous answer the way Kafka's members and group coordinator carry it.
 * Loaded by peers/kafka_trace.py through JPype; test support only.
 *
 * The trace crosses the JPype boundary once, as JSON: every step's group as the events left it
 * (topics and partition counts, members in the coordinator's order with their subscriptions,
 * instance ids and racks, replica racks, KIP-848 topic ids) and the ids of the members that
 * start afresh at that step (a member that joins or a dynamic member that restarts: a new
 * consumer).  What a member sends at each rebalance is not in the input: it is the state this
 * class keeps for each member, as its consumer keeps it.
 */
package rebalancelab.peers;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

public final class TracePeers {
    private TracePeers() {
    }

    /** The group id the members' ConsumerGroupMetadata carries (the assignors do not read it). */
    private static final String GROUP = "rebalance-lab";
    /** Follow-up rounds of a cooperative step beyond which a step is reported as not converging. */
    private static final int MAX_ROUNDS = 16;
    /** ConsumerCoordinator's COMPARATOR: topic name, then partition. */
    private static final Comparator<TopicPartition> COMPARATOR =
        Comparator.comparing(TopicPartition::topic).thenComparing(TopicPartition::partition);

    /** One consumer of the group as its KafkaConsumer keeps it between rebalances. */
    private static final class Consumer {
        /** The consumer's own assignor instance (StickyAssignor remembers its last assignment). */
        final ConsumerPartitionAssignor assignor;
        /** SubscriptionState's assigned partitions, in its order (the TreeSet of onJoinComplete). */
        List<TopicPartition> owned = new ArrayList<>();
        /** The generation of the consumer's last assignment, -1 (NO_GENERATION) before its first. */
        int generation = -1;

        Consumer(String assignorClass) throws ReflectiveOperationException {
            assignor = KafkaPeers.newAssignor(assignorClass);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> object(Object node) {
        return (Map<String, Object>) node;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object node) {
        return node == null ? List.of() : (List<Object>) node;
    }

    private static String[] strings(Object array) {
        return list(array).stream().map(String::valueOf).toArray(String[]::new);
    }

    private static String text(Map<String, Object> node, String field) {
        Object value = node.get(field);
        return value == null ? null : value.toString();
    }

    private static Set<String> fresh(Map<String, Object> step) {
        return new HashSet<>(List.of(strings(step.get("fresh"))));
    }

    private static List<Map<String, Object>> members(Map<String, Object> step) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object member : list(step.get("members")))
            out.add(object(member));
        return out;
    }

    /** The step's cluster: every partition of its topics, with its replicas' racks when the step gives them. */
    private static Cluster cluster(Map<String, Object> step, List<String> topics, int[] counts) {
        Object racks = step.get("partition_racks");
        String[][] partitionRacks = null;
        if (racks != null) {
            List<String[]> flat = new ArrayList<>();
            for (int t = 0; t < topics.size(); t++) {
                List<Object> lists = list(object(racks).get(topics.get(t)));
                for (int p = 0; p < counts[t]; p++)
                    flat.add(p >= lists.size() ? new String[0] : strings(lists.get(p)));
            }
            partitionRacks = flat.toArray(new String[0][]);
        }
        return KafkaPeers.cluster(topics.toArray(new String[0]), counts, partitionRacks);
    }

    /** The assignment JSON object ({member: {topic: [partition]}}, partitions ascending) of the members. */
    private static Map<String, Object> assignmentJson(List<Map<String, Object>> members,
                                                      Map<String, List<TopicPartition>> owned) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (Map<String, Object> member : members) {
            String id = text(member, "id");
            Map<String, Object> topics = new TreeMap<>();
            for (TopicPartition tp : owned.getOrDefault(id, List.of()))
                ((TreeSet<Integer>) topics.computeIfAbsent(tp.topic(), key -> new TreeSet<Integer>())).add(tp.partition());
            out.put(id, topics);
        }
        return out;
    }

    /** The topics of a step in its order, and their partition counts. */
    private static int[] topics(Map<String, Object> step, List<String> names) {
        Map<String, Object> topics = object(step.get("topics"));
        names.addAll(topics.keySet());
        return topics.values().stream().mapToInt(v -> ((Number) v).intValue()).toArray();
    }

    /**
     * A client assignor (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor)
     * through a trace, as the group's KafkaConsumers and their leader run it (ConsumerCoordinator).
     *
     * <p>Every member is one consumer with its own assignor instance, kept from step to step; a member
     * of {@code fresh} (or new to the group) is a new consumer (no assignment, generation -1), a member
     * missing from a step has left.  A static member restarted keeps its state: the coordinator hands
     * its assignment back and the consumer's assignor is told it (onAssignment).  Each rebalance:
     * <ol>
     *   <li>each consumer prepares to join (onJoinPrepare): an eager one revokes everything, a
     *   cooperative one the partitions of topics it no longer subscribes;</li>
     *   <li>each builds its Subscription (ConsumerCoordinator.metadata: the topics of its subscription's
     *   HashSet, its assignor's user data, its assigned partitions in SubscriptionState's order, its
     *   generation, its rack), sent through ConsumerProtocol's serialization; the leader keeps them in a
     *   HashMap filled in the coordinator's member order, with their group.instance.id;</li>
     *   <li>the leader's assignor assigns; the group's generation is the next one; every member gets its
     *   Assignment through ConsumerProtocol's serialization (onJoinComplete): its assigned partitions
     *   become its SubscriptionState's (sorted by topic, then partition), its assignor is told
     *   (onAssignment);</li>
     *   <li>a cooperative member that lost partitions rejoins: the step takes another round (members
     *   owning what the round gave them, the next generation) until a round revokes nothing.</li>
     * </ol>
     *
     * @param traceJson {"steps": [{"topics": {name: count} (in order), "members": [{"id", "topics",
     *                  "instance_id", "rack"}] (the coordinator's order), "fresh": [id], "partition_racks":
     *                  {name: [[rack]]} or absent}]}
     * @return {"steps": [{"assignment": {member: {topic: [partition]}} (the step's final answer), "first":
     *         the first round's answer, "rounds": n, "rejected": [member] (members whose answer held a
     *         topic they do not subscribe: their consumer refuses it)}]}
     */
    public static String clientTrace(String assignorClass, String traceJson) throws Exception {
        boolean cooperative = KafkaPeers.newAssignor(assignorClass).supportedProtocols()
            .contains(RebalanceProtocol.COOPERATIVE);
        Map<String, Consumer> consumers = new HashMap<>();
        int generation = 0;
        List<Object> out = new ArrayList<>();
        for (Object stepNode : list(object(Json.parse(traceJson)).get("steps"))) {
            Map<String, Object> step = object(stepNode);
            List<String> topics = new ArrayList<>();
            int[] counts = topics(step, topics);
            Cluster cluster = cluster(step, topics, counts);
            List<Map<String, Object>> members = members(step);
            Set<String> fresh = fresh(step);
            Map<String, Consumer> present = new HashMap<>();
            for (Map<String, Object> member : members) {
                String id = text(member, "id");
                Consumer consumer = consumers.get(id);
                present.put(id, consumer == null || fresh.contains(id) ? new Consumer(assignorClass) : consumer);
            }
            consumers = present;

            Map<String, Object> result = new LinkedHashMap<>();
            List<Object> rejected = new ArrayList<>();
            int rounds = 0;
            boolean revoked = true;
            while (revoked) {
                if (++rounds > MAX_ROUNDS)
                    throw new IllegalStateException("a step took more than " + MAX_ROUNDS + " rounds");
                revoked = false;
                Map<String, Subscription> subscriptions = new HashMap<>();
                for (Map<String, Object> member : members) {
                    String id = text(member, "id");
                    Consumer consumer = consumers.get(id);
                    Set<String> subscribed = new HashSet<>(List.of(strings(member.get("topics"))));
                    if (!cooperative)
                        consumer.owned = new ArrayList<>();
                    else
                        consumer.owned.removeIf(tp -> !subscribed.contains(tp.topic()));
                    Subscription sent = new Subscription(new ArrayList<>(subscribed),
                        consumer.assignor.subscriptionUserData(subscribed), consumer.owned,
                        consumer.generation, Optional.ofNullable(text(member, "rack")));
                    Subscription received = ConsumerProtocol.deserializeSubscription(
                        ConsumerProtocol.serializeSubscription(sent));
                    received.setGroupInstanceId(Optional.ofNullable(text(member, "instance_id")));
                    subscriptions.put(id, received);
                }
                // A group without members has no leader to run an assignor: nothing is assigned.
                GroupAssignment answer = members.isEmpty() ? new GroupAssignment(Map.of())
                    : KafkaPeers.newAssignor(assignorClass).assign(cluster, new GroupSubscription(subscriptions));
                generation++;
                Map<String, List<TopicPartition>> given = new HashMap<>();
                for (Map<String, Object> member : members) {
                    String id = text(member, "id");
                    Consumer consumer = consumers.get(id);
                    Assignment sent = answer.groupAssignment().get(id);
                    Assignment received = ConsumerProtocol.deserializeAssignment(
                        ConsumerProtocol.serializeAssignment(sent == null ? new Assignment(List.of()) : sent));
                    TreeSet<TopicPartition> assigned = new TreeSet<>(COMPARATOR);
                    assigned.addAll(received.partitions());
                    Set<String> subscribed = new HashSet<>(List.of(strings(member.get("topics"))));
                    if (rounds == 1 && assigned.stream().anyMatch(tp -> !subscribed.contains(tp.topic())))
                        rejected.add(id);
                    for (TopicPartition tp : consumer.owned)
                        revoked |= !assigned.contains(tp);
                    consumer.assignor.onAssignment(received, new ConsumerGroupMetadata(
                        GROUP, generation, id, Optional.ofNullable(text(member, "instance_id"))));
                    consumer.owned = new ArrayList<>(assigned);
                    consumer.generation = generation;
                    given.put(id, consumer.owned);
                }
                if (rounds == 1)
                    result.put("first", assignmentJson(members, given));
                revoked &= cooperative;
            }
            Map<String, List<TopicPartition>> owned = new HashMap<>();
            consumers.forEach((id, consumer) -> owned.put(id, consumer.owned));
            result.put("assignment", assignmentJson(members, owned));
            result.put("rounds", rounds);
            result.put("rejected", rejected);
            out.add(result);
        }
        return Json.write(Map.of("steps", out));
    }

    /**
     * A KIP-848 server assignor (UniformAssignor, server RangeAssignor) through a trace, as the group
     * coordinator runs it: each step's GroupSpec (KafkaPeers.groupSpec, the coordinator's structures)
     * holds every member's current target assignment, carried from the step before by member id (a
     * static member restarted keeps its target, the coordinator moves it to the member's new id); a
     * member of {@code fresh} or new to the group has none; partitions of topics the step no longer
     * has are dropped (the metadata image no longer knows their ids).
     *
     * @param traceJson as for {@link #clientTrace}, each step with "topic_ids": {name: [msb, lsb]}
     * @return {"steps": [{"assignment": {member: {topic: [partition]}}}]}
     */
    public static String serverTrace(String assignorClass, String traceJson) throws Exception {
        Map<String, Map<String, TreeSet<Integer>>> target = new HashMap<>();
        List<Object> out = new ArrayList<>();
        for (Object stepNode : list(object(Json.parse(traceJson)).get("steps"))) {
            Map<String, Object> step = object(stepNode);
            List<String> topics = new ArrayList<>();
            int[] counts = topics(step, topics);
            int topicCount = topics.size();
            long[] msb = new long[topicCount];
            long[] lsb = new long[topicCount];
            long[] topicStart = new long[topicCount + 1];
            for (int t = 0; t < topicCount; t++) {
                List<Object> id = list(object(step.get("topic_ids")).get(topics.get(t)));
                msb[t] = ((Number) id.get(0)).longValue();
                lsb[t] = ((Number) id.get(1)).longValue();
                topicStart[t + 1] = topicStart[t] + counts[t];
            }
            Uuid[] ids = KafkaPeers.topicIds(msb, lsb);
            List<Map<String, Object>> members = members(step);
            Set<String> fresh = fresh(step);
            int memberCount = members.size();
            String[] memberIds = new String[memberCount];
            String[] instanceIds = new String[memberCount];
            String[] racks = new String[memberCount];
            int[] memberSubscription = new int[memberCount];
            int[] subscriptionStart = new int[memberCount + 1];
            List<String> names = new ArrayList<>();
            int[] ownedStart = new int[memberCount + 1];
            List<Integer> ownedTopic = new ArrayList<>();
            List<Integer> ownedPartition = new ArrayList<>();
            for (int m = 0; m < memberCount; m++) {
                Map<String, Object> member = members.get(m);
                String id = text(member, "id");
                memberIds[m] = id;
                instanceIds[m] = text(member, "instance_id");
                racks[m] = text(member, "rack");
                memberSubscription[m] = m;
                names.addAll(List.of(strings(member.get("topics"))));
                subscriptionStart[m + 1] = names.size();
                Map<String, TreeSet<Integer>> current = fresh.contains(id) ? null : target.get(id);
                for (int t = 0; current != null && t < topicCount; t++) {
                    for (int p : current.getOrDefault(topics.get(t), new TreeSet<>())) {
                        if (p < counts[t]) {
                            ownedTopic.add(t);
                            ownedPartition.add(p);
                        }
                    }
                }
                ownedStart[m + 1] = ownedTopic.size();
            }
            GroupSpec spec = KafkaPeers.groupSpec(memberIds, instanceIds, racks, memberSubscription,
                subscriptionStart, names.toArray(new String[0]), topics.toArray(new String[0]), ids,
                ownedStart, ownedTopic.stream().mapToInt(Integer::intValue).toArray(),
                ownedPartition.stream().mapToInt(Integer::intValue).toArray());
            SubscribedTopicDescriber describer = KafkaPeers.describer(ids, counts, null, topicStart);
            ConsumerGroupPartitionAssignor assignor = (ConsumerGroupPartitionAssignor)
                Class.forName(assignorClass).getDeclaredConstructor().newInstance();
            Map<String, MemberAssignment> answer = memberCount == 0 ? Map.of()
                : assignor.assign(spec, describer).members();
            Map<Uuid, String> byId = new HashMap<>();
            for (int t = 0; t < topicCount; t++)
                byId.put(ids[t], topics.get(t));
            target = new HashMap<>();
            Map<String, List<TopicPartition>> given = new HashMap<>();
            for (String id : memberIds) {
                Map<String, TreeSet<Integer>> next = new HashMap<>();
                List<TopicPartition> partitions = new ArrayList<>();
                MemberAssignment assignment = answer.get(id);
                if (assignment != null) {
                    for (Map.Entry<Uuid, Set<Integer>> entry : assignment.partitions().entrySet()) {
                        String name = byId.get(entry.getKey());
                        for (int p : entry.getValue()) {
                            next.computeIfAbsent(name, key -> new TreeSet<>()).add(p);
                            partitions.add(new TopicPartition(name, p));
                        }
                    }
                }
                target.put(id, next);
                given.put(id, partitions);
            }
            out.add(Map.of("assignment", assignmentJson(members, given)));
        }
        return Json.write(Map.of("steps", out));
    }

    /** The JSON this class reads and writes: objects (in order), arrays, strings, integers, booleans, null. */
    static final class Json {
        private final String text;
        private int at;

        private Json(String text) {
            this.text = text;
        }

        static Object parse(String text) {
            Json reader = new Json(text);
            Object value = reader.value();
            reader.space();
            if (reader.at != text.length())
                throw new IllegalArgumentException("JSON: trailing text at " + reader.at);
            return value;
        }

        private void space() {
            while (at < text.length() && Character.isWhitespace(text.charAt(at)))
                at++;
        }

        private char next() {
            space();
            if (at >= text.length())
                throw new IllegalArgumentException("JSON: unexpected end");
            return text.charAt(at);
        }

        private void expect(char c) {
            if (next() != c)
                throw new IllegalArgumentException("JSON: expected '" + c + "' at " + at);
            at++;
        }

        private Object value() {
            char c = next();
            if (c == '{') {
                at++;
                Map<String, Object> object = new LinkedHashMap<>();
                if (next() == '}') {
                    at++;
                    return object;
                }
                do {
                    String key = string();
                    expect(':');
                    object.put(key, value());
                } while (comma('}'));
                return object;
            }
            if (c == '[') {
                at++;
                List<Object> array = new ArrayList<>();
                if (next() == ']') {
                    at++;
                    return array;
                }
                do {
                    array.add(value());
                } while (comma(']'));
                return array;
            }
            if (c == '"')
                return string();
            for (String word : new String[] {"null", "true", "false"}) {
                if (text.startsWith(word, at)) {
                    at += word.length();
                    return word.equals("null") ? null : Boolean.valueOf(word);
                }
            }
            int start = at;
            while (at < text.length() && "+-0123456789".indexOf(text.charAt(at)) >= 0)
                at++;
            return Long.parseLong(text.substring(start, at));
        }

        private boolean comma(char close) {
            char c = next();
            at++;
            if (c == ',')
                return true;
            if (c != close)
                throw new IllegalArgumentException("JSON: expected ',' or '" + close + "' at " + (at - 1));
            return false;
        }

        private String string() {
            expect('"');
            StringBuilder out = new StringBuilder();
            while (text.charAt(at) != '"') {
                char c = text.charAt(at++);
                if (c == '\\') {
                    char e = text.charAt(at++);
                    switch (e) {
                        case 'n': out.append('\n'); break;
                        case 't': out.append('\t'); break;
                        case 'r': out.append('\r'); break;
                        case 'b': out.append('\b'); break;
                        case 'f': out.append('\f'); break;
                        case 'u': out.append((char) Integer.parseInt(text.substring(at, at + 4), 16)); at += 4; break;
                        default: out.append(e);
                    }
                } else {
                    out.append(c);
                }
            }
            at++;
            return out.toString();
        }

        static String write(Object value) {
            StringBuilder out = new StringBuilder();
            write(value, out);
            return out.toString();
        }

        private static void write(Object value, StringBuilder out) {
            if (value == null) {
                out.append("null");
            } else if (value instanceof Map) {
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                    if (!first)
                        out.append(',');
                    first = false;
                    write(entry.getKey().toString(), out);
                    out.append(':');
                    write(entry.getValue(), out);
                }
                out.append('}');
            } else if (value instanceof Iterable) {
                out.append('[');
                boolean first = true;
                for (Object item : (Iterable<?>) value) {
                    if (!first)
                        out.append(',');
                    first = false;
                    write(item, out);
                }
                out.append(']');
            } else if (value instanceof String) {
                out.append('"');
                for (char c : ((String) value).toCharArray()) {
                    if (c == '"' || c == '\\')
                        out.append('\\').append(c);
                    else if (c < 0x20)
                        out.append(String.format("\\u%04x", (int) c));
                    else
                        out.append(c);
                }
                out.append('"');
            } else {
                out.append(value);
            }
        }
    }
}
