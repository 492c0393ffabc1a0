package connect_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/connectd/connectd/connect"
)

// greetSource writes "hello, <name>" for each name of its names setting,
// one record per Poll; its offset is how many it wrote.
type greetSource struct{ config map[string]string }

func (*greetSource) Version() string { return "1.0" }
func (*greetSource) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "names", Type: connect.ConfigList, Required: true, Importance: connect.High, Doc: "Who to greet."}).
		Define(connect.ConfigKey{Name: "topic", Type: connect.ConfigString, Required: true, Importance: connect.High, Doc: "The topic to write to."})
}
func (s *greetSource) Start(_ connect.ConnectorContext, config map[string]string) error {
	s.config = config
	return nil
}
func (s *greetSource) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{s.config}, nil
}
func (*greetSource) Stop() error                 { return nil }
func (*greetSource) TaskClass() string           { return "com.example.GreetSourceTask" }
func (*greetSource) NewTask() connect.SourceTask { return &greetTask{} }

type greetTask struct {
	topic string
	names []string
	next  int64
	log   *slog.Logger
}

func (*greetTask) Version() string { return "1.0" }
func (t *greetTask) Start(ctx connect.SourceTaskContext, config map[string]string) error {
	// Log through the context's logger: its lines name the connector and
	// the task, hide the connector's secrets, and follow the level
	// /admin/loggers sets for the task's class.
	t.log = ctx.Logger()
	parsed, err := (&greetSource{}).Config().Parse(config)
	if err != nil {
		return err
	}
	t.topic, t.names = parsed.String("topic"), parsed.Get("names").([]string)
	// Go on from the stored offset: records up to it reached Kafka.
	offset, err := ctx.Offset(map[string]any{"greeter": "names"})
	if err != nil {
		return err
	}
	if n, ok := offset["written"].(int64); ok {
		t.next = n
		t.log.Info("Resuming after the stored offset", "written", n)
	}
	return nil
}
func (t *greetTask) Poll(context.Context) ([]*connect.SourceRecord, error) {
	if t.next >= int64(len(t.names)) {
		return nil, nil
	}
	rec := &connect.SourceRecord{
		SourcePartition: map[string]any{"greeter": "names"},
		SourceOffset:    map[string]any{"written": t.next + 1},
		Topic:           t.topic,
		ValueSchema:     connect.StringSchema,
		Value:           "hello, " + t.names[t.next],
	}
	t.next++
	return []*connect.SourceRecord{rec}, nil
}
func (*greetTask) Stop() error { return nil }

// storedOffsets stands in for the context a worker gives a task: the
// offsets the worker stored, and a logger (here slog's default).
type storedOffsets map[string]any

func (o storedOffsets) Offset(map[string]any) (map[string]any, error) { return o, nil }
func (storedOffsets) Logger() *slog.Logger                            { return slog.Default() }
func (storedOffsets) TransactionContext() connect.TransactionContext  { return nil }

// A source connector: the Plugin a worker is given, and what the worker
// does with it, here by hand: start the connector, make its task from the
// task config, start the task from its stored offset and poll it.
func ExampleSourceConnector() {
	plugin := connect.Plugin{
		Class:   "com.example.GreetSourceConnector",
		Type:    connect.PluginSource,
		Version: "1.0",
		New:     func() any { return &greetSource{} },
	}
	conn := plugin.New().(connect.SourceConnector)
	if err := conn.Start(nil, map[string]string{"names": "ada,grace,linus", "topic": "greetings"}); err != nil {
		panic(err)
	}
	configs, _ := conn.TaskConfigs(1)
	task := conn.NewTask()
	// A restart after "ada" reached Kafka.
	if err := task.Start(storedOffsets{"written": int64(1)}, configs[0]); err != nil {
		panic(err)
	}
	for {
		recs, _ := task.Poll(context.Background())
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			fmt.Println(r.Topic, r.Value, r.SourceOffset)
		}
	}
	// Output:
	// greetings hello, grace map[written:2]
	// greetings hello, linus map[written:3]
}

// lineSink appends each record's value, as a line, to out; Flush is where
// a real sink makes them durable.
type lineSink struct{ out *strings.Builder }

func (*lineSink) Version() string                                         { return "1.0" }
func (*lineSink) Config() *connect.ConfigDef                              { return connect.NewConfigDef() }
func (*lineSink) Start(connect.ConnectorContext, map[string]string) error { return nil }
func (*lineSink) TaskConfigs(int) ([]map[string]string, error) {
	return []map[string]string{{}}, nil
}
func (*lineSink) Stop() error                 { return nil }
func (*lineSink) TaskClass() string           { return "com.example.LineSinkTask" }
func (s *lineSink) NewTask() connect.SinkTask { return &lineTask{out: s.out} }

type lineTask struct {
	out     *strings.Builder
	pending []string
}

func (*lineTask) Version() string                                        { return "1.0" }
func (*lineTask) Start(connect.SinkTaskContext, map[string]string) error { return nil }
func (*lineTask) Open([]connect.TopicPartition) error                    { return nil }
func (t *lineTask) Put(records []connect.SinkRecord) error {
	for _, r := range records {
		t.pending = append(t.pending, fmt.Sprint(r.Value))
	}
	return nil
}

// Flush writes what Put gave; the worker then commits offsets, the next
// record to consume of each partition.
func (t *lineTask) Flush(offsets map[connect.TopicPartition]int64) error {
	for _, l := range t.pending {
		t.out.WriteString(l + "\n")
	}
	t.pending = nil
	return nil
}
func (*lineTask) Close([]connect.TopicPartition) error { return nil }
func (*lineTask) Stop() error                          { return nil }

// A sink connector's task, driven as the worker drives it: records of its
// topics to Put, then Flush with the offsets the worker will commit.
func ExampleSinkConnector() {
	var out strings.Builder
	conn := &lineSink{out: &out}
	task := conn.NewTask()
	tp := connect.TopicPartition{Topic: "greetings", Partition: 0}
	if err := task.Start(nil, map[string]string{}); err != nil {
		panic(err)
	}
	_ = task.Open([]connect.TopicPartition{tp})
	_ = task.Put([]connect.SinkRecord{
		{Topic: "greetings", Offset: 41, ValueSchema: connect.StringSchema, Value: "hello, grace"},
		{Topic: "greetings", Offset: 42, ValueSchema: connect.StringSchema, Value: "hello, linus"},
	})
	_ = task.Flush(map[connect.TopicPartition]int64{tp: 43})
	fmt.Print(out.String())
	// Output:
	// hello, grace
	// hello, linus
}

// maskEmail is a transformation: it replaces the local part of the string
// field its field setting names with "***", and leaves records without
// that field as they are. It keeps nothing of a record, and builds a new
// struct rather than change the one it was given, which the task that
// made it may share.
type maskEmail struct{ field string }

func (*maskEmail) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "field", Type: connect.ConfigString, Required: true, Importance: connect.High, Doc: "The field holding an e-mail address."})
}

func (m *maskEmail) Configure(config map[string]string) error {
	parsed, err := m.Config().Parse(config)
	if err != nil {
		return err
	}
	m.field = parsed.String("field")
	return nil
}

func (m *maskEmail) Apply(r *connect.Record) (*connect.Record, error) {
	in, ok := r.Value.(*connect.Struct)
	if !ok {
		return r, nil
	}
	f := in.Schema().Field(m.field)
	if f == nil {
		return r, nil
	}
	out := connect.NewStruct(in.Schema())
	for i := range in.Schema().Fields {
		out.SetValueAt(i, in.ValueAt(i))
	}
	if email, ok := in.At(f.Index).(string); ok {
		if at := strings.IndexByte(email, '@'); at >= 0 {
			if err := out.SetAt(f.Index, "***"+email[at:]); err != nil {
				return nil, err
			}
		}
	}
	r.Value = out
	return r, nil
}

// A transformation, registered under its class name beside the
// connectors: a connector config names it in transforms.<alias>.type, and
// the worker configures it with the alias's keys and applies it to each
// record, here by hand.
func ExampleTransformation() {
	plugin := connect.Plugin{
		Class: "com.example.MaskEmail",
		Type:  connect.PluginTransformation,
		New:   func() any { return new(maskEmail) },
	}
	// transforms=mask, transforms.mask.type=com.example.MaskEmail,
	// transforms.mask.field=email
	t := plugin.New().(connect.Transformation)
	if err := t.Configure(map[string]string{"field": "email"}); err != nil {
		fmt.Println(err)
		return
	}
	schema := connect.StructSchema("customer",
		connect.Field{Name: "id", Schema: connect.Int64Schema},
		connect.Field{Name: "email", Schema: connect.StringSchema})
	value := connect.NewStruct(schema).Put("id", int64(7)).Put("email", "ada@example.com")
	out, err := t.Apply(&connect.Record{Topic: "customers", ValueSchema: schema, Value: value})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out.Value.(*connect.Struct).Get("email"), value.Get("email"))
	// Without the key, the worker refuses the connector's config.
	fmt.Println(new(maskEmail).Configure(map[string]string{}))
	// Output:
	// ***@example.com ada@example.com
	// Missing required configuration "field" which has no default value.
}
