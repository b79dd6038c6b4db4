/*
 * A consumer-group document (docs/formats.md) read into the arrays Kafka's inputs are built from.
 * The lab sends documents it has already checked, so this reader keeps what Kafka would see and
 * leaves the checking to the lab: subscriptions and owned claims as given (stale claims and
 * subscriptions to missing topics included), generations (-1 when absent), racks, instance ids,
 * the replica racks of every partition (KIP-881) and KIP-848's topic ids.
 */
package rebalancelab.peers;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.common.Uuid;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

final class GroupDocument {
    /** Topic names in document order, their partition counts and the global id of each one's partition 0. */
    final String[] topics;
    final int[] counts;
    final long[] topicStart;
    final Map<String, Integer> topicIndex = new HashMap<>();
    /** Members in document order. */
    final String[] members;
    final String[] instanceIds;
    final String[] racks;
    final int[] generations;
    final boolean[] hasGeneration;
    /** Whether the member's document has a non-empty owned object. */
    final boolean[] hasOwned;
    /** Member m subscribes subscriptionTopics[subscriptionStart[m] .. subscriptionStart[m+1]-1], as given. */
    final int[] subscriptionStart;
    final String[] subscriptionTopics;
    /** Member m owned (ownedTopic[i], ownedPartition[i]) for i in ownedStart[m] .. ownedStart[m+1]-1, as given. */
    final int[] ownedStart;
    final String[] ownedTopic;
    final int[] ownedPartition;
    /** The replica racks of every partition by global id, or null when the document has no partition_racks. */
    final String[][] partitionRacks;
    /** Each topic's id: the document's topic_ids, else Uuid(0x0000000100000001, t) (GroupProblem.topic_uuids). */
    final Uuid[] topicIds;

    GroupDocument(JsonNode doc) {
        JsonNode topicsNode = doc.path("topics");
        int t = 0;
        topics = new String[topicsNode.size()];
        counts = new int[topics.length];
        topicStart = new long[topics.length + 1];
        for (Iterator<Map.Entry<String, JsonNode>> it = topicsNode.fields(); it.hasNext(); t++) {
            Map.Entry<String, JsonNode> entry = it.next();
            topics[t] = entry.getKey();
            counts[t] = entry.getValue().asInt();
            topicStart[t + 1] = topicStart[t] + counts[t];
            topicIndex.put(topics[t], t);
        }
        JsonNode membersNode = doc.path("members");
        int n = membersNode.size();
        members = new String[n];
        instanceIds = new String[n];
        racks = new String[n];
        generations = new int[n];
        hasGeneration = new boolean[n];
        hasOwned = new boolean[n];
        subscriptionStart = new int[n + 1];
        ownedStart = new int[n + 1];
        List<String> subscribed = new ArrayList<>();
        List<String> ownedTopics = new ArrayList<>();
        List<Integer> ownedPartitions = new ArrayList<>();
        for (int m = 0; m < n; m++) {
            JsonNode member = membersNode.get(m);
            members[m] = member.path("id").asText();
            instanceIds[m] = text(member.get("instance_id"));
            racks[m] = text(member.get("rack"));
            JsonNode generation = member.get("generation");
            hasGeneration[m] = generation != null && !generation.isNull();
            generations[m] = hasGeneration[m] ? generation.asInt() : -1;
            for (JsonNode topic : member.path("topics"))
                subscribed.add(topic.asText());
            subscriptionStart[m + 1] = subscribed.size();
            JsonNode owned = member.get("owned");
            hasOwned[m] = owned != null && owned.size() > 0;
            if (owned != null) {
                for (Iterator<Map.Entry<String, JsonNode>> it = owned.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> entry = it.next();
                    for (JsonNode partition : entry.getValue()) {
                        ownedTopics.add(entry.getKey());
                        ownedPartitions.add(partition.asInt());
                    }
                }
            }
            ownedStart[m + 1] = ownedTopics.size();
        }
        subscriptionTopics = subscribed.toArray(new String[0]);
        ownedTopic = ownedTopics.toArray(new String[0]);
        ownedPartition = ownedPartitions.stream().mapToInt(Integer::intValue).toArray();
        JsonNode racksNode = doc.get("partition_racks");
        if (racksNode == null || racksNode.isNull()) {
            partitionRacks = null;
        } else {
            partitionRacks = new String[(int) topicStart[topics.length]][];
            for (int p = 0; p < partitionRacks.length; p++)
                partitionRacks[p] = new String[0];
            for (Iterator<Map.Entry<String, JsonNode>> it = racksNode.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> entry = it.next();
                Integer topic = topicIndex.get(entry.getKey());
                if (topic == null)
                    continue;
                int p = 0;
                for (JsonNode replicas : entry.getValue()) {
                    if (p >= counts[topic])
                        break;
                    String[] names = new String[replicas.size()];
                    for (int r = 0; r < names.length; r++)
                        names[r] = replicas.get(r).asText();
                    partitionRacks[(int) topicStart[topic] + p++] = names;
                }
            }
        }
        topicIds = new Uuid[topics.length];
        JsonNode idsNode = doc.get("topic_ids");
        for (t = 0; t < topics.length; t++) {
            JsonNode id = idsNode == null ? null : idsNode.get(topics[t]);
            topicIds[t] = id == null || id.isNull() ? new Uuid(0x0000000100000001L, t) : Uuid.fromString(id.asText());
        }
    }

    private static String text(JsonNode node) {
        return node == null || node.isNull() ? null : node.asText();
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
