package worker

import (
	"context"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/kafkasec"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const testTopic = "client-options-test"

func newClient(t *testing.T, seeds string, props map[string]string, extra ...kgo.Opt) *kgo.Client {
	t.Helper()
	props = maps.Clone(props)
	props["bootstrap.servers"] = seeds
	opts, err := clientOptions(props, nil)
	if err != nil {
		t.Fatalf("clientOptions: %v", err)
	}
	cl, err := kgo.NewClient(append(opts, extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// clientOptions refuses bad connection settings with ConnOptions' error.
func TestClientOptionsSecurityErrors(t *testing.T) {
	for _, props := range []map[string]string{
		{"security.protocol": "TLS"},
		{"security.protocol": "SSL", "ssl.truststore.type": "JKS"},
		{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI"},
	} {
		_, want := kafkasec.ConnOptions(props, nil)
		if want == nil {
			t.Fatalf("ConnOptions(%v) accepted it", props)
		}
		if _, err := clientOptions(props, nil); err == nil || err.Error() != want.Error() {
			t.Errorf("clientOptions(%v) error = %v, want %v", props, err, want)
		}
	}
}

// The consumer's fetch sizes take Kafka's names; a bad value is named as
// Kafka names it.
func TestFetchSizeOptions(t *testing.T) {
	for _, k := range []string{"fetch.max.bytes", "max.partition.fetch.bytes", "fetch.min.bytes"} {
		for _, v := range []string{"65536", "0"} {
			if _, err := clientOptions(map[string]string{k: v}, nil); err != nil {
				t.Errorf("%s=%s: %v", k, v, err)
			}
		}
		for v, why := range map[string]string{"lots": "Not a number of type INT", "4294967296": "Not a number of type INT",
			"-1": "Value must be at least 0"} {
			want := "Invalid value " + v + " for configuration " + k + ": " + why
			if _, err := clientOptions(map[string]string{k: v}, nil); err == nil || err.Error() != want {
				t.Errorf("%s=%s: error %v, want %q", k, v, err, want)
			}
		}
	}
}

// enable.metrics.push=false keeps a client from asking the broker for a
// client-metrics subscription (KIP-714), as it does a Java client.
func TestEnableMetricsPush(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, testTopic))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var asked atomic.Int32
	c.ControlKey(int16(kmsg.GetTelemetrySubscriptions), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		asked.Add(1)
		return nil, nil, false
	})
	seeds := strings.Join(c.ListenAddrs(), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	produce := func(push string) {
		cl := newClient(t, seeds, map[string]string{"enable.metrics.push": push})
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: testTopic, Value: []byte(push)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// The client that must not ask goes first and stays open while the
	// one that asks shows how soon asking happens.
	produce("false")
	produce("true")
	for asked.Load() == 0 {
		if ctx.Err() != nil {
			t.Fatal("a client with enable.metrics.push=true never asked for a subscription")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := asked.Load(); n != 1 {
		t.Fatalf("%d subscription requests, want 1: the client with enable.metrics.push=false asked", n)
	}
	for _, v := range []string{"yes", "1"} {
		want := "Invalid value " + v + " for configuration enable.metrics.push: Expected value to be either true or false"
		if _, err := clientOptions(map[string]string{"enable.metrics.push": v}, nil); err == nil || err.Error() != want {
			t.Errorf("enable.metrics.push=%s: error %v, want %q", v, err, want)
		}
	}
}

// transaction.timeout.ms reaches the broker with an exactly-once task's
// producer id (Kafka's producer key); a bad value is named as Kafka names
// it.
func TestTransactionTimeoutOption(t *testing.T) {
	if _, err := clientOptions(map[string]string{"transaction.timeout.ms": "soon"}, nil); err == nil || !strings.Contains(err.Error(), "Invalid value soon for configuration transaction.timeout.ms") {
		t.Errorf("a bad transaction.timeout.ms: %v", err)
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got atomic.Int32
	c.ControlKey(int16(kmsg.InitProducerID), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		got.Store(req.(*kmsg.InitProducerIDRequest).TransactionTimeoutMillis)
		return nil, nil, false
	})
	cl := newClient(t, c.ListenAddrs()[0], map[string]string{"transaction.timeout.ms": "12345"}, kgo.TransactionalID("t"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		t.Fatal(err)
	}
	if got.Load() != 12345 {
		t.Errorf("InitProducerID asked for a timeout of %d ms, want 12345", got.Load())
	}
}
