/*
 * A client-side ConsumerPartitionAssignor on a consumer-group document, as the group leader's
 * consumer runs it (ConsumerCoordinator.onLeaderElected): every member's Subscription built by its
 * own consumer, through ConsumerProtocol's wire format, in the HashMap the leader keeps
 * (KafkaPeers.subscriptions), and the Cluster with every partition and its replica racks.
 *
 * A cooperative assignor (one whose supportedProtocols include COOPERATIVE) leaves out of its round
 * output the partitions that change owner; their old owners revoke them and the group rebalances
 * again.  The run follows those rounds (each member owning its round output, one generation later)
 * until no member revokes anything, so the answer is the completed assignment, and says how many
 * rounds it took.
 */
package rebalancelab.peers;

import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupAssignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.RebalanceProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

final class ClientAssignorRun {
    /** Rounds of a cooperative rebalance after which the last round's output is the answer. */
    static final int MAX_ROUNDS = 8;

    private ClientAssignorRun() {
    }

    static AssignorServer.Answer run(String assignorClass, GroupDocument doc) throws Exception {
        AssignorServer.Answer answer = new AssignorServer.Answer(doc.members);
        if (doc.members.length == 0) // no member, no leader to run an assignor
            return answer;
        Cluster cluster = KafkaPeers.cluster(doc.topics, doc.counts, doc.partitionRacks);
        boolean cooperative = KafkaPeers.newAssignor(assignorClass).supportedProtocols()
            .contains(RebalanceProtocol.COOPERATIVE);
        int[] ownedStart = doc.ownedStart;
        String[] ownedTopic = doc.ownedTopic;
        int[] ownedPartition = doc.ownedPartition;
        int[] generations = doc.generations;
        boolean[] hasPrevious = doc.hasPrevious();
        long nanos = 0;
        long built = 0;
        for (int round = 1; ; round++) {
            long began = System.nanoTime();
            GroupSubscription group = KafkaPeers.subscriptions(assignorClass, doc.members, doc.instanceIds, doc.racks,
                doc.subscriptionStart, doc.subscriptionTopics, ownedStart, ownedTopic, ownedPartition,
                generations, hasPrevious);
            ConsumerPartitionAssignor leader = KafkaPeers.newAssignor(assignorClass);
            long start = System.nanoTime();
            GroupAssignment result = leader.assign(cluster, group);
            nanos += System.nanoTime() - start;
            built += start - began;
            Map<String, Assignment> byMember = result.groupAssignment();
            List<List<TopicPartition>> given = new ArrayList<>(doc.members.length);
            for (String member : doc.members) {
                Assignment assignment = byMember.get(member);
                given.add(assignment == null ? List.of() : assignment.partitions());
            }
            if (!cooperative || round == MAX_ROUNDS || !revokes(ownedStart, ownedTopic, ownedPartition, given)) {
                answer.owner = owners(doc, byMember);
                if (answer.owner == null) {
                    for (Map.Entry<String, Assignment> entry : byMember.entrySet())
                        for (TopicPartition tp : entry.getValue().partitions())
                            answer.add(entry.getKey(), tp.topic(), tp.partition());
                }
                answer.rounds = round;
                answer.assignNanos = nanos;
                answer.inputNanos = built;
                return answer;
            }
            // The next rebalance: each member owns what it was given (topic by topic in the document's
            // order, partitions ascending), all at the next generation.
            int next = Arrays.stream(generations).max().orElse(-1) + 1;
            List<String> topics = new ArrayList<>();
            List<Integer> partitions = new ArrayList<>();
            ownedStart = new int[doc.members.length + 1];
            for (int m = 0; m < doc.members.length; m++) {
                List<TopicPartition> sorted = new ArrayList<>(given.get(m));
                sorted.sort((a, b) -> {
                    int ta = doc.topicIndex.getOrDefault(a.topic(), Integer.MAX_VALUE);
                    int tb = doc.topicIndex.getOrDefault(b.topic(), Integer.MAX_VALUE);
                    return ta != tb ? Integer.compare(ta, tb) : Integer.compare(a.partition(), b.partition());
                });
                for (TopicPartition tp : sorted) {
                    topics.add(tp.topic());
                    partitions.add(tp.partition());
                }
                ownedStart[m + 1] = topics.size();
            }
            ownedTopic = topics.toArray(new String[0]);
            ownedPartition = partitions.stream().mapToInt(Integer::intValue).toArray();
            generations = new int[doc.members.length];
            Arrays.fill(generations, next);
            hasPrevious = new boolean[doc.members.length];
            Arrays.fill(hasPrevious, true);
        }
    }

    /** The owner array of Kafka's answer (null: it is not one, see AssignorServer.Owners). */
    private static int[] owners(GroupDocument doc, Map<String, Assignment> byMember) {
        AssignorServer.Owners owners = new AssignorServer.Owners(doc);
        for (Map.Entry<String, Assignment> entry : byMember.entrySet()) {
            Integer m = doc.memberIndex.get(entry.getKey());
            for (TopicPartition tp : entry.getValue().partitions())
                owners.add(m, doc.topicIndex.getOrDefault(tp.topic(), -1), tp.partition());
        }
        return owners.result();
    }

    /** Whether some member's claims as it sent them are not all in what it was given (it revokes them). */
    private static boolean revokes(int[] ownedStart, String[] ownedTopic, int[] ownedPartition,
                                   List<List<TopicPartition>> given) {
        for (int m = 0; m < given.size(); m++) {
            if (ownedStart[m + 1] == ownedStart[m])
                continue;
            Set<TopicPartition> mine = new HashSet<>(given.get(m));
            for (int i = ownedStart[m]; i < ownedStart[m + 1]; i++)
                if (!mine.contains(new TopicPartition(ownedTopic[i], ownedPartition[i])))
                    return true;
        }
        return false;
    }
}
