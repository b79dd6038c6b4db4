// Command sarama-driver runs one Sarama consumer of rebalance-lab's live client matrix
// (peers/client_matrix.py's line protocol): key=value options, commands on stdin
// ("subscribe a,b", "stop"), every claim as a JSON line on stdout stamped with CLOCK_MONOTONIC
// in milliseconds.
//
// Sarama tells a member what it holds through its claims: a ConsumeClaim starts for each
// partition it is given ("assigned") and returns when the partition is taken away ("revoked":
// an eager strategy ends the whole session, a cooperative one closes that claim's messages).
// Options: bootstrap, group, member, topics, assignor (Sarama's range, roundrobin, sticky and
// cooperative-sticky strategies), session_ms, heartbeat_ms, instance (a static member's id).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/IBM/sarama"
)

var out sync.Mutex

// monotonicMs reads CLOCK_MONOTONIC (the clock every driver of the matrix stamps with).
func monotonicMs() float64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return float64(ts.Sec)*1000 + float64(ts.Nsec)/1e6
}

func emit(event string, topic string, partition int32, generation int32) {
	doc := map[string]any{"t": monotonicMs(), "event": event, "partitions": [][2]any{}}
	if topic != "" {
		doc["partitions"] = [][2]any{{topic, partition}}
	}
	if generation >= 0 {
		doc["generation"] = generation
	}
	line, _ := json.Marshal(doc)
	out.Lock()
	fmt.Println(string(line))
	out.Unlock()
}

type handler struct{}

func (handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (handler) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	emit("assigned", claim.Topic(), claim.Partition(), session.GenerationID())
	defer func() { emit("revoked", claim.Topic(), claim.Partition(), session.GenerationID()) }()
	for {
		select {
		case _, ok := <-claim.Messages():
			if !ok {
				return nil
			}
		case <-session.Context().Done():
			return nil
		}
	}
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
	strategies := map[string]func() sarama.BalanceStrategy{
		"range":              sarama.NewBalanceStrategyRange,
		"roundrobin":         sarama.NewBalanceStrategyRoundRobin,
		"sticky":             sarama.NewBalanceStrategySticky,
		"cooperative-sticky": sarama.NewBalanceStrategyCooperativeSticky,
	}
	config := sarama.NewConfig()
	config.Version = sarama.V4_0_0_0
	config.ClientID = opts["member"]
	config.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{strategies[opts["assignor"]]()}
	config.Consumer.Group.Session.Timeout = ms("session_ms")
	config.Consumer.Group.Heartbeat.Interval = ms("heartbeat_ms")
	config.Consumer.Offsets.AutoCommit.Enable = false
	config.Metadata.RefreshFrequency = time.Second
	if opts["instance"] != "" {
		config.Consumer.Group.InstanceId = opts["instance"]
	}
	group, err := sarama.NewConsumerGroup([]string{opts["bootstrap"]}, opts["group"], config)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sarama-driver:", err)
		os.Exit(2)
	}
	emit("ready", "", 0, -1)
	topics := strings.Split(opts["topics"], ",")
	var mu sync.Mutex
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			mu.Lock()
			current, c := topics, ctx
			mu.Unlock()
			err := group.Consume(c, current, handler{})
			if errors.Is(err, sarama.ErrClosedConsumerGroup) {
				return
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "sarama-driver:", err)
				time.Sleep(100 * time.Millisecond)
			}
			if c.Err() != nil { // a new subscription: the next Consume takes it
				mu.Lock()
				ctx, cancel = context.WithCancel(context.Background())
				mu.Unlock()
			}
		}
	}()
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		command := strings.TrimSpace(scanner.Text())
		if command == "stop" {
			break
		}
		if wanted, ok := strings.CutPrefix(command, "subscribe "); ok {
			mu.Lock()
			topics = strings.Split(wanted, ",")
			stop := cancel
			mu.Unlock()
			stop()
		}
	}
	group.Close()
	<-done
	emit("closed", "", 0, -1)
}
