/*
 * A consumer-group document (docs/formats.md) read into the arrays Kafka's inputs are built from.
 * The lab sends documents it has already checked, so this reader keeps what Kafka would see and
 * leaves the checking to the lab: subscriptions and owned claims as given (stale claims and
 * subscriptions to missing topics included), generations (-1 when absent), racks, instance ids,
 * the replica racks of every partition (KIP-881) and KIP-848's topic ids.  It reads the document
 * token by token (Jackson's streaming parser): a million-partition group is a few arrays, never a
 * tree of nodes.  Members with the same subscription list share it (one distinct list each), and
 * the topic names of the members' lists are one String per distinct name, looked up from the
 * parser's characters (a thousand members of a hundred topics make a hundred Strings, not 100,000).
 */
package rebalancelab.peers;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

final class GroupDocument {
    /** Topic names in document order, their partition counts and the global id of each one's partition 0. */
    final String[] topics;
    final int[] counts;
    final long[] topicStart;
    final Map<String, Integer> topicIndex = new HashMap<>();
    /** Members in document order, and each one's position. */
    final String[] members;
    final Map<String, Integer> memberIndex = new HashMap<>();
    final String[] instanceIds;
    final String[] racks;
    final int[] generations;
    final boolean[] hasGeneration;
    /** Whether the member's document has a non-empty owned object. */
    final boolean[] hasOwned;
    /** Member m subscribes subscriptionTopics[subscriptionStart[m] .. subscriptionStart[m+1]-1], as given. */
    final int[] subscriptionStart;
    final String[] subscriptionTopics;
    /** The distinct subscription lists: member m's is distinct[m], listed from distinctStart[distinct[m]]. */
    final int[] distinct;
    final int[] distinctStart;
    final String[] distinctTopics;
    /** Member m owned (ownedTopic[i], ownedPartition[i]) for i in ownedStart[m] .. ownedStart[m+1]-1, as given. */
    final int[] ownedStart;
    final String[] ownedTopic;
    final int[] ownedPartition;
    /** The replica racks of every partition by global id, or null when the document has no partition_racks. */
    final String[][] partitionRacks;
    /** Each topic's id: the document's topic_ids, else Uuid(0x0000000100000001, t) (GroupProblem.topic_uuids). */
    final Uuid[] topicIds;

    /** One member as read, before the arrays are made. */
    private static final class Member {
        String id;
        String instanceId;
        String rack;
        Integer generation;
        boolean owned;
        List<String> topics = List.of();
        final List<String> ownedTopics = new ArrayList<>();
        int[] ownedPartitions = new int[0];
        int ownedCount;

        void own(String topic, int partition) {
            if (ownedCount == ownedPartitions.length)
                ownedPartitions = Arrays.copyOf(ownedPartitions, Math.max(16, 2 * ownedCount));
            ownedTopics.add(topic);
            ownedPartitions[ownedCount++] = partition;
        }
    }

    /** One String per distinct name read, found from the parser's characters without copying them. */
    static final class Names {
        private String[] table = new String[256];
        private int size;

        String read(JsonParser in) throws IOException {
            if (in.currentToken() != JsonToken.VALUE_STRING)
                return in.getValueAsString();
            char[] chars = in.getTextCharacters();
            int offset = in.getTextOffset();
            int length = in.getTextLength();
            int hash = 0;
            for (int i = 0; i < length; i++)
                hash = 31 * hash + chars[offset + i];
            int mask = table.length - 1;
            int slot = (hash ^ (hash >>> 16)) & mask;
            for (String name = table[slot]; name != null; name = table[slot]) {
                if (name.hashCode() == hash && same(name, chars, offset, length))
                    return name;
                slot = (slot + 1) & mask;
            }
            String name = new String(chars, offset, length);
            table[slot] = name;
            if (2 * ++size > table.length)
                grow();
            return name;
        }

        private static boolean same(String name, char[] chars, int offset, int length) {
            if (name.length() != length)
                return false;
            for (int i = 0; i < length; i++)
                if (name.charAt(i) != chars[offset + i])
                    return false;
            return true;
        }

        private void grow() {
            String[] old = table;
            table = new String[2 * old.length];
            int mask = table.length - 1;
            for (String name : old) {
                if (name == null)
                    continue;
                int hash = name.hashCode();
                int slot = (hash ^ (hash >>> 16)) & mask;
                while (table[slot] != null)
                    slot = (slot + 1) & mask;
                table[slot] = name;
            }
        }
    }

    /** Reads the document object the parser stands at (its START_OBJECT). */
    GroupDocument(JsonParser in) throws IOException {
        expect(in, in.currentToken(), JsonToken.START_OBJECT, "the problem");
        Map<String, Integer> topicCounts = new LinkedHashMap<>();
        List<Member> read = new ArrayList<>();
        Map<String, List<String[]>> racksByTopic = null;
        Map<String, String> ids = new HashMap<>();
        Names names = new Names();
        while (in.nextToken() == JsonToken.FIELD_NAME) {
            String field = in.currentName();
            JsonToken value = in.nextToken();
            switch (field) {
                case "kind":
                    if (!"group".equals(in.getValueAsString()))
                        throw new IllegalArgumentException("a consumer-group assignor cannot answer a "
                            + in.getValueAsString() + " document");
                    break;
                case "topics":
                    expect(in, value, JsonToken.START_OBJECT, "topics");
                    while (in.nextToken() == JsonToken.FIELD_NAME) {
                        String name = in.currentName();
                        in.nextToken();
                        topicCounts.put(name, in.getIntValue());
                    }
                    break;
                case "members":
                    expect(in, value, JsonToken.START_ARRAY, "members");
                    while (in.nextToken() == JsonToken.START_OBJECT)
                        read.add(member(in, names));
                    break;
                case "partition_racks":
                    if (value == JsonToken.VALUE_NULL)
                        break;
                    expect(in, value, JsonToken.START_OBJECT, "partition_racks");
                    racksByTopic = new HashMap<>();
                    while (in.nextToken() == JsonToken.FIELD_NAME) {
                        String name = in.currentName();
                        List<String[]> lists = new ArrayList<>();
                        expect(in, in.nextToken(), JsonToken.START_ARRAY, "partition_racks." + name);
                        while (in.nextToken() == JsonToken.START_ARRAY)
                            lists.add(strings(in).toArray(new String[0]));
                        racksByTopic.put(name, lists);
                    }
                    break;
                case "topic_ids":
                    if (value == JsonToken.VALUE_NULL)
                        break;
                    expect(in, value, JsonToken.START_OBJECT, "topic_ids");
                    while (in.nextToken() == JsonToken.FIELD_NAME) {
                        String name = in.currentName();
                        in.nextToken();
                        ids.put(name, in.getValueAsString());
                    }
                    break;
                default: // lags and whatever else the document holds: not Kafka's assignors' input
                    in.skipChildren();
            }
        }
        topics = topicCounts.keySet().toArray(new String[0]);
        counts = new int[topics.length];
        topicStart = new long[topics.length + 1];
        for (int t = 0; t < topics.length; t++) {
            counts[t] = topicCounts.get(topics[t]);
            topicStart[t + 1] = topicStart[t] + counts[t];
            topicIndex.put(topics[t], t);
        }
        int n = read.size();
        members = new String[n];
        instanceIds = new String[n];
        racks = new String[n];
        generations = new int[n];
        hasGeneration = new boolean[n];
        hasOwned = new boolean[n];
        subscriptionStart = new int[n + 1];
        ownedStart = new int[n + 1];
        distinct = new int[n];
        Map<List<String>, Integer> seen = new HashMap<>();
        List<List<String>> lists = new ArrayList<>();
        int subscribed = 0;
        int owned = 0;
        for (Member member : read) {
            subscribed += member.topics.size();
            owned += member.ownedCount;
        }
        subscriptionTopics = new String[subscribed];
        ownedTopic = new String[owned];
        ownedPartition = new int[owned];
        for (int m = 0; m < n; m++) {
            Member member = read.get(m);
            members[m] = member.id;
            memberIndex.put(member.id, m);
            instanceIds[m] = member.instanceId;
            racks[m] = member.rack;
            hasGeneration[m] = member.generation != null;
            generations[m] = hasGeneration[m] ? member.generation : -1;
            hasOwned[m] = member.owned;
            for (int i = 0; i < member.topics.size(); i++)
                subscriptionTopics[subscriptionStart[m] + i] = member.topics.get(i);
            subscriptionStart[m + 1] = subscriptionStart[m] + member.topics.size();
            distinct[m] = seen.computeIfAbsent(member.topics, key -> {
                lists.add(key);
                return lists.size() - 1;
            });
            for (int i = 0; i < member.ownedCount; i++)
                ownedTopic[ownedStart[m] + i] = member.ownedTopics.get(i);
            System.arraycopy(member.ownedPartitions, 0, ownedPartition, ownedStart[m], member.ownedCount);
            ownedStart[m + 1] = ownedStart[m] + member.ownedCount;
        }
        distinctStart = new int[lists.size() + 1];
        List<String> flat = new ArrayList<>();
        for (int d = 0; d < lists.size(); d++) {
            flat.addAll(lists.get(d));
            distinctStart[d + 1] = flat.size();
        }
        distinctTopics = flat.toArray(new String[0]);
        if (racksByTopic == null) {
            partitionRacks = null;
        } else {
            partitionRacks = new String[numPartitions()][];
            Arrays.fill(partitionRacks, new String[0]);
            for (int t = 0; t < topics.length; t++) {
                List<String[]> given = racksByTopic.getOrDefault(topics[t], List.of());
                for (int p = 0; p < Math.min(counts[t], given.size()); p++)
                    partitionRacks[(int) topicStart[t] + p] = given.get(p);
            }
        }
        topicIds = new Uuid[topics.length];
        for (int t = 0; t < topics.length; t++) {
            String id = ids.get(topics[t]);
            topicIds[t] = id == null ? new Uuid(0x0000000100000001L, t) : Uuid.fromString(id);
        }
    }

    private static Member member(JsonParser in, Names names) throws IOException {
        Member member = new Member();
        while (in.nextToken() == JsonToken.FIELD_NAME) {
            String field = in.currentName();
            JsonToken value = in.nextToken();
            switch (field) {
                case "id":
                    member.id = in.getValueAsString();
                    break;
                case "instance_id":
                    member.instanceId = value == JsonToken.VALUE_NULL ? null : in.getValueAsString();
                    break;
                case "rack":
                    member.rack = value == JsonToken.VALUE_NULL ? null : in.getValueAsString();
                    break;
                case "generation":
                    member.generation = value == JsonToken.VALUE_NULL ? null : in.getIntValue();
                    break;
                case "topics":
                    expect(in, value, JsonToken.START_ARRAY, "members[].topics");
                    member.topics = new ArrayList<>();
                    while (in.nextToken() != JsonToken.END_ARRAY)
                        member.topics.add(names.read(in));
                    break;
                case "owned":
                    if (value == JsonToken.VALUE_NULL)
                        break;
                    expect(in, value, JsonToken.START_OBJECT, "members[].owned");
                    while (in.nextToken() == JsonToken.FIELD_NAME) {
                        member.owned = true;
                        String topic = in.currentName();
                        expect(in, in.nextToken(), JsonToken.START_ARRAY, "members[].owned." + topic);
                        while (in.nextToken() != JsonToken.END_ARRAY)
                            member.own(topic, in.getIntValue());
                    }
                    break;
                default:
                    in.skipChildren();
            }
        }
        return member;
    }

    /** The strings of the array the parser stands at (its START_ARRAY), up to its END_ARRAY. */
    private static List<String> strings(JsonParser in) throws IOException {
        List<String> out = new ArrayList<>();
        while (in.nextToken() != JsonToken.END_ARRAY)
            out.add(in.getValueAsString());
        return out;
    }

    private static void expect(JsonParser in, JsonToken found, JsonToken wanted, String what) {
        if (found != wanted)
            throw new IllegalArgumentException(what + ": expected " + wanted + ", found " + found);
    }

    int numPartitions() {
        return (int) topicStart[topics.length];
    }

    /** The global id of (topic, partition), or -1 when that partition does not exist (a stale claim). */
    int globalId(String topic, int partition) {
        Integer t = topicIndex.get(topic);
        if (t == null || partition < 0 || partition >= counts[t])
            return -1;
        return (int) topicStart[t] + partition;
    }

    /** Whether member m had a previous assignment or a generation (else its consumer is new). */
    boolean[] hasPrevious() {
        boolean[] previous = new boolean[members.length];
        for (int m = 0; m < members.length; m++)
            previous[m] = hasOwned[m] || hasGeneration[m];
        return previous;
    }
}
