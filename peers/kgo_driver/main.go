// Command kgo-driver runs one franz-go consumer of rebalance-lab's live client matrix
// (peers/client_matrix.py's line protocol): key=value options, commands on stdin
// ("subscribe a,b", "stop"), every partition callback as a JSON line on stdout stamped with
// CLOCK_MONOTONIC in milliseconds.
//
// Options: bootstrap, group, member, topics, assignor (classic: franz-go's range, roundrobin,
// sticky and cooperative-sticky balancers; consumer, KIP-848 through ServerSideBalancer:
// uniform or range), protocol (classic or consumer), session_ms, heartbeat_ms, instance
// (a static member's instance id).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

var out sync.Mutex

// monotonicMs reads CLOCK_MONOTONIC (the clock every driver of the matrix stamps with).
func monotonicMs() float64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return float64(ts.Sec)*1000 + float64(ts.Nsec)/1e6
}

func emit(event string, partitions map[string][]int32, generation int32) {
	pairs := [][2]any{}
	topics := make([]string, 0, len(partitions))
	for t := range partitions {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	for _, t := range topics {
		for _, p := range partitions[t] {
			pairs = append(pairs, [2]any{t, p})
		}
	}
	doc := map[string]any{"t": monotonicMs(), "event": event, "partitions": pairs}
	if generation >= 0 {
		doc["generation"] = generation
	}
	line, _ := json.Marshal(doc)
	out.Lock()
	fmt.Println(string(line))
	out.Unlock()
}

func main() {
	opts := map[string]string{}
	for _, arg := range os.Args[1:] {
		k, v, _ := strings.Cut(arg, "=")
		opts[k] = v
	}
	ms := func(key string) time.Duration {
		n, _ := strconv.Atoi(opts[key])
		return time.Duration(n) * time.Millisecond
	}
	balancers := map[string]kgo.GroupBalancer{
		"range":              kgo.RangeBalancer(),
		"roundrobin":         kgo.RoundRobinBalancer(),
		"sticky":             kgo.StickyBalancer(),
		"cooperative-sticky": kgo.CooperativeStickyBalancer(),
		"uniform":            kgo.StickyBalancer(),
	}
	var cl *kgo.Client
	generation := func() int32 {
		if cl == nil {
			return -1
		}
		_, g := cl.GroupMetadata()
		return g
	}
	options := []kgo.Opt{
		kgo.SeedBrokers(opts["bootstrap"]),
		kgo.ConsumerGroup(opts["group"]),
		kgo.ClientID(opts["member"]),
		kgo.ConsumeTopics(strings.Split(opts["topics"], ",")...),
		kgo.Balancers(balancers[opts["assignor"]]),
		kgo.SessionTimeout(ms("session_ms")),
		kgo.HeartbeatInterval(ms("heartbeat_ms")),
		kgo.MetadataMaxAge(time.Second),
		kgo.MetadataMinAge(200 * time.Millisecond),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			emit("assigned", m, generation())
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			emit("revoked", m, generation())
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			emit("lost", m, generation())
		}),
	}
	if opts["protocol"] == "consumer" {
		options = append(options, kgo.ServerSideBalancer())
	}
	if opts["instance"] != "" {
		options = append(options, kgo.InstanceID(opts["instance"]))
	}
	var err error
	cl, err = kgo.NewClient(options...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kgo-driver:", err)
		os.Exit(2)
	}
	emit("ready", nil, -1)
	commands := make(chan string, 16)
	go func() {
		scanner := bufio.NewScanner(os.Stdin)
		for scanner.Scan() {
			commands <- strings.TrimSpace(scanner.Text())
		}
		commands <- "stop"
	}()
	subscribed := strings.Split(opts["topics"], ",")
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		cl.PollFetches(ctx)
		cancel()
		select {
		case command := <-commands:
			if command == "stop" {
				cl.Close()
				emit("closed", nil, -1)
				return
			}
			if topics, ok := strings.CutPrefix(command, "subscribe "); ok {
				wanted := strings.Split(topics, ",")
				keep := map[string]bool{}
				for _, t := range wanted {
					keep[t] = true
				}
				var drop []string
				for _, t := range subscribed {
					if !keep[t] {
						drop = append(drop, t)
					}
				}
				cl.AddConsumeTopics(wanted...)
				if len(drop) > 0 {
					cl.PurgeTopicsFromConsuming(drop...)
				}
				subscribed = wanted
			}
		default:
		}
	}
}
