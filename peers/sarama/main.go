// Command sarama-peer serves one of Sarama's balance strategies (github.com/IBM/sarama: range,
// roundrobin, sticky, cooperative-sticky) as a rebalance-lab plugin program: one request per line
// on stdin, one answer per line on stdout (docs/plugins.md).
//
// Usage: sarama-peer STRATEGY
//
// A request's group document is planned as a Sarama group leader plans it (consumerGroup.balance):
// every member's ConsumerGroupMemberMetadata as its own consumer sends it (subscription version 1,
// Sarama's default for its default broker version 2.8: the topics, the owned partitions as given,
// and the user data of the member's own strategy instance: for sticky, the assignment data the
// leader handed it with its previous assignment and generation; for cooperative-sticky, its
// subscription user data after it was told its generation), the partitions of every subscribed
// topic, and the strategy's Plan.  A topic some member subscribes that does not exist fails the
// leader's metadata lookup, as in Sarama (an answer with "error").  A cooperative strategy's plan
// withholds the partitions that change owner; the group is rebalanced again, each member owning
// its part of the plan at the next generation, until a round revokes nothing.  Sarama takes no
// partition racks.
//
// Answer: {"assignment": {member: {topic: [partitions]}}, "status": "heuristic",
// "info": {"assign_seconds": s, "rounds": n}}, the seconds of the Plan calls measured in Go.
package main

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

	"github.com/IBM/sarama"
)

// maxRounds bounds a cooperative rebalance's follow-up rounds (the last round's plan is the answer).
const maxRounds = 8

var strategies = map[string]func() sarama.BalanceStrategy{
	"range":              sarama.NewBalanceStrategyRange,
	"roundrobin":         sarama.NewBalanceStrategyRoundRobin,
	"sticky":             sarama.NewBalanceStrategySticky,
	"cooperative-sticky": sarama.NewBalanceStrategyCooperativeSticky,
}

// member is a member of a group document (docs/formats.md); owned topics keep the document's order.
type member struct {
	ID         string          `json:"id"`
	Topics     []string        `json:"topics"`
	Owned      json.RawMessage `json:"owned"`
	Generation *int32          `json:"generation"`

	owned []*sarama.OwnedPartition
}

type group struct {
	Topics  map[string]int32 `json:"topics"`
	Members []*member        `json:"members"`
}

type request struct {
	Describe bool   `json:"describe"`
	Problem  *group `json:"problem"`
}

// ownedInOrder reads an owned object keeping its topics in document order.
func ownedInOrder(raw json.RawMessage) ([]*sarama.OwnedPartition, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	if _, err := decoder.Token(); err != nil { // {
		return nil, err
	}
	var out []*sarama.OwnedPartition
	for decoder.More() {
		key, err := decoder.Token()
		if err != nil {
			return nil, err
		}
		var partitions []int32
		if err := decoder.Decode(&partitions); err != nil {
			return nil, err
		}
		out = append(out, &sarama.OwnedPartition{Topic: key.(string), Partitions: partitions})
	}
	return out, nil
}

func asMap(owned []*sarama.OwnedPartition) map[string][]int32 {
	out := make(map[string][]int32, len(owned))
	for _, o := range owned {
		out[o.Topic] = append(out[o.Topic], o.Partitions...)
	}
	return out
}

// planOnce is one rebalance: every member's metadata, the partitions, the strategy's plan.
func planOnce(name string, doc *group) (sarama.BalanceStrategyPlan, float64, error) {
	members := make(map[string]sarama.ConsumerGroupMemberMetadata, len(doc.Members))
	topics := map[string][]int32{}
	for _, m := range doc.Members {
		own := strategies[name]() // each consumer's own strategy instance
		meta := sarama.ConsumerGroupMemberMetadata{Version: 1, Topics: m.Topics, OwnedPartitions: m.owned, GenerationID: -1}
		previous := len(m.owned) > 0 || m.Generation != nil
		generation := int32(-1)
		if m.Generation != nil {
			generation = *m.Generation
		}
		if previous {
			meta.GenerationID = generation
			data, err := own.AssignmentData(m.ID, asMap(m.owned), generation)
			if err != nil {
				return nil, 0, err
			}
			meta.UserData = data
			if told, ok := own.(sarama.OnAssignmentBalanceStrategy); ok {
				told.OnAssignment(&sarama.ConsumerGroupMemberAssignment{Topics: asMap(m.owned), UserData: data}, generation)
			}
		}
		if subscriber, ok := own.(sarama.SubscriptionUserDataBalanceStrategy); ok {
			data, err := subscriber.SubscriptionUserData(slices.Clone(m.Topics))
			if err == nil {
				meta.UserData = data
			}
		}
		members[m.ID] = meta
		for _, topic := range m.Topics {
			count, exists := doc.Topics[topic]
			if !exists {
				return nil, 0, fmt.Errorf("%v: %s", sarama.ErrUnknownTopicOrPartition, topic)
			}
			partitions := make([]int32, count)
			for p := range partitions {
				partitions[p] = int32(p)
			}
			topics[topic] = partitions
		}
	}
	leader := strategies[name]()
	start := time.Now()
	plan, err := leader.Plan(members, topics)
	return plan, time.Since(start).Seconds(), err
}

func revokes(doc *group, plan sarama.BalanceStrategyPlan) bool {
	for _, m := range doc.Members {
		for _, o := range m.owned {
			for _, p := range o.Partitions {
				if !slices.Contains(plan[m.ID][o.Topic], p) {
					return true
				}
			}
		}
	}
	return false
}

func answer(name string, doc *group) (map[string]any, error) {
	for _, m := range doc.Members {
		owned, err := ownedInOrder(m.Owned)
		if err != nil {
			return nil, fmt.Errorf("member %s: owned: %v", m.ID, err)
		}
		m.owned = owned
	}
	if len(doc.Members) == 0 { // no member, no leader to plan
		return map[string]any{"assignment": map[string]any{}, "status": "heuristic"}, nil
	}
	current := doc
	seconds := 0.0
	rounds := 1
	var plan sarama.BalanceStrategyPlan
	for {
		var took float64
		var err error
		if plan, took, err = planOnce(name, current); err != nil {
			return nil, err
		}
		seconds += took
		if name != "cooperative-sticky" || rounds == maxRounds || !revokes(current, plan) {
			break
		}
		next := int32(-1)
		for _, m := range current.Members {
			if m.Generation != nil && *m.Generation > next {
				next = *m.Generation
			}
		}
		next++
		members := make([]*member, len(current.Members))
		for i, m := range current.Members {
			generation := next
			var owned []*sarama.OwnedPartition
			for _, topic := range m.Topics {
				if partitions := plan[m.ID][topic]; len(partitions) > 0 {
					owned = append(owned, &sarama.OwnedPartition{Topic: topic, Partitions: partitions})
				}
			}
			members[i] = &member{ID: m.ID, Topics: m.Topics, Generation: &generation, owned: owned}
		}
		current = &group{Topics: current.Topics, Members: members}
		rounds++
	}
	assignment := make(map[string]map[string][]int32, len(doc.Members))
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

func saramaVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/IBM/sarama" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func serve(name string, in io.Reader, out io.Writer) error {
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
				reply = map[string]any{"name": "sarama-" + name, "judged_on": []string{"sticky"}, "sarama": saramaVersion()}
			} else if req.Problem == nil {
				reply = map[string]any{"status": "error", "error": "the request has no problem"}
			} else if reply, err = answer(name, req.Problem); err != nil {
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

func main() {
	if len(os.Args) != 2 || strategies[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: sarama-peer range|roundrobin|sticky|cooperative-sticky")
		os.Exit(2)
	}
	if err := serve(os.Args[1], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(2)
	}
}
