package embedded

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The broker must keep what it acknowledged across a restart on the same
// data dir: connectd's sink offsets and topics live there.
func TestBrokerPersistsAcrossRestart(t *testing.T) {
	b, dir := onDisk(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	b = restarted(t, b, dir)
	if got := firstValue(ctx, t, b.Addr(), "t"); got != "hello" {
		t.Fatalf("after a restart: got %q, want hello", got)
	}
}

// onDisk starts a broker that keeps its data in a new directory, closed
// when the test ends.
func onDisk(t *testing.T) (*Broker, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := Start(Config{Listen: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b, dir
}

// restarted closes b and starts a broker on its address and data dir,
// closed when the test ends.
func restarted(t *testing.T, b *Broker, dir string) *Broker {
	t.Helper()
	addr := b.Addr()
	b.Close()
	b, err := Start(Config{Listen: addr, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// firstValue reads the first record of topic over TCP.
func firstValue(ctx context.Context, t *testing.T, addr, topic string) string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("no record in %s: %v", topic, err)
		}
		if it := fs.RecordIter(); !it.Done() {
			return string(it.Next().Value)
		}
	}
}

// A worker's clients reach its broker in process; other clients over TCP.
// Both must see one broker: what one produces the other consumes.
func TestInProcessAndTCPClientsShareTheBroker(t *testing.T) {
	b, err := Start(Config{Listen: "127.0.0.1:0", DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var inProcess, network atomic.Int32
	dial := func(ctx context.Context, netw, host string) (net.Conn, error) {
		c, err := b.Dial(ctx, netw, host)
		if err == nil {
			if _, ok := c.(*net.TCPConn); ok {
				network.Add(1)
			} else {
				inProcess.Add(1)
			}
		}
		return c, err
	}
	producer, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation(), kgo.Dialer(dial))
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	if err := producer.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte("in process")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if inProcess.Load() == 0 || network.Load() != 0 {
		t.Fatalf("dialed %d in process and %d over the network; want only in process", inProcess.Load(), network.Load())
	}

	if got := firstValue(ctx, t, b.Addr(), "t"); got != "in process" {
		t.Fatalf("the TCP consumer got %q, want %q", got, "in process")
	}

	// A group member that joined in process shows a loopback host, as
	// one that joined over TCP does, not net.Pipe's "pipe".
	member, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.Dialer(dial), kgo.ConsumerGroup("g"), kgo.ConsumeTopics("t"))
	if err != nil {
		t.Fatal(err)
	}
	defer member.Close()
	var members []kadm.DescribedGroupMember
	for len(members) == 0 {
		if ctx.Err() != nil {
			t.Fatal("the consumer never joined group g")
		}
		groups, err := kadm.NewClient(producer).DescribeGroups(ctx, "g")
		if err != nil {
			t.Fatal(err)
		}
		members = groups["g"].Members
		time.Sleep(10 * time.Millisecond)
	}
	if len(members) != 1 || !strings.HasPrefix(members[0].ClientHost, "127.0.0.1") {
		t.Fatalf("group g's members %+v; want one, on host 127.0.0.1", members)
	}
	member.Close()

	// Another address is dialed over the network.
	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := dial(ctx, "tcp", other.Addr().String()); err != nil || network.Load() != 1 {
		t.Fatalf("dialing another address: %v, %d network dials; want one", err, network.Load())
	}

	// A closed broker refuses in-process dials as its closed port would
	// refuse TCP ones, neither hanging them nor having them retried.
	b.Close()
	c, err := b.Dial(ctx, "tcp", b.Addr())
	if !errors.Is(err, syscall.ECONNREFUSED) || kgo.IsRetryableBrokerErr(err) {
		t.Fatalf("dial after Close: %v, %v; want a refused connection", c, err)
	}
}

// Like a Kafka broker with no client-metrics subscription, the embedded
// one asks clients for no metrics, under one id per client.
func TestNoClientMetricsRequested(t *testing.T) {
	b, err := Start(Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var ids [][16]byte
	for range 2 {
		req := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ErrorCode != 0 || len(resp.RequestedMetrics) != 0 || resp.PushIntervalMillis != noTelemetryPushMillis {
			t.Fatalf("error %d, %d metrics requested every %d ms; want none every %d ms",
				resp.ErrorCode, len(resp.RequestedMetrics), resp.PushIntervalMillis, noTelemetryPushMillis)
		}
		if resp.ClientInstanceID == ([16]byte{}) {
			t.Fatal("no client instance id assigned")
		}
		ids = append(ids, resp.ClientInstanceID)
	}
	if ids[0] == ids[1] {
		t.Fatal("two first requests got the same client instance id")
	}
	// A client that has its id keeps it.
	req := kmsg.NewPtrGetTelemetrySubscriptionsRequest()
	req.ClientInstanceID = ids[0]
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.ClientInstanceID != ids[0] {
		t.Fatalf("known client: id %x, %v; want %x", resp.ClientInstanceID, err, ids[0])
	}
}

// An in-process connection fails as a TCP one does when the broker's end
// closes: reads see the end of the stream, writes a broken pipe, which
// franz-go retries on a new connection.
func TestInProcessConnectionClosedByTheBroker(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := newListener(tcp)
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := l.dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	server := <-accepted
	if server.RemoteAddr().String() != "127.0.0.1:0" || client.RemoteAddr() != tcp.Addr() {
		t.Fatalf("addresses: the broker sees %v, the client %v", server.RemoteAddr(), client.RemoteAddr())
	}
	server.Close()
	if _, err := client.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read after the broker closed: %v, want EOF", err)
	}
	_, err = client.Write([]byte("request"))
	if !errors.Is(err, syscall.EPIPE) || !kgo.IsRetryableBrokerErr(err) {
		t.Fatalf("write after the broker closed: %v, want a retryable broken pipe", err)
	}
}

// The broker counts its connections, open and ever, and the bytes of
// requests and responses, over TCP and in process alike.
func TestBrokerStats(t *testing.T) {
	b, err := Start(Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	value := make([]byte, 10000) // random: compression cannot shrink it
	rand.Read(value)
	for _, dial := range []func(ctx context.Context, network, host string) (net.Conn, error){nil, b.Dial} {
		before := b.Stats()
		opts := []kgo.Opt{kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("stats"), kgo.AllowAutoTopicCreation()}
		if dial != nil {
			opts = append(opts, kgo.Dialer(dial))
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Value: value}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		during := b.Stats()
		cl.Close()
		if during.ConnectionsTotal <= before.ConnectionsTotal || during.Connections <= before.Connections ||
			during.BytesReceived-before.BytesReceived < int64(len(value)) || during.BytesSent <= before.BytesSent {
			t.Errorf("in process %v: before %+v, during %+v", dial != nil, before, during)
		}
		deadline := time.Now().Add(10 * time.Second)
		for b.Stats().Connections > before.Connections && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if after := b.Stats(); after.Connections != before.Connections {
			t.Errorf("in process %v: %d connections open after the client closed, %d before", dial != nil, after.Connections, before.Connections)
		}
	}
}

// Many clients asking at once for topics of their own (source tasks
// starting together) each get theirs, with the broker's default partition
// count, made in batches; they are there after a crash.
func TestConcurrentAutoCreatedTopics(t *testing.T) {
	dir := t.TempDir()
	b, err := Start(Config{Listen: "127.0.0.1:0", DataDir: dir, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 40
	errs := make(chan error, n)
	for i := range n {
		go func() {
			cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation(), kgo.Dialer(b.Dial))
			if err != nil {
				errs <- err
				return
			}
			defer cl.Close()
			errs <- cl.ProduceSync(ctx, &kgo.Record{Topic: fmt.Sprintf("auto-%d", i), Value: []byte("v")}).FirstErr()
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	addr := b.Addr()
	b.Close()
	b, err = Start(Config{Listen: addr, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topics, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		td, ok := topics[fmt.Sprintf("auto-%d", i)]
		if !ok || len(td.Partitions) != 2 {
			t.Errorf("auto-%d after a restart: %+v", i, td)
		}
	}
}
