package server

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/connectd/connectd/internal/builtin"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// A distributed worker reaches a cluster that requires SASL (SCRAM) for
// its internal topics, its group and, with the producer. prefix as in
// Kafka Connect, for its connectors' clients.
func TestDistributedOverSASL(t *testing.T) {
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-256", "connect", "connect-secret"), kfake.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	jaas := `org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="connect-secret";`
	props := map[string]string{
		"bootstrap.servers":                 kc.ListenAddrs()[0],
		"security.protocol":                 "SASL_PLAINTEXT",
		"sasl.mechanism":                    "SCRAM-SHA-256",
		"sasl.jaas.config":                  jaas,
		"producer.security.protocol":        "SASL_PLAINTEXT",
		"producer.sasl.mechanism":           "SCRAM-SHA-256",
		"producer.sasl.jaas.config":         jaas,
		"listeners":                         "http://127.0.0.1:0",
		"group.id":                          "secure-cluster",
		"config.storage.topic":              "connect-configs",
		"offset.storage.topic":              "connect-offsets",
		"status.storage.topic":              "connect-status",
		"config.storage.replication.factor": "1",
		"offset.storage.replication.factor": "1",
		"status.storage.replication.factor": "1",
		"session.timeout.ms":                "6000",
		"value.converter":                   "org.apache.kafka.connect.storage.StringConverter",
	}
	d, err := StartDistributed(context.Background(), props, builtin.Plugins(), testLoggers(t))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	w := &testWorker{t: t, s: &Standalone{RESTAddr: d.RESTAddr}}
	eventually(t, "the worker healthy", func() bool { code, _ := w.do("GET", "/health", ""); return code == 200 })
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, lines(1, 3)...)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "src", "config": map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "secure"},
	}))
	auth := scram.Auth{User: "connect", Pass: "connect-secret"}.AsSha256Mechanism()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.SASL(auth), kgo.ConsumeTopics("secure"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []string
	ctx, cancel := context.WithTimeout(context.Background(), 60e9)
	defer cancel()
	for len(got) < 3 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("got %v before the deadline", got)
		}
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	if !slices.Equal(got, lines(1, 3)) {
		t.Fatalf("topic holds %v", got)
	}
}
