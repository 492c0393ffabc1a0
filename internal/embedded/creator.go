package embedded

import (
	"context"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicCreator creates the topics auto-creation asks for in batches: every
// topic asked for while a CreateTopics request runs goes into the next
// one. kfake writes and syncs its whole topic list once per request, in
// the loop that answers every client: a thousand source tasks starting at
// once, each asking for its own topic, would otherwise hold every client
// up for a thousand syncs of an ever longer file.
type topicCreator struct {
	b *Broker

	mu      sync.Mutex
	pending []string
	running bool
	cl      *kgo.Client // the broker's own client, made for each burst
}

// topicGather is how long topics asked for are gathered before a batch.
const topicGather = 50 * time.Millisecond

// create has topics created; each one's channel in b.creating is closed
// once it exists (or could not be made).
func (tc *topicCreator) create(topics []string) {
	if len(topics) == 0 {
		return
	}
	tc.mu.Lock()
	tc.pending = append(tc.pending, topics...)
	start := !tc.running
	tc.running = true
	tc.mu.Unlock()
	if start {
		go tc.run()
	}
}

func (tc *topicCreator) run() {
	for {
		// A burst asks for topics one request at a time: gathered a
		// moment, they make one sync of the topic list, not one each.
		time.Sleep(topicGather)
		tc.mu.Lock()
		batch := tc.pending
		tc.pending = nil
		if len(batch) == 0 {
			// Its connections closed between bursts: the broker's own
			// client is not one of the connections it reports.
			if tc.cl != nil {
				tc.cl.Close()
				tc.cl = nil
			}
			tc.running = false
			tc.mu.Unlock()
			return
		}
		tc.mu.Unlock()
		if err := tc.createBatch(batch); err != nil {
			// One at a time, as before batching: an existing topic is an
			// error here, and nothing to do.
			for _, topic := range batch {
				_ = tc.b.cluster.CreateTopic(topic, tc.b.partitions, nil)
			}
		}
		for _, topic := range batch {
			if ch, ok := tc.b.creating.Load(topic); ok {
				close(ch.(chan struct{}))
			}
		}
	}
}

// createBatch sends one CreateTopics request for topics to the broker
// itself, in process. Per-topic errors (one that exists already) are
// fine: the topic is there.
func (tc *topicCreator) createBatch(topics []string) error {
	tc.mu.Lock()
	if tc.cl == nil {
		cl, err := kgo.NewClient(kgo.SeedBrokers(tc.b.addr), kgo.Dialer(tc.b.Dial))
		if err != nil {
			tc.mu.Unlock()
			return err
		}
		tc.cl = cl
	}
	cl := tc.cl
	tc.mu.Unlock()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30_000
	for _, topic := range topics {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic = topic
		rt.NumPartitions = tc.b.partitions
		rt.ReplicationFactor = -1 // the broker's default
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := req.RequestWith(ctx, cl)
	return err
}

func (tc *topicCreator) close() {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.cl != nil {
		tc.cl.Close()
	}
}
