/*
 * Kafka Streams' client-side task assignors on inputs built from arrays: the
 * HighAvailabilityTaskAssignor (KIP-441, with its standby assignors and KIP-925's
 * RackAwareTaskAssignor) and KIP-924's public StickyTaskAssignor.  Loaded by
 * peers/kafka_streams_client.py through JPype; test and benchmark support only.
 *
 * Clients are processes (ProcessId = the UUID given as two longs), tasks are
 * TaskId(subtopology, partition) given by position; each task's source and changelog
 * topic-partitions are "source-S-K" / "changelog-S-K" partition P, on one broker per rack
 * of the given rack list (a partition with no racks sits on a broker without a rack).
 * An answer is, per client, its active tasks then its standby tasks (task positions).
 */
package rebalancelab.peers;

import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.InternalTopicManager;
import org.apache.kafka.streams.processor.internals.TopologyMetadata.Subtopology;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultKafkaStreamsState;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskInfo;
import org.apache.kafka.streams.processor.internals.assignment.DefaultTaskTopicPartition;
import org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

public final class StreamsClientPeers {
    private StreamsClientPeers() {
    }

    /** One rebalance's inputs, as arrays (see the file comment). */
    public static final class Input {
        public long[] msb;
        public long[] lsb;
        public int[] capacity;
        public String[][] tagKeys;
        public String[][] tagValues;
        /** per client, the rack of each of its members (null: the member has no rack) */
        public String[][] memberRacks;
        public int[] taskSubtopology;
        public int[] taskPartition;
        public boolean[] stateful;
        /** lag[client][task], read for stateful tasks */
        public long[][] lag;
        /** racks[task][k]: the racks of the task's k-th source (changelog) topic-partition, or null */
        public String[][][] sourceRacks;
        public String[][][] changelogRacks;
        public int[][] previousActive;
        public int[][] previousStandby;
        public long acceptableRecoveryLag;
        public int maxWarmupReplicas;
        public int numStandbyReplicas;
        public String[] rackAwareAssignmentTags;
        /** -1: not configured */
        public int trafficCost = -1;
        public int nonOverlapCost = -1;
        public String rackAwareAssignmentStrategy = "none";
    }

    /** Nanoseconds the last {@code highAvailability} or {@code kip924Sticky} call spent in Kafka's assign. */
    public static volatile long lastAssignNanos;

    public static Input newInput() {
        return new Input();
    }

    private static TaskId[] taskIds(Input in) {
        TaskId[] ids = new TaskId[in.taskSubtopology.length];
        for (int t = 0; t < ids.length; t++) {
            ids[t] = new TaskId(in.taskSubtopology[t], in.taskPartition[t]);
        }
        return ids;
    }

    private static ProcessId processId(Input in, int c) {
        return new ProcessId(new UUID(in.msb[c], in.lsb[c]));
    }

    private static Map<String, String> tags(Input in, int c) {
        Map<String, String> tags = new HashMap<>();
        for (int k = 0; k < in.tagKeys[c].length; k++) {
            tags.put(in.tagKeys[c][k], in.tagValues[c][k]);
        }
        return tags;
    }

    private static AssignmentConfigs configs(Input in) {
        return new AssignmentConfigs(
            in.acceptableRecoveryLag,
            in.maxWarmupReplicas,
            in.numStandbyReplicas,
            600000L,
            Arrays.asList(in.rackAwareAssignmentTags),
            in.trafficCost < 0 ? OptionalInt.empty() : OptionalInt.of(in.trafficCost),
            in.nonOverlapCost < 0 ? OptionalInt.empty() : OptionalInt.of(in.nonOverlapCost),
            in.rackAwareAssignmentStrategy
        );
    }

    private static TopicPartition partition(String kind, int subtopology, int k, int partition) {
        return new TopicPartition(kind + "-" + subtopology + "-" + k, partition);
    }

    /** Brokers: one per rack named anywhere, and one without a rack. */
    private static final class Brokers {
        final Map<String, Node> byRack = new TreeMap<>();
        final Node rackless = new Node(0, "localhost", 9092);

        Node[] replicas(String[] racks) {
            if (racks == null || racks.length == 0) {
                return new Node[] {rackless};
            }
            Node[] nodes = new Node[racks.length];
            for (int i = 0; i < racks.length; i++) {
                final String rack = racks[i];
                nodes[i] = byRack.computeIfAbsent(rack, r -> new Node(1 + byRack.size(), "localhost", 9093 + byRack.size(), r));
            }
            return nodes;
        }

        List<Node> all() {
            List<Node> nodes = new ArrayList<>(byRack.values());
            nodes.add(rackless);
            return nodes;
        }
    }

    /** The changelog topics' descriptions, which Kafka asks the admin client for. */
    private static final class DescribedTopics extends InternalTopicManager {
        private final Map<String, List<TopicPartitionInfo>> topics;

        DescribedTopics(Map<String, List<TopicPartitionInfo>> topics) {
            super(Time.SYSTEM, null, new StreamsConfig(streamsProperties()));
            this.topics = topics;
        }

        private static Properties streamsProperties() {
            Properties props = new Properties();
            props.put(StreamsConfig.APPLICATION_ID_CONFIG, "rebalance-lab");
            props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
            return props;
        }

        @Override
        public Map<String, List<TopicPartitionInfo>> getTopicPartitionInfo(final Set<String> wanted) {
            Map<String, List<TopicPartitionInfo>> out = new HashMap<>();
            for (String topic : wanted) {
                List<TopicPartitionInfo> infos = topics.get(topic);
                if (infos != null) {
                    out.put(topic, infos);
                }
            }
            return out;
        }
    }

    /** HighAvailabilityTaskAssignor.assign; rows: actives per client, standbys per client, then {probing}. */
    public static int[][] highAvailability(Input in) {
        int clients = in.msb.length;
        TaskId[] ids = taskIds(in);
        Map<TaskId, Integer> position = new HashMap<>();
        for (int t = 0; t < ids.length; t++) {
            position.put(ids[t], t);
        }
        Set<TaskId> all = new HashSet<>(Arrays.asList(ids));
        Set<TaskId> stateful = new HashSet<>();
        for (int t = 0; t < ids.length; t++) {
            if (in.stateful[t]) {
                stateful.add(ids[t]);
            }
        }
        Map<ProcessId, ClientState> states = new HashMap<>();
        ProcessId[] pids = new ProcessId[clients];
        Map<ProcessId, Map<String, Optional<String>>> racksForProcessConsumer = new HashMap<>();
        for (int c = 0; c < clients; c++) {
            pids[c] = processId(in, c);
            Set<TaskId> prevActive = new HashSet<>();
            for (int t : in.previousActive[c]) {
                prevActive.add(ids[t]);
            }
            Set<TaskId> prevStandby = new HashSet<>();
            for (int t : in.previousStandby[c]) {
                prevStandby.add(ids[t]);
            }
            Map<TaskId, Long> lags = new HashMap<>();
            for (int t = 0; t < ids.length; t++) {
                if (in.stateful[t]) {
                    lags.put(ids[t], in.lag[c][t]);
                }
            }
            states.put(pids[c], new ClientState(prevActive, prevStandby, lags, tags(in, c), in.capacity[c], pids[c]));
            Map<String, Optional<String>> consumers = new HashMap<>();
            for (int m = 0; m < in.memberRacks[c].length; m++) {
                consumers.put("member-" + c + "-" + m, Optional.ofNullable(in.memberRacks[c][m]));
            }
            racksForProcessConsumer.put(pids[c], consumers);
        }
        Brokers brokers = new Brokers();
        Map<TaskId, Set<TopicPartition>> partitionsForTask = new HashMap<>();
        Map<TaskId, Set<TopicPartition>> changelogPartitionsForTask = new HashMap<>();
        Map<Subtopology, Set<TaskId>> tasksForTopicGroup = new HashMap<>();
        List<PartitionInfo> partitionInfos = new ArrayList<>();
        Map<String, List<TopicPartitionInfo>> changelogs = new HashMap<>();
        for (int t = 0; t < ids.length; t++) {
            int s = in.taskSubtopology[t];
            Set<TopicPartition> sources = new HashSet<>();
            for (int k = 0; k < in.sourceRacks[t].length; k++) {
                TopicPartition tp = partition("source", s, k, in.taskPartition[t]);
                Node[] replicas = brokers.replicas(in.sourceRacks[t][k]);
                partitionInfos.add(new PartitionInfo(tp.topic(), tp.partition(), replicas[0], replicas, replicas));
                sources.add(tp);
            }
            partitionsForTask.put(ids[t], sources);
            Set<TopicPartition> changelogSet = new HashSet<>();
            for (int k = 0; k < in.changelogRacks[t].length; k++) {
                TopicPartition tp = partition("changelog", s, k, in.taskPartition[t]);
                Node[] replicas = brokers.replicas(in.changelogRacks[t][k]);
                changelogs.computeIfAbsent(tp.topic(), x -> new ArrayList<>()).add(
                    new TopicPartitionInfo(tp.partition(), replicas[0], Arrays.asList(replicas), Arrays.asList(replicas)));
                changelogSet.add(tp);
            }
            if (!changelogSet.isEmpty()) {
                changelogPartitionsForTask.put(ids[t], changelogSet);
            }
            tasksForTopicGroup.computeIfAbsent(new Subtopology(s, null), x -> new HashSet<>()).add(ids[t]);
        }
        Cluster cluster = new Cluster("rebalance-lab", brokers.all(), partitionInfos, Collections.emptySet(), Collections.emptySet());
        AssignmentConfigs configs = configs(in);
        RackAwareTaskAssignor rack = new RackAwareTaskAssignor(
            cluster, partitionsForTask, changelogPartitionsForTask, tasksForTopicGroup,
            racksForProcessConsumer, new DescribedTopics(changelogs), configs, Time.SYSTEM);
        long began = System.nanoTime();
        boolean probing = new HighAvailabilityTaskAssignor().assign(states, all, stateful, rack, configs);
        lastAssignNanos = System.nanoTime() - began;
        int[][] out = new int[2 * clients + 2][];
        for (int c = 0; c < clients; c++) {
            ClientState state = states.get(pids[c]);
            out[c] = positions(state.activeTasks(), position);
            out[clients + c] = positions(state.standbyTasks(), position);
        }
        out[2 * clients] = new int[] {probing ? 1 : 0};
        out[2 * clients + 1] = new int[] {rack.canEnableRackAwareAssignor() ? 1 : 0};
        return out;
    }

    private static int[] positions(Set<TaskId> tasks, Map<TaskId, Integer> position) {
        int[] out = new int[tasks.size()];
        int i = 0;
        for (TaskId task : new TreeSet<>(tasks)) {
            out[i++] = position.get(task);
        }
        return out;
    }

    /**
     * The ApplicationState StreamsPartitionAssignor builds (DefaultApplicationState's maps): the
     * states without lags, or, when the assignor asks for them (computeTaskLags), the same states
     * with each stateful task's lag (ClientState.lagFor: Task.LATEST_OFFSET for a running active task).
     */
    private static final class State implements ApplicationState {
        private final AssignmentConfigs configs;
        private final Map<TaskId, TaskInfo> tasks;
        private final Map<ProcessId, KafkaStreamsState> clients;
        private final Input in;
        private final ProcessId[] pids;
        private final TaskId[] ids;
        private Map<ProcessId, KafkaStreamsState> withLags;

        State(AssignmentConfigs configs, Map<TaskId, TaskInfo> tasks, Map<ProcessId, KafkaStreamsState> clients,
              Input in, ProcessId[] pids, TaskId[] ids) {
            this.configs = configs;
            this.tasks = Collections.unmodifiableMap(tasks);
            this.clients = clients;
            this.in = in;
            this.pids = pids;
            this.ids = ids;
        }

        @Override
        public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(boolean computeTaskLags) {
            if (!computeTaskLags || in.lag == null) {
                return clients;
            }
            if (withLags == null) {
                withLags = new HashMap<>();
                for (int c = 0; c < pids.length; c++) {
                    KafkaStreamsState state = clients.get(pids[c]);
                    Map<TaskId, Long> lags = new HashMap<>();
                    for (int t = 0; t < ids.length; t++) {
                        if (in.stateful[t]) {
                            lags.put(ids[t], in.lag[c][t]);
                        }
                    }
                    withLags.put(pids[c], new DefaultKafkaStreamsState(
                        pids[c], state.numProcessingThreads(), state.clientTags(), state.previousActiveTasks(),
                        state.previousStandbyTasks(), new TreeMap<>(), Optional.empty(), Optional.of(lags),
                        state.rackId()));
                }
            }
            return withLags;
        }

        @Override
        public AssignmentConfigs assignmentConfigs() {
            return configs;
        }

        @Override
        public Map<TaskId, TaskInfo> allTasks() {
            return tasks;
        }
    }

    /**
     * KIP-924's StickyTaskAssignor.assign; rows: actives per client, standbys per client, then
     * the identity hash code of each task's TaskInfo (Kafka keeps the stateful tasks in a
     * HashSet of TaskInfo, which has no hashCode of its own).
     */
    public static int[][] kip924Sticky(Input in) {
        return kip924(new StickyTaskAssignor(), in);
    }

    /** Any KIP-924 TaskAssignor's assign on {@code in}: the rows of {@link #kip924Sticky}. */
    public static int[][] kip924(TaskAssignor assignor, Input in) {
        int clients = in.msb.length;
        TaskId[] ids = taskIds(in);
        Map<TaskId, Integer> position = new HashMap<>();
        for (int t = 0; t < ids.length; t++) {
            position.put(ids[t], t);
        }
        Runnable noFetch = () -> { };
        Map<TaskId, TaskInfo> tasks = new HashMap<>();
        int[] identity = new int[ids.length];
        for (int t = 0; t < ids.length; t++) {
            int s = in.taskSubtopology[t];
            Set<TaskTopicPartition> partitions = new HashSet<>();
            for (int k = 0; k < in.sourceRacks[t].length; k++) {
                DefaultTaskTopicPartition tp = new DefaultTaskTopicPartition(partition("source", s, k, in.taskPartition[t]), true, false, noFetch);
                if (in.sourceRacks[t][k] != null && in.sourceRacks[t][k].length > 0) {
                    tp.annotateWithRackIds(new HashSet<>(Arrays.asList(in.sourceRacks[t][k])));
                }
                partitions.add(tp);
            }
            for (int k = 0; k < in.changelogRacks[t].length; k++) {
                DefaultTaskTopicPartition tp = new DefaultTaskTopicPartition(partition("changelog", s, k, in.taskPartition[t]), false, true, noFetch);
                if (in.changelogRacks[t][k] != null && in.changelogRacks[t][k].length > 0) {
                    tp.annotateWithRackIds(new HashSet<>(Arrays.asList(in.changelogRacks[t][k])));
                }
                partitions.add(tp);
            }
            Set<String> stores = in.stateful[t] ? Collections.singleton("store-" + s) : Collections.emptySet();
            DefaultTaskInfo info = new DefaultTaskInfo(ids[t], in.stateful[t], stores, partitions);
            identity[t] = System.identityHashCode(info);
            tasks.put(ids[t], info);
        }
        Map<ProcessId, KafkaStreamsState> states = new HashMap<>();
        ProcessId[] pids = new ProcessId[clients];
        for (int c = 0; c < clients; c++) {
            pids[c] = processId(in, c);
            TreeSet<TaskId> prevActive = new TreeSet<>();
            for (int t : in.previousActive[c]) {
                prevActive.add(ids[t]);
            }
            TreeSet<TaskId> prevStandby = new TreeSet<>();
            for (int t : in.previousStandby[c]) {
                prevStandby.add(ids[t]);
            }
            String rack = in.memberRacks[c].length > 0 ? in.memberRacks[c][0] : null;
            states.put(pids[c], new DefaultKafkaStreamsState(
                pids[c], in.capacity[c], tags(in, c), prevActive, prevStandby, new TreeMap<>(),
                Optional.empty(), Optional.empty(), Optional.ofNullable(rack)));
        }
        State application = new State(configs(in), tasks, states, in, pids, ids);
        long began = System.nanoTime();
        TaskAssignor.TaskAssignment assignment = assignor.assign(application);
        lastAssignNanos = System.nanoTime() - began;
        Map<ProcessId, KafkaStreamsAssignment> byClient = new LinkedHashMap<>();
        for (KafkaStreamsAssignment a : assignment.assignment()) {
            byClient.put(a.processId(), a);
        }
        int[][] out = new int[2 * clients + 1][];
        for (int c = 0; c < clients; c++) {
            Set<TaskId> active = new TreeSet<>();
            Set<TaskId> standby = new TreeSet<>();
            KafkaStreamsAssignment a = byClient.get(pids[c]);
            if (a != null) {
                for (KafkaStreamsAssignment.AssignedTask task : a.tasks().values()) {
                    (task.type() == KafkaStreamsAssignment.AssignedTask.Type.ACTIVE ? active : standby).add(task.id());
                }
            }
            out[c] = positions(active, position);
            out[clients + c] = positions(standby, position);
        }
        out[2 * clients] = identity;
        return out;
    }
}
