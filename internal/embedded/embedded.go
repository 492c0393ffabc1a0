// Package embedded runs an in-process Kafka-protocol broker (franz-go's
// kfake) with its data on disk, so that connectd needs no Kafka installed
// and any Kafka client can still connect to it over TCP.
package embedded

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Broker is a running embedded broker.
type Broker struct {
	cluster    *kfake.Cluster
	ln         *listener
	addr       string
	partitions int32
	dataDir    string   // "" when the broker keeps everything in memory
	creating   sync.Map // topic -> chan struct{}, closed once its auto-creation is done
	creator    topicCreator
	log        *brokerLog
}

// Config says where the broker listens and keeps its data.
type Config struct {
	// Listen is host:port; port 0 picks a free one.
	Listen string
	// DataDir holds the log segments and group offsets; empty keeps
	// everything in memory.
	DataDir string
	// Partitions is the partition count of automatically created topics.
	Partitions int
	// Log gets the broker's warnings and errors; nil: slog's default.
	Log *slog.Logger
}

// Start starts a one-node broker. Topics are created on first use, as a
// development broker with auto.create.topics.enable would.
func Start(cfg Config) (*Broker, error) {
	host, portText, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("embedded kafka listener %q: %w", cfg.Listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("embedded kafka listener %q: bad port", cfg.Listen)
	}
	// kfake always asks to listen on 127.0.0.1; bind the host the user
	// asked for instead, so that other machines can reach it when wanted.
	var ln *listener
	listen := func(network, _ string) (net.Listener, error) {
		tcp, err := net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return nil, err
		}
		ln = newListener(tcp)
		return ln, nil
	}
	partitions := cfg.Partitions
	if partitions <= 0 {
		partitions = 1
	}
	log := &brokerLog{log: cfg.Log}
	if log.log == nil {
		log.log = slog.Default()
	}
	opts := []kfake.Opt{
		kfake.WithLogger(log),
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ListenFn(listen),
		kfake.DefaultNumPartitions(partitions),
	}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("embedded kafka data dir: %w", err)
		}
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("starting embedded kafka on %s: %w", cfg.Listen, err)
	}
	b := &Broker{cluster: c, ln: ln, addr: c.ListenAddrs()[0], partitions: int32(partitions), dataDir: cfg.DataDir, log: log}
	b.creator.b = b
	c.ControlKey(int16(kmsg.Metadata), b.autoCreate)
	c.ControlKey(int16(kmsg.CreateTopics), b.makeLogFiles)
	c.ControlKey(int16(kmsg.GetTelemetrySubscriptions), b.noTelemetry)
	return b, nil
}

// Stats are the broker's connection and traffic counters.
func (b *Broker) Stats() Stats { return b.ln.counters.stats() }

// noTelemetryPushMillis is Kafka's push interval when no client-metrics
// subscription matches a client (ClientMetricsConfigs' default).
const noTelemetryPushMillis = 5 * 60 * 1000

// noTelemetry answers GetTelemetrySubscriptions as a Kafka broker with no
// client-metrics subscription does: no metrics requested, so clients
// (KIP-714) push none. kfake otherwise asks every client for all of its
// metrics every 30 s, which nothing reads, and franz-go's compressor for
// them alone takes 8 MB of buffers in each worker.
func (b *Broker) noTelemetry(req kmsg.Request) (kmsg.Response, error, bool) {
	b.cluster.KeepControl()
	r := req.(*kmsg.GetTelemetrySubscriptionsRequest)
	resp := r.ResponseKind().(*kmsg.GetTelemetrySubscriptionsResponse)
	resp.ClientInstanceID = r.ClientInstanceID
	if resp.ClientInstanceID == ([16]byte{}) {
		// The broker assigns the id on the first request.
		rand.Read(resp.ClientInstanceID[:])
	}
	resp.PushIntervalMillis = noTelemetryPushMillis
	resp.TelemetryMaxBytes = 1 << 20
	return resp, nil, true
}

// autoCreate creates the unknown topics a client asks to auto-create.
// kfake's own auto-creation keeps such topics in memory only until a
// clean shutdown, so after a crash their data would be unreachable;
// topics made through CreateTopics requests are persisted at once
// (topicCreator sends them, in batches). Creating needs the broker's loop,
// on which this control runs: the request sleeps (SleepControl, which
// lets the loop go on) until the topics exist, and
// then kfake answers it with them. Without that wait the client would be
// told the topic is unknown and, franz-go's metadata rate limit applying,
// would produce only seconds later.
func (b *Broker) autoCreate(req kmsg.Request) (kmsg.Response, error, bool) {
	b.cluster.KeepControl()
	md := req.(*kmsg.MetadataRequest)
	if !md.AllowAutoTopicCreation {
		return nil, nil, false
	}
	var create []string
	var wait []chan struct{}
	for _, t := range md.Topics {
		if t.Topic == nil || *t.Topic == "" {
			continue
		}
		done := make(chan struct{})
		ch, loaded := b.creating.LoadOrStore(*t.Topic, done)
		if !loaded {
			create = append(create, *t.Topic)
		}
		select {
		case <-ch.(chan struct{}):
		default:
			wait = append(wait, ch.(chan struct{}))
		}
	}
	if len(wait) == 0 {
		return nil, nil, false
	}
	b.cluster.SleepControl(func() {
		b.creator.create(create)
		// This request's topics and those another request is creating.
		for _, ch := range wait {
			<-ch
		}
	})
	return nil, nil, false
}

// Addr is the host:port clients connect to.
func (b *Broker) Addr() string { return b.addr }

// Close stops the broker and flushes its data to disk.
func (b *Broker) Close() {
	b.creator.close()
	b.cluster.Close()
}

// StorageError is the broker's last failure to read or write its data
// dir, nil if it had none. A produce that the broker could not write is
// answered UNKNOWN_SERVER_ERROR, which says nothing of the disk: this
// does.
func (b *Broker) StorageError() error {
	b.log.mu.Lock()
	defer b.log.mu.Unlock()
	return b.log.storageErr
}

// brokerLog passes kfake's warnings and errors on, prefixed with
// "embedded broker: ". Most are about its data dir (a segment it could
// not write, a corrupt file it truncated), and the clients only see an
// error code for them.
type brokerLog struct {
	log        *slog.Logger
	mu         sync.Mutex
	storageErr error
}

func (l *brokerLog) Logf(level kfake.LogLevel, format string, args ...any) {
	if level > kfake.LogLevelWarn {
		return // one line for every request
	}
	msg := fmt.Sprintf(format, args...)
	if storageFailure(args) {
		l.mu.Lock()
		l.storageErr = errors.New(msg)
		l.mu.Unlock()
		l.log.Error("embedded broker: " + msg)
		return
	}
	if level == kfake.LogLevelError {
		l.log.Error("embedded broker: " + msg)
		return
	}
	l.log.Warn("embedded broker: " + msg)
}

// storageFailure tells whether a message's arguments hold a failed file
// operation, which names the path and what the system said.
func storageFailure(args []any) bool {
	for _, a := range args {
		err, ok := a.(error)
		if !ok {
			continue
		}
		if _, ok := errors.AsType[*fs.PathError](err); ok {
			return true
		}
		if _, ok := errors.AsType[*os.LinkError](err); ok {
			return true
		}
	}
	return false
}

// Compact runs log compaction now on every compacted topic, as the broker
// does by itself every log.cleaner.backoff.ms (an hour by default).
func (b *Broker) Compact() { b.cluster.Compact() }
