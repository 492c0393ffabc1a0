package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/directoffsets"
	"github.com/connectd/connectd/internal/storage"
)

// Direct mode reads and writes a source connector's offsets in the
// workers' offsets topic itself, for workers without the offsets REST API
// (Kafka Connect before 3.6) or whose REST API is down. Nothing stops the
// workers there, so changes are refused while the status topic says the
// connector runs, unless --force.

const (
	defaultOffsetsTopic = "connect-offsets"
	defaultStatusTopic  = "connect-status"
	defaultConfigTopic  = "connect-configs"
)

// ownOffsetsTopic is kf, or with no --offsets-topic given and a connector
// that names an offsets topic of its own (offsets.storage.topic, KIP-618)
// in the workers' config topic, kf with that topic: where its workers
// read its offsets first.
func (a *app) ownOffsetsTopic(ctx context.Context, kf *kafkaFlags, name string) *kafkaFlags {
	if kf.offsetsTopic != "" || kf.configTopic == "" {
		return kf
	}
	opts, seeds, err := a.kafkaOpts(kf)
	if err != nil {
		return kf
	}
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	config, err := directoffsets.ConnectorConfig(ctx, directoffsets.Config{Seeds: seeds, ClientOpts: opts[1:]}, kf.configTopic, name)
	switch {
	case errors.Is(err, directoffsets.ErrTopicNotFound):
		// Not a cluster with this config topic: the offsets topic is
		// the one named for the workers.
		return kf
	case err != nil:
		fmt.Fprintf(a.stderr, "warning: cannot read the config topic %s to find whether %s has an offsets topic of its own: %v\n", kf.configTopic, name, err)
		return kf
	}
	topic := config["offsets.storage.topic"]
	if topic == "" {
		return kf
	}
	fmt.Fprintf(a.stderr, "connector %s keeps its offsets in a topic of its own: %s (offsets.storage.topic)\n", name, topic)
	k := *kf
	k.offsetsTopic = topic
	return &k
}

// directStore is the offsets topic of --direct.
type directStore struct {
	cfg         directoffsets.Config
	statusTopic string
	cluster     string
	a           *app
}

// directStore reads the --direct flags (with the context's defaults).
func (a *app) directStore(kf *kafkaFlags) (*directStore, error) {
	opts, seeds, err := a.kafkaOpts(kf)
	if err != nil {
		return nil, err
	}
	conn, err := a.resolve()
	if err != nil {
		return nil, err
	}
	topic := kf.offsetsTopic
	if topic == "" {
		topic = conn.offsetsTopic
	}
	if topic == "" {
		topic = defaultOffsetsTopic
	}
	status := kf.statusTopic
	if status == "" {
		status = conn.statusTopic
	}
	if status == "" {
		status = defaultStatusTopic
	}
	// The tool's own franz-go options carry the bootstrap servers; the
	// package takes them as Seeds, the rest as ClientOpts.
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return &directStore{
		cfg:         directoffsets.Config{Seeds: seeds, Topic: topic, ClientOpts: opts[1:], Logger: log},
		statusTopic: status,
		cluster:     "kafka://" + strings.Join(seeds, ",") + "/" + topic,
		a:           a,
	}, nil
}

// ctx bounds a direct call: the package retries until its context ends.
func (d *directStore) ctx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d.a.timeout)
}

func (d *directStore) read(ctx context.Context, name string) ([]client.ConnectorOffset, error) {
	ctx, cancel := d.ctx(ctx)
	defer cancel()
	entries, err := directoffsets.Read(ctx, d.cfg, name)
	if err != nil {
		return nil, d.explain(err)
	}
	out := make([]client.ConnectorOffset, 0, len(entries))
	for _, e := range entries {
		out = append(out, client.ConnectorOffset{Partition: e.Partition, Offset: e.Offset})
	}
	return out, nil
}

func (d *directStore) explain(err error) error {
	if errors.Is(err, directoffsets.ErrTopicNotFound) {
		return withHint(err, "name the workers' offset.storage.topic with --offsets-topic (and status.storage.topic with --status-topic)")
	}
	return err
}

// directBackend changes offsets in the offsets topic.
func (a *app) directBackend(ctx context.Context, name string, kf *kafkaFlags) (*backend, error) {
	kf = a.ownOffsetsTopic(ctx, kf, name)
	d, err := a.directStore(kf)
	if err != nil {
		return nil, err
	}
	return &backend{
		cluster: d.cluster,
		direct:  true,
		state: func(ctx context.Context) (string, error) {
			ctx, cancel := d.ctx(ctx)
			defer cancel()
			running, err := directoffsets.Running(ctx, d.cfg, d.statusTopic, name)
			if err != nil {
				if kf.force {
					fmt.Fprintf(a.stderr, "warning: cannot tell whether connector %s runs: %v\n", name, err)
					return client.StateStopped, nil
				}
				return "", withHint(fmt.Errorf("cannot tell whether connector %s runs: %w", name, err),
					"name the status topic with --status-topic, or pass --force if you are sure it is stopped")
			}
			if running {
				return client.StateRunning, nil
			}
			return client.StateStopped, nil
		},
		read: func(ctx context.Context) ([]client.ConnectorOffset, error) { return d.read(ctx, name) },
		stop: func(_ context.Context, state string, cf *changeFlags) (bool, error) {
			if !kf.force {
				return false, withHint(fmt.Errorf("connector %s is %s according to %s: a running connector would overwrite the offsets", name, state, d.statusTopic),
					fmt.Sprintf("stop it first (connectctl stop %s, against a worker), or pass --force if the status is stale", name))
			}
			fmt.Fprintf(a.stderr, "warning: connector %s looks %s; changing its offsets anyway (--force)\n", name, state)
			return false, nil
		},
		write: func(ctx context.Context, patch []client.ConnectorOffset, all bool, _ *changeFlags) (string, error) {
			ctx, cancel := d.ctx(ctx)
			defer cancel()
			if all {
				n, err := directoffsets.Reset(ctx, d.cfg, name)
				if err != nil {
					return "", d.explain(err)
				}
				return fmt.Sprintf("%d partition%s reset", n, plural(n)), nil
			}
			entries := make([]storage.PartitionOffset, 0, len(patch))
			for _, o := range patch {
				entries = append(entries, storage.PartitionOffset{Partition: o.Partition, Offset: o.Offset})
			}
			return "", d.explain(directoffsets.Write(ctx, d.cfg, name, entries))
		},
		restore: func(context.Context, string, *changeFlags) (string, string, error) { return "", "", nil },
	}, nil
}
