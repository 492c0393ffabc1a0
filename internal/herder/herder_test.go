package herder

import (
	"net/http"
	"testing"

	"github.com/connectd/connectd/client"
)

func TestVerifySignature(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	body := []byte(`[{"task.class":"x"}]`)
	signed := http.Header{}
	signed.Set(signatureHeader, sign(key, body))
	signed.Set(signatureAlgHeader, signatureAlgorithm)
	if err := verifySignature(key, body, signed); err != nil {
		t.Fatalf("a good signature was refused: %v", err)
	}
	cases := []struct {
		name   string
		key    []byte
		body   []byte
		header http.Header
		status int
	}{
		{"missing", key, body, http.Header{}, 400},
		{"other algorithm", key, body, http.Header{signatureHeader: {"x"}, signatureAlgHeader: {"HmacSHA1"}}, 400},
		{"no key yet", nil, body, signed, 503},
		{"tampered body", key, []byte(`[]`), signed, 403},
		{"other key", []byte("another key"), body, signed, 403},
	}
	for _, c := range cases {
		err := verifySignature(c.key, c.body, c.header)
		he, ok := err.(*Error)
		if !ok || he.Status != c.status {
			t.Errorf("%s: %v, want status %d", c.name, err, c.status)
		}
	}
}

func TestParseSinkOffsetAliases(t *testing.T) {
	tp, off, err := parseSinkOffset(client.ConnectorOffset{
		Partition: map[string]any{"topic": "eip.orders.placed", "partition": int64(2)},
		Offset:    map[string]any{"offset": int64(0)},
	})
	if err != nil || tp.Topic != "eip.orders.placed" || tp.Partition != 2 || off == nil || *off != 0 {
		t.Fatalf("seed form: %v %v %v", tp, off, err)
	}
	// Kafka's keys win when both are given.
	tp, _, err = parseSinkOffset(client.ConnectorOffset{
		Partition: map[string]any{"kafka_topic": "a", "topic": "b", "kafka_partition": int64(0)},
	})
	if err != nil || tp.Topic != "a" {
		t.Fatalf("both forms: %v %v", tp, err)
	}
}

func TestParseInitialState(t *testing.T) {
	for in, want := range map[string]TargetState{"running": Started, "PAUSED": Paused, "Stopped": Stopped} {
		if got, err := ParseInitialState(in); err != nil || got != want {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	if _, err := ParseInitialState("started"); err == nil {
		t.Error("STARTED is not a REST initial state")
	}
}

// A config without a connector class is quoted in the 400 without its
// passwords.
func TestValidateQuotesNoPasswords(t *testing.T) {
	_, err := validate(nil, nil, map[string]string{"name": "a", "connection.url": "jdbc:postgresql://bob:s3cret@h/d", "database.password": "pw"}, 1, true)
	want := "Connector config {database.password=[hidden], name=a, connection.url=jdbc:postgresql://bob:[hidden]@h/d} contains no connector type"
	if he, ok := err.(*Error); !ok || he.Status != 400 || he.Message != want {
		t.Fatalf("%v, want a 400 with %s", err, want)
	}
}
