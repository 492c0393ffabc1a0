// Package embedded runs an in-process Kafka-protocol broker (franz-go's
// kfake) with its data on disk, so that connectd needs no Kafka installed
// and any Kafka client can still connect to it over TCP.
package embedded

import (
	"fmt"
	"net"
	"os"
	"strconv"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Broker is a running embedded broker.
type Broker struct {
	cluster *kfake.Cluster
	addr    string
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
	listen := func(network, _ string) (net.Listener, error) {
		return net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
	}
	partitions := cfg.Partitions
	if partitions <= 0 {
		partitions = 1
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ListenFn(listen),
		kfake.AllowAutoTopicCreation(),
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
	return &Broker{cluster: c, addr: c.ListenAddrs()[0]}, nil
}

// Addr is the host:port clients connect to.
func (b *Broker) Addr() string { return b.addr }

// Close stops the broker and flushes its data to disk.
func (b *Broker) Close() { b.cluster.Close() }
