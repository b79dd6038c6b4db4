/*
 * A Kafka Streams client-side TaskAssignor (KIP-924: task.assignor.class,
 * org.apache.kafka.streams.processor.assignment.TaskAssignor) on a streams-group document
 * (docs/formats.md), on the ApplicationState Kafka Streams' StreamsPartitionAssignor builds: the
 * input heuristics/streams/streams_ha_input.py's streams_input describes, built here from the
 * document and handed to StreamsClientPeers.kip924 (the builder the equality tests run on):
 *
 * - clients are the document's processes, each a ProcessId: the process id when it is a UUID, else
 *   UUID.nameUUIDFromBytes of it; put in the state map in the order of those UUIDs; a client's
 *   threads are its members' threads, its client tags its members' (they agree), its rack its
 *   first member's rack;
 * - a task is TaskId(s, p), s the subtopology's position in the document; its TaskInfo holds
 *   partition p of each source topic of the subtopology's partition_racks, annotated with that
 *   partition's racks (one source topic-partition without racks when the document names none),
 *   and for a stateful task one changelog topic-partition on the union of those racks (no racks
 *   when any source partition's are unknown);
 * - previous tasks: the process's members' active tasks, and their standbys and warm-ups (both
 *   standbys to Kafka) other than the process's own active ones;
 * - task lags (given when the assignor asks, computeTaskLags): Task.LATEST_OFFSET (-2) for a task
 *   the process runs active, the process's lag where it has state, else the task's whole changelog
 *   (the largest lag any process reports);
 * - AssignmentConfigs from the document's configs (Kafka's defaults where it gives none).
 *
 * Kafka's assignor stops at processes; each process's tasks are spread over its members by the
 * lab's rule (heuristics.streams.streams_ha_input.to_members), and the answer is the streams
 * assignment of docs/formats.md.  Its info adds "task_info_hashes": each task's TaskInfo identity
 * hash code in this run (Kafka keeps TaskInfos in a HashSet whose order follows them).
 */
package rebalancelab.peers;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.TreeSet;
import java.util.UUID;

final class StreamsClientRun {
    private StreamsClientRun() {
    }

    static final long NO_STATE = -1;
    static final long LATEST_OFFSET = -2;

    /** The ProcessId's UUID of a process named {@code name} (as streams_ha_order.process_uuid). */
    static UUID processUuid(String name) {
        String hex = name.replace("urn:", "").replace("uuid:", "");
        int from = 0;
        int to = hex.length();
        while (from < to && (hex.charAt(from) == '{' || hex.charAt(from) == '}'))
            from++;
        while (to > from && (hex.charAt(to - 1) == '{' || hex.charAt(to - 1) == '}'))
            to--;
        hex = hex.substring(from, to).replace("-", "");
        if (hex.length() == 32 && hex.chars().allMatch(ch -> Character.digit(ch, 16) >= 0)) {
            return new UUID(Long.parseUnsignedLong(hex.substring(0, 16), 16),
                Long.parseUnsignedLong(hex.substring(16), 16));
        }
        return UUID.nameUUIDFromBytes(name.getBytes(StandardCharsets.UTF_8));
    }

    /** The document read into arrays (members, processes, tasks). */
    static final class Document {
        String[] subs;
        int[] taskStart;
        boolean[] subStateful;
        int tasks;
        String[] members;
        int[] memberProcess;
        int[] threads;
        String[] racks;
        List<Map<String, String>> tags = new ArrayList<>();
        List<String> processes = new ArrayList<>();
        int[] prevActive;
        List<int[]> prevStandby = new ArrayList<>(); // {task, member}, standbys then warm-ups
        long[][] processLag;
        String[][][] sourceRacks;

        int subOf(int t) {
            int s = Arrays.binarySearch(taskStart, t);
            if (s < 0)
                return -s - 2;
            while (s + 1 < taskStart.length && taskStart[s + 1] == t)
                s++;
            return s;
        }
    }

    static Document read(JsonNode problem) {
        Document d = new Document();
        JsonNode subsNode = problem.path("subtopologies");
        int subCount = subsNode.size();
        d.subs = new String[subCount];
        d.subStateful = new boolean[subCount];
        d.taskStart = new int[subCount + 1];
        Map<String, Integer> subIndex = new HashMap<>();
        List<Map<String, JsonNode>> rackTopics = new ArrayList<>();
        int s = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = subsNode.fields(); it.hasNext(); s++) {
            Map.Entry<String, JsonNode> entry = it.next();
            d.subs[s] = entry.getKey();
            d.subStateful[s] = entry.getValue().path("stateful").asBoolean(false);
            d.taskStart[s + 1] = d.taskStart[s] + entry.getValue().path("partitions").asInt();
            subIndex.put(d.subs[s], s);
            Map<String, JsonNode> topics = new LinkedHashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> t = entry.getValue().path("partition_racks").fields(); t.hasNext(); ) {
                Map.Entry<String, JsonNode> topic = t.next();
                if (topic.getValue().size() > 0) // a topic without partitions names no source partition
                    topics.put(topic.getKey(), topic.getValue());
            }
            rackTopics.add(topics);
        }
        d.tasks = d.taskStart[subCount];
        // each task's source topic-partitions: partition p of each topic (null: racks unknown)
        d.sourceRacks = new String[d.tasks][][];
        for (s = 0; s < subCount; s++) {
            Map<String, JsonNode> topics = rackTopics.get(s);
            for (int t = d.taskStart[s]; t < d.taskStart[s + 1]; t++) {
                int p = t - d.taskStart[s];
                if (topics.isEmpty()) {
                    d.sourceRacks[t] = new String[][] {null};
                    continue;
                }
                d.sourceRacks[t] = new String[topics.size()][];
                int k = 0;
                for (JsonNode lists : topics.values()) {
                    TreeSet<String> racks = new TreeSet<>();
                    if (p < lists.size())
                        for (JsonNode rack : lists.get(p))
                            racks.add(rack.asText());
                    d.sourceRacks[t][k++] = racks.isEmpty() ? null : racks.toArray(new String[0]);
                }
            }
        }
        JsonNode membersNode = problem.path("members");
        int n = membersNode.size();
        d.members = new String[n];
        d.memberProcess = new int[n];
        d.threads = new int[n];
        d.racks = new String[n];
        d.prevActive = new int[d.tasks];
        Arrays.fill(d.prevActive, -1);
        Map<String, Integer> processIndex = new HashMap<>();
        Map<Integer, long[]> lags = new HashMap<>();
        List<int[]> warmups = new ArrayList<>();
        for (int m = 0; m < n; m++) {
            JsonNode member = membersNode.get(m);
            d.members[m] = member.path("id").asText();
            String process = member.path("process").asText();
            Integer p = processIndex.get(process);
            if (p == null) {
                p = d.processes.size();
                processIndex.put(process, p);
                d.processes.add(process);
            }
            d.memberProcess[m] = p;
            d.threads[m] = member.path("threads").asInt(1);
            d.racks[m] = member.hasNonNull("rack") ? member.get("rack").asText() : null;
            Map<String, String> tags = new LinkedHashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = member.path("client_tags").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> tag = it.next();
                tags.put(tag.getKey(), tag.getValue().asText());
            }
            d.tags.add(tags);
            for (int t : tasks(member.path("active"), subIndex, d.taskStart))
                d.prevActive[t] = m;
            for (int t : tasks(member.path("standby"), subIndex, d.taskStart))
                d.prevStandby.add(new int[] {t, m});
            for (int t : tasks(member.path("warmup"), subIndex, d.taskStart))
                warmups.add(new int[] {t, m});
            for (Iterator<Map.Entry<String, JsonNode>> it = member.path("lags").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> entry = it.next();
                Integer sub = subIndex.get(entry.getKey());
                if (sub == null)
                    continue;
                long[] lag = lags.computeIfAbsent(p, k -> new long[0]);
                if (lag.length == 0) {
                    lag = new long[d.tasks];
                    Arrays.fill(lag, NO_STATE);
                    lags.put(p, lag);
                }
                int count = d.taskStart[sub + 1] - d.taskStart[sub];
                for (int k = 0; k < Math.min(count, entry.getValue().size()); k++)
                    lag[d.taskStart[sub] + k] = entry.getValue().get(k).asLong();
            }
        }
        d.prevStandby.addAll(warmups);
        d.processLag = new long[d.processes.size()][];
        for (int p = 0; p < d.processLag.length; p++) {
            long[] lag = lags.get(p);
            if (lag == null) {
                lag = new long[d.tasks];
                Arrays.fill(lag, NO_STATE);
            }
            for (s = 0; s < subCount; s++)
                if (!d.subStateful[s])
                    Arrays.fill(lag, d.taskStart[s], d.taskStart[s + 1], 0);
            d.processLag[p] = lag;
        }
        return d;
    }

    private static List<Integer> tasks(JsonNode node, Map<String, Integer> subIndex, int[] taskStart) {
        List<Integer> out = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            Integer sub = subIndex.get(entry.getKey());
            if (sub == null)
                continue;
            for (JsonNode partition : entry.getValue())
                out.add(taskStart[sub] + partition.asInt());
        }
        return out;
    }

    /** The assignors' input (StreamsClientPeers.Input) of {@code d}; {@code order[c]}: client c's process. */
    static StreamsClientPeers.Input input(Document d, JsonNode configs, int[] order) {
        int clients = order.length;
        int[] rank = new int[clients];
        for (int c = 0; c < clients; c++)
            rank[order[c]] = c;
        StreamsClientPeers.Input in = new StreamsClientPeers.Input();
        in.msb = new long[clients];
        in.lsb = new long[clients];
        in.capacity = new int[clients];
        in.tagKeys = new String[clients][];
        in.tagValues = new String[clients][];
        in.memberRacks = new String[clients][];
        List<List<Integer>> membersOf = membersOf(d, order);
        for (int c = 0; c < clients; c++) {
            UUID id = processUuid(d.processes.get(order[c]));
            in.msb[c] = id.getMostSignificantBits();
            in.lsb[c] = id.getLeastSignificantBits();
            List<Integer> members = membersOf.get(c);
            Map<String, String> tags = members.isEmpty() ? Map.of() : d.tags.get(members.get(0));
            in.tagKeys[c] = tags.keySet().toArray(new String[0]);
            in.tagValues[c] = tags.values().toArray(new String[0]);
            in.memberRacks[c] = new String[members.size()];
            for (int i = 0; i < members.size(); i++) {
                in.capacity[c] += d.threads[members.get(i)];
                in.memberRacks[c][i] = d.racks[members.get(i)];
            }
        }
        in.taskSubtopology = new int[d.tasks];
        in.taskPartition = new int[d.tasks];
        in.stateful = new boolean[d.tasks];
        in.changelogRacks = new String[d.tasks][][];
        for (int t = 0; t < d.tasks; t++) {
            int s = d.subOf(t);
            in.taskSubtopology[t] = s;
            in.taskPartition[t] = t - d.taskStart[s];
            in.stateful[t] = d.subStateful[s];
            if (!in.stateful[t]) {
                in.changelogRacks[t] = new String[0][];
                continue;
            }
            TreeSet<String> union = new TreeSet<>();
            boolean known = true;
            for (String[] racks : d.sourceRacks[t]) {
                if (racks == null)
                    known = false;
                else
                    union.addAll(Arrays.asList(racks));
            }
            in.changelogRacks[t] = new String[][] {known ? union.toArray(new String[0]) : null};
        }
        in.sourceRacks = d.sourceRacks;
        // previous tasks: the active process's, and the other processes holding a standby or warm-up
        int[] activeProcess = new int[d.tasks];
        List<List<Integer>> previousActive = new ArrayList<>();
        List<TreeSet<Integer>> previousStandby = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            previousActive.add(new ArrayList<>());
            previousStandby.add(new TreeSet<>());
        }
        for (int t = 0; t < d.tasks; t++) {
            activeProcess[t] = d.prevActive[t] < 0 ? -1 : d.memberProcess[d.prevActive[t]];
            if (activeProcess[t] >= 0)
                previousActive.get(rank[activeProcess[t]]).add(t);
        }
        for (int[] pair : d.prevStandby) {
            int p = d.memberProcess[pair[1]];
            if (p != activeProcess[pair[0]])
                previousStandby.get(rank[p]).add(pair[0]);
        }
        in.previousActive = new int[clients][];
        in.previousStandby = new int[clients][];
        for (int c = 0; c < clients; c++) {
            in.previousActive[c] = previousActive.get(c).stream().mapToInt(Integer::intValue).toArray();
            in.previousStandby[c] = previousStandby.get(c).stream().mapToInt(Integer::intValue).toArray();
        }
        // lags: a running active task's, the process's own, or the task's whole changelog
        long[] full = new long[d.tasks];
        for (long[] lag : d.processLag)
            for (int t = 0; t < d.tasks; t++)
                full[t] = Math.max(full[t], lag[t]);
        in.lag = new long[clients][d.tasks];
        for (int c = 0; c < clients; c++) {
            long[] lag = d.processLag[order[c]];
            for (int t = 0; t < d.tasks; t++) {
                if (!in.stateful[t])
                    in.lag[c][t] = 0;
                else if (activeProcess[t] == order[c])
                    in.lag[c][t] = LATEST_OFFSET;
                else
                    in.lag[c][t] = lag[t] >= 0 ? lag[t] : full[t];
            }
        }
        in.numStandbyReplicas = configs.path("num_standby_replicas").asInt(0);
        in.acceptableRecoveryLag = configs.path("acceptable_recovery_lag").asLong(10000);
        in.maxWarmupReplicas = configs.path("max_warmup_replicas").asInt(2);
        List<String> rackTags = new ArrayList<>();
        for (JsonNode tag : configs.path("rack_aware_assignment_tags"))
            rackTags.add(tag.asText());
        in.rackAwareAssignmentTags = rackTags.toArray(new String[0]);
        in.rackAwareAssignmentStrategy = configs.path("rack_aware_assignment_strategy").asText("none");
        in.trafficCost = configs.hasNonNull("traffic_cost") ? configs.get("traffic_cost").asInt() : -1;
        in.nonOverlapCost = configs.hasNonNull("non_overlap_cost") ? configs.get("non_overlap_cost").asInt() : -1;
        return in;
    }

    /** Each client's members, in document order. */
    static List<List<Integer>> membersOf(Document d, int[] order) {
        int[] rank = new int[order.length];
        for (int c = 0; c < order.length; c++)
            rank[order[c]] = c;
        List<List<Integer>> out = new ArrayList<>();
        for (int c = 0; c < order.length; c++)
            out.add(new ArrayList<>());
        for (int m = 0; m < d.members.length; m++)
            out.get(rank[d.memberProcess[m]]).add(m);
        return out;
    }

    /** The processes in the order of their UUIDs (ProcessId's order: UUID.compareTo). */
    static int[] order(Document d) {
        UUID[] ids = new UUID[d.processes.size()];
        Integer[] order = new Integer[ids.length];
        for (int p = 0; p < ids.length; p++) {
            ids[p] = processUuid(d.processes.get(p));
            order[p] = p;
        }
        Arrays.sort(order, Comparator.comparing((Integer p) -> ids[p]));
        return Arrays.stream(order).mapToInt(Integer::intValue).toArray();
    }

    static void assign(Class<?> type, JsonNode problem, JsonGenerator out) throws Exception {
        long began = System.nanoTime();
        Document d = read(problem);
        int[] order = order(d);
        StreamsClientPeers.Input in = input(d, problem.path("configs"), order);
        TaskAssignor assignor = (TaskAssignor) type.getConstructor().newInstance();
        assignor.configure(streamsConfigs(in));
        long built = System.nanoTime();
        int[][] rows = StreamsClientPeers.kip924(assignor, in);
        long assignNanos = StreamsClientPeers.lastAssignNanos;
        int clients = order.length;
        int[] owner = new int[d.tasks];
        Arrays.fill(owner, -1);
        List<int[]> standbys = new ArrayList<>();
        spread(d, order, rows, owner, standbys);
        // member -> kind -> subtopology -> partitions
        List<Map<String, TreeSet<Integer>>> active = new ArrayList<>();
        List<Map<String, TreeSet<Integer>>> standby = new ArrayList<>();
        for (int m = 0; m < d.members.length; m++) {
            active.add(new LinkedHashMap<>());
            standby.add(new LinkedHashMap<>());
        }
        for (int t = 0; t < d.tasks; t++) {
            if (owner[t] >= 0) {
                int s = d.subOf(t);
                active.get(owner[t]).computeIfAbsent(d.subs[s], k -> new TreeSet<>()).add(t - d.taskStart[s]);
            }
        }
        for (int[] pair : standbys) {
            int s = d.subOf(pair[0]);
            standby.get(pair[1]).computeIfAbsent(d.subs[s], k -> new TreeSet<>()).add(pair[0] - d.taskStart[s]);
        }
        out.writeStartObject();
        out.writeFieldName("assignment");
        out.writeStartObject();
        for (int m = 0; m < d.members.length; m++) {
            out.writeFieldName(d.members[m]);
            out.writeStartObject();
            writeKind(out, "active", active.get(m), d);
            writeKind(out, "standby", standby.get(m), d);
            out.writeEndObject();
        }
        out.writeEndObject();
        out.writeStringField("status", "heuristic");
        out.writeFieldName("info");
        out.writeStartObject();
        out.writeNumberField("assign_seconds", assignNanos / 1e9);
        out.writeNumberField("input_seconds", (built - began) / 1e9);
        out.writeFieldName("task_info_hashes");
        out.writeArray(rows[2 * clients], 0, rows[2 * clients].length);
        out.writeEndObject();
        out.writeEndObject();
    }

    private static void writeKind(JsonGenerator out, String kind, Map<String, TreeSet<Integer>> bySub, Document d)
        throws java.io.IOException {
        out.writeFieldName(kind);
        out.writeStartObject();
        for (String sub : d.subs) {
            TreeSet<Integer> partitions = bySub.get(sub);
            if (partitions == null)
                continue;
            out.writeFieldName(sub);
            out.writeStartArray();
            for (int p : partitions)
                out.writeNumber(p);
            out.writeEndArray();
        }
        out.writeEndObject();
    }

    /** The configs a Streams application hands its task assignor (StreamsConfig names). */
    private static Map<String, Object> streamsConfigs(StreamsClientPeers.Input in) {
        Map<String, Object> configs = new HashMap<>();
        configs.put("num.standby.replicas", in.numStandbyReplicas);
        configs.put("acceptable.recovery.lag", in.acceptableRecoveryLag);
        configs.put("max.warmup.replicas", in.maxWarmupReplicas);
        configs.put("rack.aware.assignment.tags", Arrays.asList(in.rackAwareAssignmentTags));
        configs.put("rack.aware.assignment.strategy", in.rackAwareAssignmentStrategy);
        if (in.trafficCost >= 0)
            configs.put("rack.aware.assignment.traffic_cost", in.trafficCost);
        if (in.nonOverlapCost >= 0)
            configs.put("rack.aware.assignment.non_overlap_cost", in.nonOverlapCost);
        return configs;
    }

    /**
     * Each client's tasks over its process's members (heuristics.streams.streams_ha_input.to_members):
     * kind by kind (stateful actives, standbys, stateless actives, each in task order) a task stays
     * with a member that held it (as an active task for an active task, as any replica for a standby),
     * first in document order, while that member has fewer tasks than its share (ceil of the
     * process's tasks so far times its threads over the process's threads); every other task goes
     * to the member with the fewest tasks per thread (ties: document order).
     */
    static void spread(Document d, int[] order, int[][] rows, int[] owner, List<int[]> standbys) {
        int clients = order.length;
        Map<Integer, TreeSet<Integer>> prevReplica = new HashMap<>();
        for (int[] pair : d.prevStandby)
            prevReplica.computeIfAbsent(pair[0], k -> new TreeSet<>()).add(pair[1]);
        List<List<Integer>> membersOf = membersOf(d, order);
        int[] load = new int[d.members.length];
        for (int c = 0; c < clients; c++) {
            List<Integer> members = membersOf.get(c);
            if (members.isEmpty())
                continue;
            int total = 0;
            for (int m : members)
                total += d.threads[m];
            Map<Integer, Integer> position = new HashMap<>();
            for (int i = 0; i < members.size(); i++)
                position.put(members.get(i), i);
            // (tasks per thread, position), compared exactly: a/b < c/d as a*d < c*b
            PriorityQueue<Integer> least = new PriorityQueue<>((a, b) -> {
                int ma = members.get(a);
                int mb = members.get(b);
                int cmp = Long.compare((long) load[ma] * d.threads[mb], (long) load[mb] * d.threads[ma]);
                return cmp != 0 ? cmp : Integer.compare(a, b);
            });
            for (int i = 0; i < members.size(); i++)
                least.add(i);
            int[] activeTasks = rows[c];
            int[] standbyTasks = rows[clients + c];
            List<int[]> kinds = new ArrayList<>(); // {task, 1 active / 0 standby}
            for (int t : sortedCopy(activeTasks))
                if (isStateful(d, t))
                    kinds.add(new int[] {t, 1});
            for (int t : sortedCopy(standbyTasks))
                kinds.add(new int[] {t, 0});
            for (int t : sortedCopy(activeTasks))
                if (!isStateful(d, t))
                    kinds.add(new int[] {t, 1});
            int soFar = 0;
            for (int[] entry : kinds) {
                int t = entry[0];
                boolean isActive = entry[1] == 1;
                soFar++;
                TreeSet<Integer> before = new TreeSet<>();
                if (isActive) {
                    if (d.prevActive[t] >= 0 && position.containsKey(d.prevActive[t]))
                        before.add(position.get(d.prevActive[t]));
                } else {
                    for (int m : prevReplica.getOrDefault(t, new TreeSet<>()))
                        if (position.containsKey(m))
                            before.add(position.get(m));
                    if (d.prevActive[t] >= 0 && position.containsKey(d.prevActive[t]))
                        before.add(position.get(d.prevActive[t]));
                }
                int chosen = -1;
                for (int i : before) {
                    int m = members.get(i);
                    long share = ((long) soFar * d.threads[m] + total - 1) / total;
                    if (load[m] < share) {
                        chosen = i;
                        break;
                    }
                }
                if (chosen < 0)
                    chosen = least.peek();
                least.remove(chosen);
                load[members.get(chosen)]++;
                least.add(chosen);
                int m = members.get(chosen);
                if (isActive)
                    owner[t] = m;
                else
                    standbys.add(new int[] {t, m});
            }
        }
    }

    private static boolean isStateful(Document d, int t) {
        return d.subStateful[d.subOf(t)];
    }

    private static int[] sortedCopy(int[] values) {
        int[] copy = values.clone();
        Arrays.sort(copy);
        return copy;
    }
}
