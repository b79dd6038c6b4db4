/*
 * A streams-group task assignor (KIP-1071: the group coordinator's TaskAssignor interface of
 * Kafka 4.4, org.apache.kafka.coordinator.group.api.streams.assignor) on a streams-group document
 * (docs/formats.md), as the coordinator's streams TargetAssignmentBuilder hands it its input
 * (StreamsPeers.groupSpec and StreamsPeers.topologyDescriber): members in the document's order
 * with their process, rack, client tags and current active, standby and warm-up tasks; each
 * member's task offsets as its process reports them, derived from the document's lags as
 * heuristics.streams.streams_sticky.task_offset_sums derives them (end[t] = 1 + the largest lag any
 * process reports for t; offset = end[t] - lag where the process has state); the configs
 * num_standby_replicas and rack_aware_assignment_tags.
 */
package rebalancelab.peers;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

final class StreamsAssignorRun {
    private StreamsAssignorRun() {
    }

    /** Flat runs of tasks per member: start offsets (one more than the members), subtopology and partition. */
    private static final class Runs {
        final List<Integer> sub = new ArrayList<>();
        final List<Integer> part = new ArrayList<>();
        final int[] start;

        Runs(int members) {
            start = new int[members + 1];
        }

        void close(int m) {
            start[m + 1] = sub.size();
        }

        int[] subs() {
            return sub.stream().mapToInt(Integer::intValue).toArray();
        }

        int[] parts() {
            return part.stream().mapToInt(Integer::intValue).toArray();
        }
    }

    static void group(Class<?> type, JsonNode problem, JsonGenerator out) throws Exception {
        JsonNode subsNode = problem.path("subtopologies");
        int subCount = subsNode.size();
        String[] subs = new String[subCount];
        int[] partitions = new int[subCount];
        boolean[] stateful = new boolean[subCount];
        int[] taskStart = new int[subCount + 1];
        Map<String, Integer> subIndex = new HashMap<>();
        int s = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = subsNode.fields(); it.hasNext(); s++) {
            Map.Entry<String, JsonNode> entry = it.next();
            subs[s] = entry.getKey();
            partitions[s] = entry.getValue().path("partitions").asInt();
            stateful[s] = entry.getValue().path("stateful").asBoolean(false);
            taskStart[s + 1] = taskStart[s] + partitions[s];
            subIndex.put(subs[s], s);
        }
        int tasks = taskStart[subCount];
        JsonNode membersNode = problem.path("members");
        int n = membersNode.size();
        String[] members = new String[n];
        String[] processOf = new String[n];
        String[] racks = new String[n];
        int[] tagStart = new int[n + 1];
        List<String> tagKeys = new ArrayList<>();
        List<String> tagValues = new ArrayList<>();
        Map<String, Integer> processIndex = new LinkedHashMap<>();
        int[] memberProcess = new int[n];
        Runs active = new Runs(n);
        Runs standby = new Runs(n);
        Runs warmup = new Runs(n);
        Map<Integer, long[]> lags = new HashMap<>(); // process -> lag per task (-1: no state)
        for (int m = 0; m < n; m++) {
            JsonNode member = membersNode.get(m);
            members[m] = member.path("id").asText();
            processOf[m] = member.path("process").asText();
            racks[m] = member.hasNonNull("rack") ? member.get("rack").asText() : null;
            memberProcess[m] = processIndex.computeIfAbsent(processOf[m], k -> processIndex.size());
            TreeMap<String, String> tags = new TreeMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = member.path("client_tags").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> tag = it.next();
                tags.put(tag.getKey(), tag.getValue().asText());
            }
            tagKeys.addAll(tags.keySet());
            tagValues.addAll(tags.values());
            tagStart[m + 1] = tagKeys.size();
            read(member.path("active"), subIndex, active);
            active.close(m);
            read(member.path("standby"), subIndex, standby);
            standby.close(m);
            read(member.path("warmup"), subIndex, warmup);
            warmup.close(m);
            long[] lag = lags.computeIfAbsent(memberProcess[m], k -> {
                long[] none = new long[tasks];
                java.util.Arrays.fill(none, -1);
                return none;
            });
            for (Iterator<Map.Entry<String, JsonNode>> it = member.path("lags").fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> entry = it.next();
                Integer sub = subIndex.get(entry.getKey());
                if (sub == null)
                    continue;
                for (int k = 0; k < Math.min(partitions[sub], entry.getValue().size()); k++)
                    lag[taskStart[sub] + k] = entry.getValue().get(k).asLong();
            }
        }
        // task_offset_sums: end[t] = 1 + the largest lag any process reports (0 when none does)
        long[] end = new long[tasks];
        for (int t = 0; t < tasks; t++) {
            long largest = 0;
            for (long[] lag : lags.values())
                largest = Math.max(largest, lag[t]);
            end[t] = largest + 1;
        }
        boolean[] taskStateful = new boolean[tasks];
        for (s = 0; s < subCount; s++)
            for (int t = taskStart[s]; t < taskStart[s + 1]; t++)
                taskStateful[t] = stateful[s];
        Runs reported = new Runs(n);
        List<Long> values = new ArrayList<>();
        List<Long> ends = new ArrayList<>();
        for (int m = 0; m < n; m++) {
            long[] lag = lags.get(memberProcess[m]);
            for (s = 0; s < subCount; s++) {
                for (int t = taskStart[s]; t < taskStart[s + 1]; t++) {
                    if (!taskStateful[t] || lag[t] == -1)
                        continue;
                    reported.sub.add(s);
                    reported.part.add(t - taskStart[s]);
                    values.add(end[t] - lag[t]);
                    ends.add(end[t]);
                }
            }
            reported.close(m);
        }
        JsonNode configs = problem.path("configs");
        int standbys = configs.path("num_standby_replicas").asInt(0);
        List<String> rackTags = new ArrayList<>();
        for (JsonNode tag : configs.path("rack_aware_assignment_tags"))
            rackTags.add(tag.asText());
        long began = System.nanoTime();
        Object spec = StreamsPeers.groupSpec(members, processOf, racks, new String[n],
            tagStart, tagKeys.toArray(new String[0]), tagValues.toArray(new String[0]), subs,
            active.start, active.subs(), active.parts(), standby.start, standby.subs(), standby.parts(),
            warmup.start, warmup.subs(), warmup.parts(), reported.start, reported.subs(), reported.parts(),
            values.stream().mapToLong(Long::longValue).toArray(), ends.stream().mapToLong(Long::longValue).toArray(),
            standbys, rackTags.toArray(new String[0]));
        Object describer = StreamsPeers.topologyDescriber(subs, partitions, stateful);
        Object assignor = type.getConstructor().newInstance();
        long start = System.nanoTime();
        Object result = StreamsPeers.assign(assignor, spec, describer);
        long assigned = System.nanoTime();
        int[] flat = StreamsPeers.flatten(result, members, subs);
        // member -> kind -> subtopology -> partitions
        List<Map<String, Map<String, List<Integer>>>> byMember = new ArrayList<>();
        for (int m = 0; m < n; m++) {
            Map<String, Map<String, List<Integer>>> kinds = new LinkedHashMap<>();
            kinds.put("active", new TreeMap<>());
            kinds.put("standby", new TreeMap<>());
            byMember.add(kinds);
        }
        for (int i = 0; i < flat.length; i += 4) {
            String kind = flat[i] == 0 ? "active" : "standby";
            byMember.get(flat[i + 1]).get(kind).computeIfAbsent(subs[flat[i + 2]], k -> new ArrayList<>()).add(flat[i + 3]);
        }
        out.writeStartObject();
        out.writeFieldName("assignment");
        out.writeStartObject();
        for (int m = 0; m < n; m++) {
            out.writeFieldName(members[m]);
            out.writeStartObject();
            for (Map.Entry<String, Map<String, List<Integer>>> kind : byMember.get(m).entrySet()) {
                out.writeFieldName(kind.getKey());
                out.writeStartObject();
                for (Map.Entry<String, List<Integer>> sub : kind.getValue().entrySet()) {
                    sub.getValue().sort(null);
                    out.writeFieldName(sub.getKey());
                    out.writeStartArray();
                    for (int p : sub.getValue())
                        out.writeNumber(p);
                    out.writeEndArray();
                }
                out.writeEndObject();
            }
            out.writeEndObject();
        }
        out.writeEndObject();
        AssignorServer.writeTail(out, assigned - start, start - began, 1);
    }

    private static void read(JsonNode tasks, Map<String, Integer> subIndex, Runs runs) {
        for (Iterator<Map.Entry<String, JsonNode>> it = tasks.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> entry = it.next();
            Integer sub = subIndex.get(entry.getKey());
            if (sub == null)
                continue;
            for (JsonNode partition : entry.getValue()) {
                runs.sub.add(sub);
                runs.part.add(partition.asInt());
            }
        }
    }
}
