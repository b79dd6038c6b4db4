/*
 * Kafka's streams-group task assignor (KIP-1071, the group coordinator's StickyTaskAssignor) on
 * rebalance-lab's array-backed streams groups.  Loaded by peers/kafka_streams.py through JPype;
 * test and benchmark support only.
 *
 * The assignor's input is what the coordinator's streams TargetAssignmentBuilder hands it: a
 * GroupSpecImpl over a HashMap of member id -> MemberMetadataAndStateImpl, filled in the given
 * member order, with the group's assignment configs, and a TopologyDescriber whose subtopologies
 * come in sorted order (TopologyMetadata keeps them in a SortedMap).  The streams assignor API
 * changed between Kafka releases (4.4 moved it to kafka-group-coordinator-api, with member
 * metadata and task offsets), so the classes are reached by name through reflection: this file
 * compiles against every 4.x release the peers build, and runs against those with the 4.4 API.
 *
 * Tasks cross the boundary as flat arrays: subtopology positions and partition numbers, member
 * positions, and each member's tasks as a run (start offsets, one more than the members).
 */
package rebalancelab.peers;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

public final class StreamsPeers {
    private static final String ASSIGNOR_API = "org.apache.kafka.coordinator.group.api.streams.assignor.";
    private static final String ASSIGNOR = "org.apache.kafka.coordinator.group.streams.assignor.";

    private StreamsPeers() {
    }

    private static Class<?> type(String name) throws ClassNotFoundException {
        return Class.forName(name);
    }

    /** A TopologyDescriber: subtopologies sorted by id, each with its task count and statefulness. */
    public static Object topologyDescriber(String[] subtopologies, int[] partitions, boolean[] stateful)
        throws ClassNotFoundException {
        final TreeMap<String, Integer> index = new TreeMap<>();
        for (int s = 0; s < subtopologies.length; s++) {
            index.put(subtopologies[s], s);
        }
        final List<String> sorted = List.copyOf(index.keySet());
        final Class<?> describer = type(ASSIGNOR_API + "TopologyDescriber");
        InvocationHandler handler = (proxy, method, args) -> {
            switch (method.getName()) {
                case "subtopologies":
                    return sorted;
                case "maxNumInputPartitions":
                case "isStateful": {
                    Integer s = index.get((String) args[0]);
                    if (s == null) {
                        throw new NoSuchElementException("Topology does not contain subtopology " + args[0]);
                    }
                    return method.getName().equals("isStateful") ? (Object) stateful[s] : (Object) partitions[s];
                }
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "equals":
                    return proxy == args[0];
                case "toString":
                    return "TopologyDescriber" + sorted;
                default:
                    throw new UnsupportedOperationException(method.getName());
            }
        };
        return Proxy.newProxyInstance(describer.getClassLoader(), new Class<?>[] {describer}, handler);
    }

    private static Map<String, Set<Integer>> tasks(int m, int[] start, int[] sub, int[] part, String[] subtopologies) {
        Map<String, Set<Integer>> tasks = new HashMap<>();
        for (int i = start[m]; i < start[m + 1]; i++) {
            tasks.computeIfAbsent(subtopologies[sub[i]], k -> new HashSet<>()).add(part[i]);
        }
        return tasks;
    }

    private static Map<String, Map<Integer, Long>> offsets(int m, int[] start, int[] sub, int[] part, long[] value,
                                                           String[] subtopologies) {
        Map<String, Map<Integer, Long>> offsets = new HashMap<>();
        for (int i = start[m]; i < start[m + 1]; i++) {
            offsets.computeIfAbsent(subtopologies[sub[i]], k -> new HashMap<>()).put(part[i], value[i]);
        }
        return offsets;
    }

    /**
     * The GroupSpec the coordinator builds: members in a HashMap filled in the given order, each
     * with its process, rack, instance id, client tags, current active / standby / warm-up tasks and
     * reported task offsets and end offsets; configs num.standby.replicas and rack.aware.assignment.tags.
     */
    public static Object groupSpec(
        String[] members, String[] processes, String[] racks, String[] instanceIds,
        int[] tagStart, String[] tagKeys, String[] tagValues,
        String[] subtopologies,
        int[] activeStart, int[] activeSub, int[] activePart,
        int[] standbyStart, int[] standbySub, int[] standbyPart,
        int[] warmupStart, int[] warmupSub, int[] warmupPart,
        int[] offsetStart, int[] offsetSub, int[] offsetPart, long[] offsetValue, long[] endValue,
        int numStandbyReplicas, String[] rackAwareAssignmentTags
    ) throws ReflectiveOperationException {
        Constructor<?> member = type(ASSIGNOR + "MemberMetadataAndStateImpl").getConstructor(
            Optional.class, Optional.class, String.class, Map.class, Map.class, Map.class, Map.class, Map.class, Map.class);
        Map<String, Object> specs = new HashMap<>();
        for (int m = 0; m < members.length; m++) {
            Map<String, String> tags = new HashMap<>();
            for (int i = tagStart[m]; i < tagStart[m + 1]; i++) {
                tags.put(tagKeys[i], tagValues[i]);
            }
            specs.put(members[m], member.newInstance(
                Optional.ofNullable(instanceIds[m]),
                Optional.ofNullable(racks[m]),
                processes[m],
                tags,
                tasks(m, activeStart, activeSub, activePart, subtopologies),
                tasks(m, standbyStart, standbySub, standbyPart, subtopologies),
                tasks(m, warmupStart, warmupSub, warmupPart, subtopologies),
                offsets(m, offsetStart, offsetSub, offsetPart, offsetValue, subtopologies),
                offsets(m, offsetStart, offsetSub, offsetPart, endValue, subtopologies)));
        }
        Object configs = type(ASSIGNOR + "AssignmentConfigsImpl").getConstructor(int.class, List.class)
            .newInstance(numStandbyReplicas, Arrays.asList(rackAwareAssignmentTags));
        Class<?> configsType = type(ASSIGNOR_API + "AssignmentConfigs");
        return type(ASSIGNOR + "GroupSpecImpl").getConstructor(Map.class, configsType).newInstance(specs, configs);
    }

    /** A new StickyTaskAssignor (the streams group's "sticky" assignor). */
    public static Object newStickyAssignor() throws ReflectiveOperationException {
        return type(ASSIGNOR + "StickyTaskAssignor").getConstructor().newInstance();
    }

    /** {@code assignor.assign(groupSpec, describer)}: the GroupAssignment. */
    public static Object assign(Object assignor, Object groupSpec, Object describer) throws ReflectiveOperationException {
        Method assign = type(ASSIGNOR_API + "TaskAssignor").getMethod(
            "assign", type(ASSIGNOR_API + "GroupSpec"), type(ASSIGNOR_API + "TopologyDescriber"));
        try {
            return assign.invoke(assignor, groupSpec, describer);
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            throw e;
        }
    }

    /**
     * A GroupAssignment flattened: four ints per task given to a member, {kind (0 active, 1 standby),
     * member position, subtopology position, partition number}; members missing from the answer
     * have none.
     */
    @SuppressWarnings("unchecked")
    public static int[] flatten(Object groupAssignment, String[] members, String[] subtopologies)
        throws ReflectiveOperationException {
        Map<String, Integer> subIndex = new HashMap<>();
        for (int s = 0; s < subtopologies.length; s++) {
            subIndex.put(subtopologies[s], s);
        }
        Map<String, Object> answer = (Map<String, Object>) groupAssignment.getClass().getMethod("members").invoke(groupAssignment);
        List<Integer> flat = new ArrayList<>();
        for (int m = 0; m < members.length; m++) {
            Object assignment = answer.get(members[m]);
            if (assignment == null) {
                continue;
            }
            String[] kinds = {"activeTasks", "standbyTasks"};
            for (int kind = 0; kind < kinds.length; kind++) {
                Map<String, Set<Integer>> tasks =
                    (Map<String, Set<Integer>>) assignment.getClass().getMethod(kinds[kind]).invoke(assignment);
                for (Map.Entry<String, Set<Integer>> entry : tasks.entrySet()) {
                    Integer s = subIndex.get(entry.getKey());
                    if (s == null) {
                        throw new IllegalStateException("unknown subtopology " + entry.getKey());
                    }
                    for (int partition : entry.getValue()) {
                        flat.add(kind);
                        flat.add(m);
                        flat.add(s);
                        flat.add(partition);
                    }
                }
            }
        }
        return flat.stream().mapToInt(Integer::intValue).toArray();
    }

    /** Seconds of each of {@code runs} timed assign calls on one input, after {@code warmups} untimed ones. */
    public static double[] time(Object assignor, Object groupSpec, Object describer, int warmups, int runs)
        throws ReflectiveOperationException {
        for (int i = 0; i < warmups; i++) {
            assign(assignor, groupSpec, describer);
        }
        double[] seconds = new double[runs];
        for (int i = 0; i < runs; i++) {
            long began = System.nanoTime();
            assign(assignor, groupSpec, describer);
            seconds[i] = (System.nanoTime() - began) / 1e9;
        }
        return seconds;
    }
}
