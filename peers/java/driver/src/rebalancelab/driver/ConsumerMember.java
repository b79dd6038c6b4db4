package rebalancelab.driver;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Consumers of Kafka's Java client in the live client matrix (peers/client_matrix.py's line
 * protocol): {@code key=value} options, commands on stdin ({@code subscribe a,b}, {@code stop}),
 * every rebalance callback as a JSON line on stdout stamped with {@link System#nanoTime()}
 * (CLOCK_MONOTONIC) in milliseconds.
 *
 * <p>Options: {@code bootstrap}, {@code group}, {@code member}, {@code topics}, {@code assignor}
 * (classic: {@code range}, {@code roundrobin}, {@code sticky}, {@code cooperative-sticky}, Kafka's
 * assignor classes; consumer: the broker-side {@code group.remote.assignor}, {@code uniform} or
 * {@code range}), {@code protocol} ({@code classic} or {@code consumer}, KIP-848), {@code
 * session_ms}, {@code heartbeat_ms} (classic only), {@code instance} ({@code group.instance.id}).
 *
 * <p>With {@code host=1} one JVM hosts several members, each a consumer on its own thread (the
 * JVM's start-up paid once per group, and a restarted member's classes already loaded): {@code
 * start KEY key=value...} starts a member (its options over the command line's), {@code KEY
 * stop} and {@code KEY subscribe a,b} command it, and each of its lines carries {@code "key":
 * KEY}; a member whose consumer fails ends with an {@code exited} line.
 */
public final class ConsumerMember implements Runnable {
    private static final Map<String, String> CLASSIC = Map.of(
            "range", "org.apache.kafka.clients.consumer.RangeAssignor",
            "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor",
            "sticky", "org.apache.kafka.clients.consumer.StickyAssignor",
            "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");

    private final String key;
    private final Map<String, String> opts;
    private final LinkedBlockingQueue<String> commands = new LinkedBlockingQueue<>();

    private ConsumerMember(String key, Map<String, String> opts) {
        this.key = key;
        this.opts = opts;
    }

    static synchronized void emit(String key, String event, Collection<TopicPartition> partitions,
            int generation, String text) {
        StringBuilder out = new StringBuilder(128);
        out.append("{\"t\": ").append(System.nanoTime() / 1e6).append(", \"event\": \"").append(event)
                .append("\", \"partitions\": [");
        boolean first = true;
        for (TopicPartition tp : partitions) {
            out.append(first ? "" : ", ").append("[\"").append(tp.topic()).append("\", ")
                    .append(tp.partition()).append(']');
            first = false;
        }
        out.append(']');
        if (generation >= 0) {
            out.append(", \"generation\": ").append(generation);
        }
        if (key != null) {
            out.append(", \"key\": \"").append(key).append('"');
        }
        if (text != null) {
            out.append(", \"text\": \"").append(text.replace("\\", "\\\\").replace("\"", "\\\"")
                    .replace("\n", " ")).append('"');
        }
        System.out.println(out.append('}'));
        System.out.flush();
    }

    private void emit(String event, Collection<TopicPartition> partitions, int generation) {
        emit(key, event, partitions, generation, null);
    }

    private static Map<String, String> parse(Iterable<String> args, Map<String, String> base) {
        Map<String, String> opts = new HashMap<>(base);
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq > 0) {
                opts.put(arg.substring(0, eq), arg.substring(eq + 1));
            }
        }
        return opts;
    }

    private Properties properties() {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
        props.put(ConsumerConfig.GROUP_ID_CONFIG, opts.get("group"));
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, opts.get("member"));
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "1000");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        if ("consumer".equals(opts.getOrDefault("protocol", "classic"))) {
            props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            props.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, opts.get("assignor"));
        } else {
            props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, CLASSIC.get(opts.get("assignor")));
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, opts.get("session_ms"));
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, opts.get("heartbeat_ms"));
        }
        if (opts.containsKey("instance")) {
            props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, opts.get("instance"));
        }
        return props;
    }

    @Override
    public void run() {
        try {
            consume();
            emit("closed", List.of(), -1);
        } catch (Throwable e) {
            emit(key, "exited", List.of(), -1, e.toString());
        }
    }

    private void consume() throws InterruptedException {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties())) {
            ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
                private int generation() {
                    try {
                        return consumer.groupMetadata().generationId();
                    } catch (RuntimeException e) {
                        return -1;
                    }
                }

                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    emit("revoked", partitions, generation());
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    emit("assigned", partitions, generation());
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    emit("lost", partitions, generation());
                }
            };
            consumer.subscribe(Arrays.asList(opts.get("topics").split(",")), listener);
            emit("ready", List.of(), -1);
            while (true) {
                consumer.poll(Duration.ofMillis(100));
                String command = commands.poll();
                if (command == null) {
                    continue;
                }
                if (command.equals("stop")) {
                    break;
                }
                if (command.startsWith("subscribe ")) {
                    consumer.subscribe(Arrays.asList(command.substring(10).split(",")), listener);
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> base = parse(Arrays.asList(args), Map.of());
        boolean host = "1".equals(base.get("host"));
        Map<String, ConsumerMember> members = new ConcurrentHashMap<>();
        ConsumerMember single = host ? null : new ConsumerMember(null, base);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    line = line.trim();
                    if (!host) {
                        single.commands.add(line);
                        continue;
                    }
                    List<String> words = Arrays.asList(line.split(" "));
                    if (words.size() >= 2 && words.get(0).equals("start")) {
                        ConsumerMember member = new ConsumerMember(
                                words.get(1), parse(words.subList(2, words.size()), base));
                        members.put(member.key, member);
                        Thread thread = new Thread(member, "member-" + member.key);
                        thread.start();
                    } else if (words.size() >= 2 && members.containsKey(words.get(0))) {
                        members.get(words.get(0)).commands.add(line.substring(words.get(0).length() + 1));
                    }
                }
            } catch (Exception ignored) {
                // stdin closed: stop
            }
            if (host) {
                members.values().forEach(m -> m.commands.add("stop"));
            } else {
                single.commands.add("stop");
            }
        });
        reader.setDaemon(!host);
        reader.start();
        if (host) {
            reader.join();
        } else {
            single.run();
        }
    }
}
