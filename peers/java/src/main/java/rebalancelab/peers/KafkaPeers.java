/*
 * Bulk conversions between rebalance-lab's array-backed problems and Kafka's own
 * assignor inputs, and timing loops that run inside the JVM.  Loaded by
 * peers/kafka_java.py through JPype; test and benchmark support only.
 *
 * Arrays cross the JPype boundary whole (one call per group, not one per partition):
 * partitions are global ids (topic t's partitions are topicStart[t] .. topicStart[t+1]-1),
 * members are positions, and an answer is an owner array (member position per partition).
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
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;
import org.apache.kafka.coordinator.group.modern.TopicIds;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

public final class KafkaPeers {
    private KafkaPeers() {
    }

    /** What the group leader's consumer hands its assignor: cluster metadata and every member's subscription. */
    public static final class ClientInput {
        public final Cluster cluster;
        public final GroupSubscription group;

        ClientInput(Cluster cluster, GroupSubscription group) {
            this.cluster = cluster;
            this.group = group;
        }
    }

    /**
     * Kafka's cluster metadata for the topics: every partition of every topic, with its replicas' racks
     * when {@code partitionRacks} is not null (one array of rack names per global partition id; one
     * rack-carrying replica node per distinct rack; an empty array: one replica on a node without a rack).
     */
    public static Cluster cluster(String[] topics, int[] counts, String[][] partitionRacks) {
        Map<String, Node> nodesByRack = new HashMap<>();
        Node plain = new Node(0, "localhost", 9092);
        List<PartitionInfo> partitions = new ArrayList<>();
        int global = 0;
        for (int t = 0; t < topics.length; t++) {
            for (int p = 0; p < counts[t]; p++, global++) {
                Node[] replicas;
                if (partitionRacks == null || partitionRacks[global].length == 0) {
                    // no racks, or none for this partition: one replica on a broker without a rack
                    replicas = new Node[] {plain};
                } else {
                    String[] racks = partitionRacks[global];
                    replicas = new Node[racks.length];
                    for (int r = 0; r < racks.length; r++) {
                        String rack = racks[r];
                        replicas[r] = nodesByRack.computeIfAbsent(rack,
                            key -> new Node(1 + nodesByRack.size(), "localhost", 9092, key));
                    }
                }
                partitions.add(new PartitionInfo(topics[t], p, replicas.length > 0 ? replicas[0] : null, replicas, replicas));
            }
        }
        List<Node> nodes = new ArrayList<>(nodesByRack.values());
        nodes.add(plain);
        return new Cluster("rebalance-lab", nodes, partitions, Collections.emptySet(), Collections.emptySet());
    }

    /**
     * Every member's subscription as the group leader's consumer sees it (ConsumerCoordinator.onLeaderElected):
     * each member's consumer builds its Subscription (ConsumerCoordinator.metadata(): the topics in the order of
     * the HashSet KafkaConsumer.subscribe keeps, its assignor's user data, its owned partitions when the protocol
     * is cooperative (an eager consumer revokes everything before it joins), its generation and rack), serializes
     * it with ConsumerProtocol; the leader deserializes each, sets the group.instance.id and puts it in a HashMap
     * keyed by member id, so Java's hash order of member ids is the order the assignor iterates, as in Kafka.
     *
     * The user data comes from a fresh instance of the member's assignor told its previous assignment and
     * generation through onAssignment, as the member's own assignor instance would be (StickyAssignor encodes
     * them there).  A member with no previous assignment and no generation ({@code hasPrevious[m] == false})
     * is a new consumer: its assignor was never told anything.
     *
     * @param subscriptionStart member m subscribes subscriptionTopics[subscriptionStart[m] .. subscriptionStart[m+1]-1]
     * @param ownedStart member m owned (ownedTopic[i], ownedPartition[i]) for i in ownedStart[m] .. ownedStart[m+1]-1,
     *                   in the order the member holds them
     */
    public static GroupSubscription subscriptions(
        String assignorClass,
        String[] members, String[] instanceIds, String[] racks,
        int[] subscriptionStart, String[] subscriptionTopics,
        int[] ownedStart, String[] ownedTopic, int[] ownedPartition,
        int[] generations, boolean[] hasPrevious
    ) throws ReflectiveOperationException {
        Map<String, Subscription> subscriptions = new HashMap<>();
        for (int m = 0; m < members.length; m++) {
            ConsumerPartitionAssignor assignor = newAssignor(assignorClass);
            boolean cooperative = assignor.supportedProtocols().contains(RebalanceProtocol.COOPERATIVE);
            Set<String> topics = new HashSet<>(Arrays.asList(subscriptionTopics).subList(subscriptionStart[m], subscriptionStart[m + 1]));
            List<TopicPartition> owned = new ArrayList<>(ownedStart[m + 1] - ownedStart[m]);
            for (int i = ownedStart[m]; i < ownedStart[m + 1]; i++)
                owned.add(new TopicPartition(ownedTopic[i], ownedPartition[i]));
            if (hasPrevious[m])
                assignor.onAssignment(new Assignment(owned), new ConsumerGroupMetadata("rebalance-lab", generations[m], members[m], Optional.ofNullable(instanceIds[m])));
            Subscription sent = new Subscription(
                new ArrayList<>(topics),
                assignor.subscriptionUserData(topics),
                cooperative ? owned : Collections.emptyList(),
                generations[m],
                Optional.ofNullable(racks[m]));
            ByteBuffer wire = ConsumerProtocol.serializeSubscription(sent);
            Subscription received = ConsumerProtocol.deserializeSubscription(wire);
            received.setGroupInstanceId(Optional.ofNullable(instanceIds[m]));
            subscriptions.put(members[m], received);
        }
        return new GroupSubscription(subscriptions);
    }

    /** A new instance of a client assignor class, as each consumer creates its own. */
    public static ConsumerPartitionAssignor newAssignor(String assignorClass) throws ReflectiveOperationException {
        return (ConsumerPartitionAssignor) Class.forName(assignorClass).getDeclaredConstructor().newInstance();
    }

    public static ClientInput clientInput(Cluster cluster, GroupSubscription group) {
        return new ClientInput(cluster, group);
    }

    /** The owner array (member position per global partition id, -1 unassigned) of a client assignor's answer. */
    public static int[] owners(GroupAssignment answer, String[] topics, long[] topicStart, String[] members) {
        Map<String, Integer> topicIndex = new HashMap<>();
        for (int t = 0; t < topics.length; t++)
            topicIndex.put(topics[t], t);
        int[] owner = new int[(int) topicStart[topics.length]];
        Arrays.fill(owner, -1);
        Map<String, Assignment> assignments = answer.groupAssignment();
        for (int m = 0; m < members.length; m++) {
            Assignment assignment = assignments.get(members[m]);
            if (assignment == null)
                continue;
            for (TopicPartition tp : assignment.partitions()) {
                int global = (int) (topicStart[topicIndex.get(tp.topic())] + tp.partition());
                if (owner[global] != -1)
                    throw new IllegalStateException(tp + " assigned twice");
                owner[global] = m;
            }
        }
        return owner;
    }

    /**
     * Runs {@code assignor.assign} {@code warmups} times untimed (JIT warm-up), then {@code runs} times timed with
     * System.nanoTime; returns the seconds of each timed run.  Each run starts from the same Cluster and
     * GroupSubscription (an unread copy, made untimed) and builds all its own structures, as the group leader does.
     */
    public static double[] time(ConsumerPartitionAssignor assignor, Cluster cluster, GroupSubscription group, int warmups, int runs) throws Exception {
        return timed(() -> {
            GroupSubscription copy = unread(group);
            return () -> assignor.assign(cluster, copy);
        }, warmups, runs);
    }

    /**
     * A copy of {@code group} whose user data buffers are unread: an assignor reading a member's user data
     * (StickyAssignor) consumes its buffer, and the leader calls the assignor once per subscription set, so
     * every repeated call gets its own copy (made outside the timing).
     */
    public static GroupSubscription unread(GroupSubscription group) {
        Map<String, Subscription> copies = new HashMap<>();
        for (Map.Entry<String, Subscription> entry : group.groupSubscription().entrySet()) {
            Subscription s = entry.getValue();
            Subscription copy = new Subscription(s.topics(), s.userData() == null ? null : s.userData().duplicate(),
                s.ownedPartitions(), s.generationId().orElse(-1), s.rackId());
            copy.setGroupInstanceId(s.groupInstanceId());
            copies.put(entry.getKey(), copy);
        }
        return new GroupSubscription(copies);
    }

    /** {@code warmups} untimed then {@code runs} timed calls, each prepared (untimed) by {@code prepare}. */
    private static double[] timed(Callable<Callable<?>> prepare, int warmups, int runs) throws Exception {
        for (int i = 0; i < warmups; i++)
            prepare.call().call();
        double[] seconds = new double[runs];
        for (int i = 0; i < runs; i++) {
            Callable<?> call = prepare.call();
            long start = System.nanoTime();
            call.call();
            seconds[i] = (System.nanoTime() - start) / 1e9;
        }
        return seconds;
    }

    // ------------------------------------------------------------------ KIP-848 server assignors

    /** The topic ids of the topics (position t has id {@code new Uuid(msb[t], lsb[t])}). */
    public static Uuid[] topicIds(long[] msb, long[] lsb) {
        Uuid[] ids = new Uuid[msb.length];
        for (int t = 0; t < msb.length; t++)
            ids[t] = new Uuid(msb[t], lsb[t]);
        return ids;
    }

    /**
     * Topic name <-> id of the cluster's topics (the coordinator's metadata-image lookups), as a
     * {@code TopicIds.TopicResolver}.  A dynamic proxy: the interface's {@code image()} returns the
     * coordinator's metadata image, whose type differs between Kafka releases (a TopicsImage up to 4.1,
     * a CoordinatorMetadataImage from 4.2), so the proxy answers {@code image} with that type's
     * {@code EMPTY} constant, looked up by reflection (TopicIds' equals and hashCode read it), and
     * {@code name} and {@code id} from the topics given.
     */
    static TopicIds.TopicResolver resolver(String[] topics, Uuid[] topicIds) {
        Map<String, Uuid> ids = new HashMap<>();
        Map<Uuid, String> names = new HashMap<>();
        for (int t = 0; t < topics.length; t++) {
            ids.put(topics[t], topicIds[t]);
            names.put(topicIds[t], topics[t]);
        }
        InvocationHandler handler = (proxy, method, args) -> {
            switch (method.getName()) {
                case "name":
                    return names.get(args[0]);
                case "id":
                    return ids.get(args[0]);
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                case "toString":
                    return "TopicResolver" + ids;
                case "image":
                    return method.getReturnType().getField("EMPTY").get(null);
                default: // clear()
                    return null;
            }
        };
        return (TopicIds.TopicResolver) Proxy.newProxyInstance(
            TopicIds.TopicResolver.class.getClassLoader(), new Class<?>[] {TopicIds.TopicResolver.class}, handler);
    }

    /** A SubscribedTopicDescriber over the topics' partition counts (and replica racks when not null). */
    public static SubscribedTopicDescriber describer(Uuid[] topicIds, int[] counts, String[][] partitionRacks, long[] topicStart) {
        Map<Uuid, Integer> position = new HashMap<>();
        for (int t = 0; t < topicIds.length; t++)
            position.put(topicIds[t], t);
        return new SubscribedTopicDescriber() {
            @Override
            public int numPartitions(Uuid topicId) {
                Integer t = position.get(topicId);
                return t == null ? -1 : counts[t];
            }

            @Override
            public Set<String> racksForPartition(Uuid topicId, int partition) {
                Integer t = position.get(topicId);
                if (partitionRacks == null || t == null)
                    return Collections.emptySet();
                return new HashSet<>(Arrays.asList(partitionRacks[(int) (topicStart[t] + partition)]));
            }
        };
    }

    /**
     * The GroupSpec the group coordinator builds for a consumer group (KIP-848, TargetAssignmentBuilder.build);
     * member m subscribes the names of distinct subscription memberSubscription[m] (one list crosses JPype once):
     * members in a HashMap filled in the given order; each member's subscribed topic names in the HashSet
     * ConsumerGroupMember keeps ({@code new HashSet<>(list)}), seen as ids through Kafka's own TopicIds view (names
     * missing from the cluster skipped); each member's current assignment as Assignment.fromRecord replays it (a
     * HashMap of topic id to {@code new HashSet<>(partitions)}, topics put in the given order); the inverted assignment; the subscription type from the topic names
     * (ModernGroup.subscriptionType: homogeneous when every subscribed name has every member).
     */
    public static GroupSpec groupSpec(
        String[] members, String[] instanceIds, String[] racks,
        int[] memberSubscription, int[] subscriptionStart, String[] subscriptionNames,
        String[] topics, Uuid[] topicIds,
        int[] ownedStart, int[] ownedTopic, int[] ownedPartition
    ) {
        TopicIds.TopicResolver resolver = resolver(topics, topicIds);
        Map<String, MemberSubscriptionAndAssignmentImpl> specs = new HashMap<>();
        Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
        Map<String, Integer> nameCounts = new HashMap<>();
        // One name set and TopicIds view per distinct subscription, shared by its members (as Kafka's
        // benchmark shares its topic-name sets): equal sets built alike iterate alike.
        Map<Integer, TopicIds> views = new HashMap<>();
        Map<Integer, Integer> multiplicity = new HashMap<>();
        for (int m = 0; m < members.length; m++)
            multiplicity.merge(memberSubscription[m], 1, Integer::sum);
        for (Map.Entry<Integer, Integer> entry : multiplicity.entrySet()) {
            int d = entry.getKey();
            Set<String> names = new HashSet<>(Arrays.asList(subscriptionNames).subList(subscriptionStart[d], subscriptionStart[d + 1]));
            for (String name : names)
                nameCounts.merge(name, entry.getValue(), Integer::sum);
            views.put(d, new TopicIds(names, resolver));
        }
        for (int m = 0; m < members.length; m++) {
            int d = memberSubscription[m];
            // As Assignment.fromRecord replays a target assignment record: topic by topic (put), each
            // topic's partitions a new HashSet<>(list).
            Map<Uuid, List<Integer>> lists = new LinkedHashMap<>();
            for (int i = ownedStart[m]; i < ownedStart[m + 1]; i++) {
                Uuid id = topicIds[ownedTopic[i]];
                lists.computeIfAbsent(id, key -> new ArrayList<>()).add(ownedPartition[i]);
                inverted.computeIfAbsent(id, key -> new HashMap<>()).put(ownedPartition[i], members[m]);
            }
            Map<Uuid, Set<Integer>> owned = new HashMap<>();
            for (Map.Entry<Uuid, List<Integer>> entry : lists.entrySet())
                owned.put(entry.getKey(), new HashSet<>(entry.getValue()));
            specs.put(members[m], new MemberSubscriptionAndAssignmentImpl(
                Optional.ofNullable(racks[m]), Optional.ofNullable(instanceIds[m]), views.get(d),
                new org.apache.kafka.coordinator.group.modern.Assignment(owned)));
        }
        boolean homogeneous = true;
        for (int count : nameCounts.values())
            homogeneous &= count == members.length;
        SubscriptionType type = homogeneous ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        return new GroupSpecImpl(Collections.unmodifiableMap(specs), type, inverted);
    }

    /** The owner array of a server assignor's answer. */
    public static int[] serverOwners(org.apache.kafka.coordinator.group.api.assignor.GroupAssignment answer,
                                     Uuid[] topicIds, long[] topicStart, String[] members) {
        Map<Uuid, Integer> position = new HashMap<>();
        for (int t = 0; t < topicIds.length; t++)
            position.put(topicIds[t], t);
        int[] owner = new int[(int) topicStart[topicIds.length]];
        Arrays.fill(owner, -1);
        Map<String, MemberAssignment> assignments = answer.members();
        for (int m = 0; m < members.length; m++) {
            MemberAssignment assignment = assignments.get(members[m]);
            if (assignment == null)
                continue;
            for (Map.Entry<Uuid, Set<Integer>> entry : assignment.partitions().entrySet()) {
                int t = position.get(entry.getKey());
                for (int p : entry.getValue()) {
                    int global = (int) (topicStart[t] + p);
                    if (owner[global] != -1)
                        throw new IllegalStateException(t + "-" + p + " assigned twice");
                    owner[global] = m;
                }
            }
        }
        return owner;
    }

    /**
     * Every (member position, global partition id) pair of a server assignor's answer, flattened as
     * {@code m0, g0, m1, g1, ...} in member order: a share group's assignor (KIP-932) may give a partition
     * to several members, so an owner array cannot hold its answer.
     */
    public static int[] serverPairs(org.apache.kafka.coordinator.group.api.assignor.GroupAssignment answer,
                                    Uuid[] topicIds, long[] topicStart, String[] members) {
        Map<Uuid, Integer> position = new HashMap<>();
        for (int t = 0; t < topicIds.length; t++)
            position.put(topicIds[t], t);
        List<Integer> pairs = new ArrayList<>();
        Map<String, MemberAssignment> assignments = answer.members();
        for (int m = 0; m < members.length; m++) {
            MemberAssignment assignment = assignments.get(members[m]);
            if (assignment == null)
                continue;
            for (Map.Entry<Uuid, Set<Integer>> entry : assignment.partitions().entrySet()) {
                int t = position.get(entry.getKey());
                for (int p : entry.getValue()) {
                    pairs.add(m);
                    pairs.add((int) (topicStart[t] + p));
                }
            }
        }
        int[] flat = new int[pairs.size()];
        for (int i = 0; i < flat.length; i++)
            flat[i] = pairs.get(i);
        return flat;
    }

    /** As {@link #time} for a KIP-848 server assignor. */
    public static double[] timeServer(ConsumerGroupPartitionAssignor assignor, GroupSpec spec, SubscribedTopicDescriber describer, int warmups, int runs) throws Exception {
        return timed(() -> () -> assignor.assign(spec, describer), warmups, runs);
    }
}
