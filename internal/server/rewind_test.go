package server

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kgo"
)

// rewindSink is a test plugin: its task records every offset it is given
// and, the first time it gets offset rewindAt, ignores the rest of the
// batch and asks the runtime (SetOffset) to consume again from rewindTo,
// as a sink that keeps its position in the outside system does.
const (
	rewindSinkClass = "test.connectd.RewindSink"
	rewindAt        = 2500
	rewindTo        = 1000
)

var rewindLog struct {
	sync.Mutex
	offsets []int64
}

var rewindSink = testSink(rewindSinkClass, func() connect.SinkTask { return &rewindSinkTask{} })

type rewindSinkTask struct {
	ctx     connect.SinkTaskContext
	rewound bool
}

func (*rewindSinkTask) Version() string { return "test" }
func (t *rewindSinkTask) Start(ctx connect.SinkTaskContext, _ map[string]string) error {
	t.ctx = ctx
	return nil
}
func (*rewindSinkTask) Open([]connect.TopicPartition) error          { return nil }
func (*rewindSinkTask) Flush(map[connect.TopicPartition]int64) error { return nil }
func (*rewindSinkTask) Close([]connect.TopicPartition) error         { return nil }
func (*rewindSinkTask) Stop() error                                  { return nil }
func (t *rewindSinkTask) Put(records []connect.SinkRecord) error {
	rewindLog.Lock()
	defer rewindLog.Unlock()
	for _, r := range records {
		rewindLog.offsets = append(rewindLog.offsets, r.Offset)
		if r.Offset == rewindAt && !t.rewound {
			t.rewound = true
			t.ctx.SetOffset(connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}, rewindTo)
			break // the rest of this batch is dropped by the task
		}
	}
	return nil
}

// A rewind asked during a Put takes effect at once: the next record the
// task gets is the one at the new offset, even though the runtime
// converted the next poll's records while that Put ran; then every record
// after it follows, in order.
func TestSinkRewindDuringPut(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, stringConverters, rewindSink)
	cl := w.client()
	const n = 10000
	for i := range n {
		cl.Produce(context.Background(), &kgo.Record{Topic: "rewind", Partition: 0, Value: []byte(strconv.Itoa(i))}, nil)
	}
	if err := cl.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "rewinder", "config": map[string]string{"connector.class": rewindSinkClass, "topics": "rewind"},
	}))
	want := int64(0)
	var got []int64
	eventually(t, fmt.Sprintf("offsets 0..%d, then %d..%d", rewindAt, rewindTo, n-1), func() bool {
		rewindLog.Lock()
		got = append([]int64(nil), rewindLog.offsets...)
		rewindLog.Unlock()
		return len(got) >= rewindAt+1+n-rewindTo
	})
	for i, off := range got {
		if off != want {
			t.Fatalf("record %d delivered offset %d, want %d (a rewind to %d at %d)", i, off, want, rewindTo, rewindAt)
		}
		want++
		if i == rewindAt {
			want = rewindTo
		}
	}
	if want != n {
		t.Fatalf("delivered up to offset %d, want %d", want-1, n-1)
	}
}
