// Command franz-go-peer runs franz-go's sticky group balancer (kgo.StickyBalancer, through kgo's
// public GroupBalancer API, exactly as a franz-go group leader does) on a rebalance-lab group
// document (DESIGN.md section 2) and prints the assignment and the time measured inside Go.
//
// Every member's JoinGroup metadata is built by the balancer's own JoinGroupMetadata from its
// subscription, its previous assignment ("owned", as given) and its generation (-1 when absent),
// as each member's client would send it; members carry their "instance_id" as InstanceID and are
// sorted as the leader sorts the JoinGroup response (kgo's sortJoinMembers: instance ids first,
// then member ids).  A timed run is what the leader does with that response (kgo's balanceGroup):
// MemberBalancer (parses every member's metadata), the partition counts of the topics the members
// are interested in that exist, and BalanceOrError (the sticky plan).  Member racks are not sent:
// without partition racks franz-go's sticky balancer does not use them.
//
// Usage: franz-go-peer [-repeat N] [-cooperative] GROUP.json   (- reads standard input)
// or franz-go-peer -trace [-cooperative] TRACE.json for a whole trace (trace.go),
// or franz-go-peer -serve BALANCER: a plugin program of the lab (serve.go).
//
// Output (one JSON object): {"assignment": {member: {topic: [partitions]}}, "seconds": [run, ...]}.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type member struct {
	ID         string             `json:"id"`
	Topics     []string           `json:"topics"`
	Owned      map[string][]int32 `json:"owned"`
	Generation *int32             `json:"generation"`
	InstanceID *string            `json:"instance_id"`
}

type group struct {
	Topics  map[string]int32 `json:"topics"`
	Members []member         `json:"members"`
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "error: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	repeat := flag.Int("repeat", 1, "timed runs")
	cooperative := flag.Bool("cooperative", false, "kgo.CooperativeStickyBalancer instead of kgo.StickyBalancer")
	trace := flag.Bool("trace", false, "run a whole trace (trace.go)")
	serveBalancer := flag.String("serve", "", "serve the plugin protocol with this balancer (serve.go)")
	flag.Parse()
	if *serveBalancer != "" {
		serveMain(*serveBalancer)
		return
	}
	if flag.NArg() != 1 || *repeat < 1 {
		fail("usage: franz-go-peer [-repeat N] [-cooperative] GROUP.json")
	}
	var in io.Reader = os.Stdin
	if path := flag.Arg(0); path != "-" {
		file, err := os.Open(path)
		if err != nil {
			fail("%s: %v", path, err)
		}
		defer file.Close()
		in = file
	}
	if *trace {
		out, err := runTrace(in, flag.Arg(0), *cooperative)
		if err != nil {
			fail("%v", err)
		}
		if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
			fail("stdout: %v", err)
		}
		return
	}
	var doc group
	if err := json.NewDecoder(in).Decode(&doc); err != nil {
		fail("%s: %v", flag.Arg(0), err)
	}

	balancer := kgo.StickyBalancer()
	if *cooperative {
		balancer = kgo.CooperativeStickyBalancer()
	}
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

	var plan map[string]map[string][]int32
	seconds := make([]float64, 0, *repeat)
	for run := 0; run < *repeat; run++ {
		start := time.Now()
		memberBalancer, interests, err := balancer.MemberBalancer(members)
		if err != nil {
			fail("%s: %v", flag.Arg(0), err)
		}
		counts := make(map[string]int32, len(interests))
		for topic := range interests {
			if count, exists := doc.Topics[topic]; exists {
				counts[topic] = count
			}
		}
		var result kgo.IntoSyncAssignment
		if withError, ok := memberBalancer.(kgo.GroupMemberBalancerOrError); ok {
			result, err = withError.BalanceOrError(counts)
			if err != nil {
				fail("%s: %v", flag.Arg(0), err)
			}
		} else {
			result = memberBalancer.Balance(counts)
		}
		seconds = append(seconds, time.Since(start).Seconds())
		balancePlan, ok := result.(*kgo.BalancePlan)
		if !ok {
			fail("franz-go returned %T, not a *kgo.BalancePlan", result)
		}
		plan = balancePlan.AsMemberIDMap()
	}

	assignment := make(map[string]map[string][]int32, len(doc.Members))
	for _, m := range doc.Members {
		topics := map[string][]int32{}
		for topic, partitions := range plan[m.ID] {
			if len(partitions) > 0 {
				sorted := slices.Clone(partitions)
				slices.Sort(sorted)
				topics[topic] = sorted
			}
		}
		assignment[m.ID] = topics
	}
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(map[string]any{"assignment": assignment, "seconds": seconds}); err != nil {
		fail("stdout: %v", err)
	}
}
