package transforms

import (
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

func TestTimestampRouter(t *testing.T) {
	ts := time.UnixMilli(1483425001864).UTC() // 2017-01-03T06:30:01.864Z, Kafka's TimestampRouterTest
	tests := []struct {
		props map[string]string
		topic string
		want  string
	}{
		{map[string]string{}, "test", "test-20170103"},
		{map[string]string{"topic.format": "${timestamp}_${topic}_${topic}", "timestamp.format": "yyyy-MM-dd'T'HH"}, "t", "2017-01-03T06_t_t"},
		{map[string]string{"topic.format": "x-${topic}"}, "${timestamp}", "x-20170103"},
	}
	for _, tc := range tests {
		tr := configured(t, &TimestampRouter{}, tc.props)
		out, err := tr.Apply(&connect.Record{Topic: tc.topic, Timestamp: ts})
		if err != nil || out.Topic != tc.want {
			t.Errorf("%v: %v %v, want %q", tc.props, out, err, tc.want)
		}
	}
}

func TestTimestampRouterErrors(t *testing.T) {
	if err := (&TimestampRouter{}).Configure(map[string]string{"timestamp.format": "yyyy-qq"}); err == nil ||
		err.Error() != "Invalid value yyyy-qq for configuration timestamp.format: Illegal pattern character 'q'" {
		t.Errorf("bad pattern: %v", err)
	}
	tr := configured(t, &TimestampRouter{}, map[string]string{})
	p := int32(0)
	_, msg := applyErr(tr, &connect.Record{Topic: "t", Partition: &p, Sink: true, Offset: 5, TimestampType: connect.NoTimestampType, Value: "v", ValueSchema: connect.StringSchema})
	want := "Timestamp missing on record: SinkRecord{kafkaOffset=5, timestampType=NoTimestampType, originalTopic=t, originalKafkaPartition=0, originalKafkaOffset=5} " +
		"ConnectRecord{topic='t', kafkaPartition=0, key=null, keySchema=null, value=v, valueSchema=Schema{STRING}, timestamp=null, headers=ConnectHeaders(headers=)}"
	if msg != want {
		t.Errorf("got  %s\nwant %s", msg, want)
	}
}

// The routed record is written as it came: what Kafka's JsonConverter
// writes for it is unchanged.
func TestTimestampRouterGolden(t *testing.T) {
	s, v := decodeJSON(t, false, `{"schema":{"type":"string","optional":false},"payload":"x"}`)
	tr := configured(t, &TimestampRouter{}, map[string]string{})
	out, err := tr.Apply(&connect.Record{Topic: "t", Timestamp: time.UnixMilli(0), ValueSchema: s, Value: v})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := encodeJSON(t, false, out.ValueSchema, out.Value), `{"schema":{"type":"string","optional":false},"payload":"x"}`; got != want || out.Topic != "t-19700101" {
		t.Errorf("got %s on %s", got, out.Topic)
	}
}
