/*
 * A group coordinator's assignor (KIP-848's ConsumerGroupPartitionAssignor, or KIP-932's
 * ShareGroupPartitionAssignor) on a consumer-group document, as the coordinator's
 * TargetAssignmentBuilder hands it its input (KafkaPeers.groupSpec and KafkaPeers.describer).
 *
 * Each member's current assignment is its target assignment as the coordinator replays it
 * (Assignment.fromRecord): for a consumer group, every claim on an existing partition, a partition
 * claimed by several members kept by its KIP-341 winner only (the highest generation; a tie at the
 * highest keeps none), as heuristics.server_input.current_claims reads the document; for a share
 * group, every claim on an existing partition as given (a partition may have several members,
 * problems.share.previous_claims).
 */
package rebalancelab.peers;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

final class ServerAssignorRun {
    private ServerAssignorRun() {
    }

    static AssignorServer.Answer run(PartitionAssignor assignor, GroupDocument doc, boolean share) {
        AssignorServer.Answer answer = new AssignorServer.Answer(doc.members);
        if (doc.members.length == 0) // the coordinator computes no target assignment for an empty group
            return answer;
        long began = System.nanoTime();
        int[][] claims = claims(doc, share);
        int[] ownedStart = new int[doc.members.length + 1];
        for (int member : claims[0])
            ownedStart[member + 1]++;
        for (int m = 0; m < doc.members.length; m++)
            ownedStart[m + 1] += ownedStart[m];
        int[] ownedTopic = new int[claims[1].length];
        int[] ownedPartition = new int[claims[1].length];
        for (int i = 0; i < ownedTopic.length; i++) {
            int global = claims[1][i];
            int t = topicOf(doc, global);
            ownedTopic[i] = t;
            ownedPartition[i] = (int) (global - doc.topicStart[t]);
        }
        GroupSpec spec = KafkaPeers.groupSpec(doc.members, doc.instanceIds, doc.racks, doc.distinct,
            doc.distinctStart, doc.distinctTopics, doc.topics, doc.topicIds, ownedStart, ownedTopic,
            ownedPartition);
        SubscribedTopicDescriber describer = KafkaPeers.describer(doc.topicIds, doc.counts, doc.partitionRacks,
            doc.topicStart);
        long start = System.nanoTime();
        GroupAssignment result = assignor.assign(spec, describer);
        answer.assignNanos = System.nanoTime() - start;
        answer.inputNanos = start - began;
        Map<Uuid, Integer> topicIndex = new HashMap<>();
        for (int t = 0; t < doc.topics.length; t++)
            topicIndex.put(doc.topicIds[t], t);
        if (!share) { // the owner array straight from Kafka's answer
            AssignorServer.Owners owners = new AssignorServer.Owners(doc);
            for (Map.Entry<String, MemberAssignment> entry : result.members().entrySet()) {
                Integer m = doc.memberIndex.get(entry.getKey());
                for (Map.Entry<Uuid, Set<Integer>> topic : entry.getValue().partitions().entrySet())
                    owners.add(m, topicIndex.getOrDefault(topic.getKey(), -1), topic.getValue());
            }
            answer.owner = owners.result();
            if (answer.owner != null)
                return answer;
        }
        for (Map.Entry<String, MemberAssignment> entry : result.members().entrySet()) {
            for (Map.Entry<Uuid, Set<Integer>> topic : entry.getValue().partitions().entrySet()) {
                Integer t = topicIndex.get(topic.getKey());
                String name = t == null ? topic.getKey().toString() : doc.topics[t];
                for (int partition : topic.getValue())
                    answer.add(entry.getKey(), name, partition);
            }
        }
        return answer;
    }

    private static int topicOf(GroupDocument doc, int global) {
        int lo = 0;
        int hi = doc.topics.length - 1;
        while (lo < hi) { // the last topic whose start is at most global
            int mid = (lo + hi + 1) >>> 1;
            if (doc.topicStart[mid] <= global)
                lo = mid;
            else
                hi = mid - 1;
        }
        while (doc.counts[lo] == 0 || doc.topicStart[lo + 1] <= global)
            lo++;
        return lo;
    }

    /** The members' current assignments: {member positions, global partition ids}, in document order. */
    static int[][] claims(GroupDocument doc, boolean share) {
        int total = doc.ownedTopic.length;
        int[] members = new int[total];
        int[] partitions = new int[total];
        int count = 0;
        int[] claimants = new int[doc.numPartitions()];
        for (int m = 0; m < doc.members.length; m++) {
            for (int i = doc.ownedStart[m]; i < doc.ownedStart[m + 1]; i++) {
                int global = doc.globalId(doc.ownedTopic[i], doc.ownedPartition[i]);
                if (global < 0)
                    continue; // a stale claim: the topic or the partition does not exist
                members[count] = m;
                partitions[count++] = global;
                claimants[global]++;
            }
        }
        int[] winner = null;
        if (!share) {
            // KIP-341: among several claims on one partition the highest generation wins; a tie keeps none.
            winner = new int[claimants.length];
            int[] best = new int[claimants.length];
            boolean[] tied = new boolean[claimants.length];
            Arrays.fill(winner, -1);
            for (int i = 0; i < count; i++) {
                int p = partitions[i];
                if (claimants[p] == 1)
                    continue;
                int generation = doc.generations[members[i]];
                if (winner[p] == -1 && !tied[p] || generation > best[p]) {
                    winner[p] = members[i];
                    best[p] = generation;
                    tied[p] = false;
                } else if (generation == best[p]) {
                    winner[p] = -1;
                    tied[p] = true;
                }
            }
        }
        int kept = 0;
        for (int i = 0; i < count; i++) {
            int p = partitions[i];
            if (share || claimants[p] == 1 || winner[p] == members[i]) {
                members[kept] = members[i];
                partitions[kept++] = p;
            }
        }
        return new int[][] {Arrays.copyOf(members, kept), Arrays.copyOf(partitions, kept)};
    }
}
