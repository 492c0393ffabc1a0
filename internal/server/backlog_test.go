package server

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kgo"
)

// flushLogSink is a test plugin: its task counts the records it is given
// and records the offsets of every Flush.
const flushLogSinkClass = "test.connectd.FlushLogSink"

var flushLog struct {
	sync.Mutex
	records int
	flushes []int64 // partition 0's offset at each Flush that had one
}

var flushLogSink = testSink(flushLogSinkClass, func() connect.SinkTask { return &flushLogSinkTask{} })

type flushLogSinkTask struct{}

func (*flushLogSinkTask) Version() string                                        { return "test" }
func (*flushLogSinkTask) Start(connect.SinkTaskContext, map[string]string) error { return nil }
func (*flushLogSinkTask) Open([]connect.TopicPartition) error                    { return nil }
func (*flushLogSinkTask) Close([]connect.TopicPartition) error                   { return nil }
func (*flushLogSinkTask) Stop() error                                            { return nil }
func (*flushLogSinkTask) Put(records []connect.SinkRecord) error {
	flushLog.Lock()
	defer flushLog.Unlock()
	flushLog.records += len(records)
	return nil
}
func (*flushLogSinkTask) Flush(offsets map[connect.TopicPartition]int64) error {
	flushLog.Lock()
	defer flushLog.Unlock()
	for tp, off := range offsets {
		if tp.Partition == 0 {
			flushLog.flushes = append(flushLog.flushes, off)
		}
	}
	return nil
}

// A sink working through a backlog is not caught up merely because it
// emptied what its consumer had fetched, and is caught up when its last
// poll, however full, reached the end of the topic: with a long
// offset.flush.interval.ms, the task flushes (a JDBC sink commits a
// transaction) once, at the end of the backlog, not after every fetch,
// nor only an hour later.
func TestSinkBacklogFlushesAtTheEnd(t *testing.T) {
	dir := t.TempDir()
	// Small fetches: the consumer empties each before the next arrives.
	extra := map[string]string{"offset.flush.interval.ms": "3600000", "consumer.max.partition.fetch.bytes": "65536"}
	for k, v := range stringConverters {
		extra[k] = v
	}
	w := startWorker(t, dir, extra, flushLogSink)
	cl := w.client()
	for _, c := range []struct {
		name  string
		n     int
		value []byte
	}{
		{"many-fetches", 2500, bytes.Repeat([]byte("x"), 2000)},
		// Two polls of max.poll.records exactly, both from one fetch.
		{"full-polls", 2000, []byte("x")},
	} {
		t.Run(c.name, func(t *testing.T) {
			flushLog.Lock()
			flushLog.records, flushLog.flushes = 0, nil
			flushLog.Unlock()
			for range c.n {
				cl.Produce(context.Background(), &kgo.Record{Topic: c.name, Partition: 0, Value: c.value}, nil)
			}
			if err := cl.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			w.must(201, "POST", "/connectors", jsonString(map[string]any{
				"name": c.name, "config": map[string]string{"connector.class": flushLogSinkClass, "topics": c.name},
			}))
			eventually(t, fmt.Sprintf("offset %d committed", c.n), func() bool {
				_, body := w.do("GET", "/connectors/"+c.name+"/offsets", "")
				return strings.Contains(body, fmt.Sprintf(`"offset":{"kafka_offset":%d}`, c.n))
			})
			w.must(204, "DELETE", "/connectors/"+c.name, "")
			flushLog.Lock()
			defer flushLog.Unlock()
			if flushLog.records != c.n {
				t.Fatalf("the task got %d records, want %d", flushLog.records, c.n)
			}
			for _, off := range flushLog.flushes {
				if off != int64(c.n) {
					t.Fatalf("flushes at offsets %v: one before the end (%d) of the backlog", flushLog.flushes, c.n)
				}
			}
		})
	}
}
