package main

// Serve mode (-serve BALANCER): one of franz-go's group balancers (sticky, cooperative-sticky,
// range, roundrobin) as a rebalance-lab plugin program, speaking the plugin protocol
// (docs/plugins.md): one request per line on stdin, one answer per line on stdout.
//
// Each request's group document is balanced as main.go's single run does it (every member's
// JoinGroup metadata from the balancer's own JoinGroupMetadata, the leader's sort, MemberBalancer
// and BalanceOrError over the partition counts of the topics that exist).  A cooperative
// balancer's plan withholds the partitions that change owner (kgo's AdjustCooperative); their old
// owners revoke them and rejoin, so the group is rebalanced again, each member owning its part of
// the plan at the next generation, until a round revokes nothing: the answer is the completed
// assignment and the number of rounds.  Member racks are not sent: franz-go's rack-aware
// balancing (kgo.BalanceRacks, by partition leader rack) takes its racks from a live client's
// metadata, which the public balancer API does not reach.
//
// Answer: {"assignment": {member: {topic: [partitions]}}, "status": "heuristic",
// "info": {"assign_seconds": s, "rounds": n}}, the seconds of the balancing calls measured in Go.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var balancers = map[string]func() kgo.GroupBalancer{
	"sticky":             kgo.StickyBalancer,
	"cooperative-sticky": kgo.CooperativeStickyBalancer,
	"range":              kgo.RangeBalancer,
	"roundrobin":         kgo.RoundRobinBalancer,
}

type request struct {
	Describe bool   `json:"describe"`
	Problem  *group `json:"problem"`
}

// balanceOnce is one rebalance of doc's members: the plan by member id and the seconds it took.
func balanceOnce(balancer kgo.GroupBalancer, doc *group) (map[string]map[string][]int32, float64, error) {
	members := make([]kmsg.JoinGroupResponseMember, 0, len(doc.Members))
	for _, m := range doc.Members {
		generation := int32(-1)
		if m.Generation != nil {
			generation = *m.Generation
		}
		joined := kmsg.NewJoinGroupResponseMember()
		joined.MemberID = m.ID
		joined.InstanceID = m.InstanceID
		joined.ProtocolMetadata = balancer.JoinGroupMetadata(m.Topics, m.Owned, generation)
		members = append(members, joined)
	}
	sortJoinMembers(members)
	start := time.Now()
	memberBalancer, interests, err := balancer.MemberBalancer(members)
	if err != nil {
		return nil, 0, err
	}
	counts := make(map[string]int32, len(interests))
	for topic := range interests {
		if count, exists := doc.Topics[topic]; exists {
			counts[topic] = count
		}
	}
	var result kgo.IntoSyncAssignment
	if withError, ok := memberBalancer.(kgo.GroupMemberBalancerOrError); ok {
		if result, err = withError.BalanceOrError(counts); err != nil {
			return nil, 0, err
		}
	} else {
		result = memberBalancer.Balance(counts)
	}
	seconds := time.Since(start).Seconds()
	plan, ok := result.(*kgo.BalancePlan)
	if !ok {
		return nil, 0, fmt.Errorf("franz-go returned %T, not a *kgo.BalancePlan", result)
	}
	return plan.AsMemberIDMap(), seconds, nil
}

// revokes tells whether a member's claims as it sent them are not all in its part of plan.
func revokes(doc *group, plan map[string]map[string][]int32) bool {
	for _, m := range doc.Members {
		for topic, partitions := range m.Owned {
			given := plan[m.ID][topic]
			for _, p := range partitions {
				if !slices.Contains(given, p) {
					return true
				}
			}
		}
	}
	return false
}

func answer(balancer kgo.GroupBalancer, doc *group) (map[string]any, error) {
	current := *doc
	seconds := 0.0
	rounds := 1
	var plan map[string]map[string][]int32
	for {
		var took float64
		var err error
		if plan, took, err = balanceOnce(balancer, &current); err != nil {
			return nil, err
		}
		seconds += took
		if !balancer.IsCooperative() || rounds == maxRounds || !revokes(&current, plan) {
			break
		}
		next := int32(-1)
		for _, m := range current.Members {
			if m.Generation != nil && *m.Generation > next {
				next = *m.Generation
			}
		}
		next++
		members := make([]member, len(current.Members))
		for i, m := range current.Members {
			generation := next
			members[i] = member{ID: m.ID, Topics: m.Topics, Owned: plan[m.ID], Generation: &generation, InstanceID: m.InstanceID}
		}
		current = group{Topics: current.Topics, Members: members}
		rounds++
	}
	assignment := make(map[string]map[string][]int32, len(plan))
	for _, m := range doc.Members {
		assignment[m.ID] = map[string][]int32{}
	}
	for id, topics := range plan {
		out := map[string][]int32{}
		for topic, partitions := range topics {
			if len(partitions) > 0 {
				sorted := slices.Clone(partitions)
				slices.Sort(sorted)
				out[topic] = sorted
			}
		}
		assignment[id] = out
	}
	info := map[string]any{"assign_seconds": seconds}
	if rounds > 1 {
		info["rounds"] = rounds
	}
	return map[string]any{"assignment": assignment, "status": "heuristic", "info": info}, nil
}

func serve(name string, in io.Reader, out io.Writer) error {
	newBalancer, ok := balancers[name]
	if !ok {
		return fmt.Errorf("no balancer %q (sticky, cooperative-sticky, range, roundrobin)", name)
	}
	balancer := newBalancer()
	reader := bufio.NewReaderSize(in, 1<<16)
	writer := bufio.NewWriter(out)
	encoder := json.NewEncoder(writer)
	for {
		line, readErr := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var reply map[string]any
			var req request
			if err := json.Unmarshal(line, &req); err != nil {
				reply = map[string]any{"status": "error", "error": fmt.Sprintf("the request is not a group document: %v", err)}
			} else if req.Describe {
				reply = map[string]any{"name": "franz-go-" + name, "judged_on": []string{"sticky"}, "franz_go": franzGoVersion()}
			} else if req.Problem == nil {
				reply = map[string]any{"status": "error", "error": "the request has no problem"}
			} else if reply, err = answer(balancer, req.Problem); err != nil {
				reply = map[string]any{"status": "error", "error": err.Error()}
			}
			if err := encoder.Encode(reply); err != nil {
				return err
			}
			if err := writer.Flush(); err != nil {
				return err
			}
		}
		if readErr == io.EOF {
			return nil
		}
		if readErr != nil {
			return readErr
		}
	}
}

func serveMain(name string) {
	if err := serve(name, os.Stdin, os.Stdout); err != nil {
		fail("%v", err)
	}
}

// franzGoVersion is the franz-go release this program was built with (go.mod's pin).
func franzGoVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/twmb/franz-go" {
				return dep.Version
			}
		}
	}
	return "unknown"
}
