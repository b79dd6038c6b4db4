/*
 * A regression to gate: Kafka's UniformAssignor (KIP-848) that forgets every member's current
 * assignment when a member has joined (some members hold partitions, another holds none), so it
 * assigns that group as if it were new.  Elsewhere it is UniformAssignor itself.  Compiled by
 * tests/experiments/test_gate_plugins.py against the Kafka release `make peers` built.
 */
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.ConsumerGroupPartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignorException;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;

import java.util.Collection;
import java.util.Collections;

public final class UniformForgetsOnJoin implements ConsumerGroupPartitionAssignor {
    private final UniformAssignor uniform = new UniformAssignor();

    @Override
    public String name() {
        return "uniform-forgets-on-join";
    }

    @Override
    public GroupAssignment assign(GroupSpec spec, SubscribedTopicDescriber topics) throws PartitionAssignorException {
        return uniform.assign(joined(spec) ? forgotten(spec) : spec, topics);
    }

    private static boolean joined(GroupSpec spec) {
        boolean holding = false;
        boolean empty = false;
        for (String member : spec.memberIds()) {
            if (spec.memberAssignment(member).partitions().isEmpty())
                empty = true;
            else
                holding = true;
        }
        return holding && empty;
    }

    private static GroupSpec forgotten(GroupSpec spec) {
        MemberAssignment none = Collections::emptyMap; // an empty map of the kind UniformAssignor accepts
        return new GroupSpec() {
            @Override
            public Collection<String> memberIds() {
                return spec.memberIds();
            }

            @Override
            public SubscriptionType subscriptionType() {
                return spec.subscriptionType();
            }

            @Override
            public boolean isPartitionAssigned(Uuid topicId, int partition) {
                return false;
            }

            @Override
            public boolean isPartitionAssignable(Uuid topicId, int partition) {
                return spec.isPartitionAssignable(topicId, partition);
            }

            @Override
            public MemberSubscription memberSubscription(String member) {
                return spec.memberSubscription(member);
            }

            @Override
            public MemberAssignment memberAssignment(String member) {
                return none;
            }
        };
    }
}
