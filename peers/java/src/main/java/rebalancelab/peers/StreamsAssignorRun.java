package rebalancelab.peers;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;

final class StreamsAssignorRun {
    private StreamsAssignorRun() {
    }

    static void group(Class<?> type, JsonNode problem, JsonGenerator out) throws Exception {
        throw new UnsupportedOperationException("streams");
    }

    static void kafkaStreams(Class<?> type, JsonNode problem, JsonGenerator out) throws Exception {
        throw new UnsupportedOperationException("streams");
    }
}
