package transforms

import (
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/javatime"
	"github.com/connectd/connectd/internal/owned"
)

func timestampRouterPlugins() []connect.Plugin {
	return []connect.Plugin{transformPlugin("TimestampRouter", func() connect.Transformation { return &TimestampRouter{} })}
}

var timestampRouterConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "topic.format", Type: connect.ConfigString, Default: "${topic}-${timestamp}", Importance: connect.High,
		Doc: "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."}).
	Define(connect.ConfigKey{Name: "timestamp.format", Type: connect.ConfigString, Default: "yyyyMMdd", Importance: connect.High,
		Doc: "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."})

// TimestampRouter is Kafka's TimestampRouter: the topic becomes
// topic.format with ${topic} replaced by the topic and then ${timestamp}
// by the record's timestamp in timestamp.format, in UTC.
type TimestampRouter struct {
	topicFormat string
	format      *javatime.Format
}

func (t *TimestampRouter) Config() *connect.ConfigDef { return timestampRouterConfig }

// Configure refuses a pattern SimpleDateFormat refuses; Kafka accepts it
// and fails every record instead, when it first makes its formatter.
func (t *TimestampRouter) Configure(props map[string]string) error {
	c, err := timestampRouterConfig.Parse(props)
	if err != nil {
		return err
	}
	pattern := c.String("timestamp.format")
	f, err := javatime.Compile(pattern, time.UTC)
	if err != nil {
		return &connect.ConfigError{Name: "timestamp.format", Message: fmt.Sprintf("Invalid value %s for configuration timestamp.format: %v", pattern, err)}
	}
	t.topicFormat, t.format = c.String("topic.format"), f
	return nil
}

// ApplyOwned is Apply in a worker's chain (internal/owned): the key and
// value stay what they were, the record's own or not.
func (t *TimestampRouter) ApplyOwned(r *connect.Record, st *owned.State[connect.Struct]) (*connect.Record, error) {
	return t.Apply(r)
}

func (t *TimestampRouter) Apply(r *connect.Record) (*connect.Record, error) {
	if r.Timestamp.IsZero() {
		return nil, dataError("Timestamp missing on record: %s", recordString(r))
	}
	topic := strings.ReplaceAll(t.topicFormat, "${topic}", r.Topic)
	r.Topic = strings.ReplaceAll(topic, "${timestamp}", t.format.Format(r.Timestamp))
	return r, nil
}

// recordString is the toString of Kafka's SinkRecord, or of the
// ConnectRecord part of a SourceRecord, whose source partition and offset
// a transform does not see here.
func recordString(r *connect.Record) string {
	partition := "null"
	if r.Partition != nil {
		partition = fmt.Sprint(*r.Partition)
	}
	headers := ""
	if len(r.Headers) > 0 {
		hs := make([]string, len(r.Headers))
		for i, h := range r.Headers {
			hs[i] = fmt.Sprintf("ConnectHeader(key=%s, value=%s, schema=%s)", h.Key, valueString(h.Value), schemaString(h.Schema))
		}
		headers = "[" + strings.Join(hs, ", ") + "]"
	}
	s := fmt.Sprintf("ConnectRecord{topic='%s', kafkaPartition=%s, key=%s, keySchema=%s, value=%s, valueSchema=%s, timestamp=null, headers=ConnectHeaders(headers=%s)}",
		r.Topic, partition, valueString(r.Key), schemaString(r.KeySchema), valueString(r.Value), schemaString(r.ValueSchema), headers)
	if r.Sink {
		s = fmt.Sprintf("SinkRecord{kafkaOffset=%d, timestampType=%s, originalTopic=%s, originalKafkaPartition=%s, originalKafkaOffset=%d} ",
			r.Offset, r.TimestampType, r.Topic, partition, r.Offset) + s
	}
	return s
}
