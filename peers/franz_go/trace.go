package main

// Trace mode (-trace): franz-go's sticky balancer through a whole trace, each step fed franz-go's
// own answer to the step before, as a kgo group's members carry it.
//
// Input: {"steps": [{"topics": {name: count}, "members": [{"id", "topics", "instance_id"}],
// "fresh": [id]}]} (peers/kafka_trace.py's trace input).  Every member is one kgo client: a member
// of "fresh" (or new to the group) has no previous assignment and generation -1; a member missing
// from a step has left.  Each rebalance, every member joins with its balancer's JoinGroupMetadata
// of its sorted subscription, its last assignment (kgo's lastAssigned; a cooperative member first
// drops the topics it no longer consumes) and its generation; the leader sorts the members
// (sortJoinMembers) and balances the topics that exist; the group's generation is the next one
// and every member takes its part of the plan.  A cooperative step takes follow-up rounds until a
// round revokes nothing (a cooperative member that lost partitions rejoins).
//
// Output: {"steps": [{"assignment": {member: {topic: [partitions]}}, "first": the first round's
// plan, "rounds": n}]}.

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type traceMember struct {
	ID         string   `json:"id"`
	Topics     []string `json:"topics"`
	InstanceID *string  `json:"instance_id"`
}

type traceStep struct {
	Topics  map[string]int32 `json:"topics"`
	Members []traceMember    `json:"members"`
	Fresh   []string         `json:"fresh"`
}

type client struct {
	owned      map[string][]int32
	generation int32
}

const maxRounds = 16

// sortJoinMembers is kgo's joinMemberLess (unexported): members with an instance id first, by
// instance id, then by member id.
func sortJoinMembers(members []kmsg.JoinGroupResponseMember) {
	slices.SortStableFunc(members, func(l, r kmsg.JoinGroupResponseMember) int {
		switch {
		case l.InstanceID != nil && r.InstanceID != nil:
			return strings.Compare(*l.InstanceID, *r.InstanceID)
		case l.InstanceID != nil:
			return -1
		case r.InstanceID != nil:
			return 1
		}
		return strings.Compare(l.MemberID, r.MemberID)
	})
}

func sortedCopy(owned map[string][]int32) map[string][]int32 {
	out := make(map[string][]int32, len(owned))
	for topic, partitions := range owned {
		if len(partitions) > 0 {
			sorted := slices.Clone(partitions)
			slices.Sort(sorted)
			out[topic] = sorted
		}
	}
	return out
}

func runTrace(in io.Reader, name string, cooperative bool) (any, error) {
	var doc struct {
		Steps []traceStep `json:"steps"`
	}
	if err := json.NewDecoder(in).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	balancer := kgo.StickyBalancer()
	if cooperative {
		balancer = kgo.CooperativeStickyBalancer()
	}
	clients := map[string]*client{}
	var generation int32
	steps := make([]map[string]any, 0, len(doc.Steps))
	for k, step := range doc.Steps {
		fresh := map[string]bool{}
		for _, id := range step.Fresh {
			fresh[id] = true
		}
		present := make(map[string]*client, len(step.Members))
		for _, m := range step.Members {
			c := clients[m.ID]
			if c == nil || fresh[m.ID] {
				c = &client{owned: map[string][]int32{}, generation: -1}
			}
			present[m.ID] = c
		}
		clients = present
		result := map[string]any{}
		rounds := 0
		for revoked := true; revoked; {
			rounds++
			if rounds > maxRounds {
				return nil, fmt.Errorf("%s: step %d took more than %d rounds", name, k, maxRounds)
			}
			revoked = false
			members := make([]kmsg.JoinGroupResponseMember, 0, len(step.Members))
			for _, m := range step.Members {
				c := clients[m.ID]
				topics := slices.Clone(m.Topics)
				sort.Strings(topics)
				if cooperative {
					for topic := range c.owned {
						if !slices.Contains(topics, topic) {
							delete(c.owned, topic)
						}
					}
				}
				joined := kmsg.NewJoinGroupResponseMember()
				joined.MemberID = m.ID
				joined.InstanceID = m.InstanceID
				joined.ProtocolMetadata = balancer.JoinGroupMetadata(topics, sortedCopy(c.owned), c.generation)
				members = append(members, joined)
			}
			sortJoinMembers(members)
			memberBalancer, interests, err := balancer.MemberBalancer(members)
			if err != nil {
				return nil, fmt.Errorf("%s: step %d: %v", name, k, err)
			}
			counts := make(map[string]int32, len(interests))
			for topic := range interests {
				if count, exists := step.Topics[topic]; exists && count > 0 {
					counts[topic] = count
				}
			}
			var into kgo.IntoSyncAssignment
			if withError, ok := memberBalancer.(kgo.GroupMemberBalancerOrError); ok {
				if into, err = withError.BalanceOrError(counts); err != nil {
					return nil, fmt.Errorf("%s: step %d: %v", name, k, err)
				}
			} else {
				into = memberBalancer.Balance(counts)
			}
			plan, ok := into.(*kgo.BalancePlan)
			if !ok {
				return nil, fmt.Errorf("franz-go returned %T, not a *kgo.BalancePlan", into)
			}
			generation++
			byMember := plan.AsMemberIDMap()
			given := map[string]map[string][]int32{}
			for _, m := range step.Members {
				c := clients[m.ID]
				assigned := sortedCopy(byMember[m.ID])
				for topic, partitions := range c.owned {
					for _, p := range partitions {
						if !slices.Contains(assigned[topic], p) {
							revoked = true
						}
					}
				}
				c.owned = assigned
				c.generation = generation
				given[m.ID] = sortedCopy(assigned)
			}
			if rounds == 1 {
				result["first"] = given
			}
			revoked = revoked && cooperative
		}
		final := map[string]map[string][]int32{}
		for _, m := range step.Members {
			final[m.ID] = sortedCopy(clients[m.ID].owned)
		}
		result["assignment"] = final
		result["rounds"] = rounds
		steps = append(steps, result)
	}
	return map[string]any{"steps": steps}, nil
}
