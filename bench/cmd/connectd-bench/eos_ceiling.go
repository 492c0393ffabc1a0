package main

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ---- eos-file's ceiling ----

// eosTxnLines is the file source's batch.size default: the lines of one
// poll, and so of one transaction with transaction.boundary=poll.
const eosTxnLines = 2000

// bareRun is one pass of figure 11's lines written by franz-go alone, from
// the bench to the figure's broker, with the exactly-once worker's task
// producer settings: no file, no converter, no worker, only the client
// and the broker. Its transactions are the poll boundary's: 2,000 lines
// and an offsets record each, flushed, then committed.
type bareRun struct {
	atLeastOnce, txns float64 // lines/s
}

// bareLines is what the file source with the StringConverter writes for
// writeLinesFile's n lines of size bytes: each line without its newline.
func bareLines(n, size int) [][]byte {
	vs := make([][]byte, n)
	for i := range vs {
		l := appendLine(nil, i, size)
		vs[i] = l[:len(l)-1]
	}
	return vs
}

// bareProducer is a client as the worker makes an exactly-once task's
// producer (source.go): a source producer's settings, deliveries retried
// without end, no bound on the records buffered; transactional when
// txnID is set.
func bareProducer(broker, txnID string) (*kgo.Client, error) {
	opts := append(sourceProducerOpts(broker), kgo.RecordDeliveryTimeout(0), kgo.MaxBufferedRecords(1<<30))
	if txnID != "" {
		opts = append(opts, kgo.TransactionalID(txnID), kgo.TransactionTimeout(time.Minute))
	}
	return kgo.NewClient(opts...)
}

// eosBare writes lines to two fresh topics on broker: at least once, and
// in poll-sized transactions, each with an offsets record on a third
// topic as the worker writes one.
func eosBare(ctx context.Context, adm *kadm.Client, broker string, lines [][]byte, r int) (run bareRun, err error) {
	alo, txn, offsets := fmt.Sprintf("eos-bare-alo-%d", r), fmt.Sprintf("eos-bare-txn-%d", r), fmt.Sprintf("eos-bare-offsets-%d", r)
	for _, t := range []string{alo, txn, offsets} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, t); err != nil {
			return run, fmt.Errorf("creating topic %s: %w", t, err)
		}
	}
	var failed firstError
	// timed runs send over the lines in batches of eosTxnLines, each
	// made ahead on a goroutine of its own as the worker's polling
	// goroutine makes them, so that the time is the client's and the
	// broker's.
	timed := func(txnID, topic string, send func(cl *kgo.Client, batch []kgo.Record, to int) error) (float64, error) {
		cl, err := bareProducer(broker, txnID)
		if err != nil {
			return 0, err
		}
		defer cl.Close()
		// The topic's metadata and the producer id, out of the timing:
		// the figure's ratio is of streams, not of starts.
		warm := &kgo.Record{Topic: topic, Value: []byte("warm")}
		if txnID == "" {
			err = cl.ProduceSync(ctx, warm).FirstErr()
		} else {
			err = bareTxn(ctx, cl, func() { cl.Produce(ctx, warm, failed.promise) })
		}
		if err != nil {
			return 0, err
		}
		bctx, cancel := context.WithCancel(ctx)
		defer cancel()
		batches := make(chan []kgo.Record, 1)
		go func() {
			defer close(batches)
			for from := 0; from < len(lines); from += eosTxnLines {
				batch := make([]kgo.Record, min(eosTxnLines, len(lines)-from))
				for i := range batch {
					batch[i] = kgo.Record{Topic: topic, Value: lines[from+i]}
				}
				select {
				case batches <- batch:
				case <-bctx.Done():
					return
				}
			}
		}()
		start, to := time.Now(), 0
		for batch := range batches {
			to += len(batch)
			if err := send(cl, batch, to); err != nil {
				return 0, err
			}
			if failed.err != nil {
				return 0, failed.err
			}
		}
		if txnID == "" {
			if err := cl.Flush(ctx); err != nil {
				return 0, err
			}
		}
		d := time.Since(start)
		if failed.err != nil {
			return 0, failed.err
		}
		return float64(len(lines)) / d.Seconds(), nil
	}
	produce := func(cl *kgo.Client, batch []kgo.Record) {
		for i := range batch {
			cl.Produce(ctx, &batch[i], failed.promise)
		}
	}
	if run.atLeastOnce, err = timed("", alo, func(cl *kgo.Client, batch []kgo.Record, _ int) error {
		produce(cl, batch)
		return nil
	}); err != nil {
		return run, fmt.Errorf("at least once: %w", err)
	}
	key := []byte(`["eos-bare",{"filename":"/tmp/connectd-bench/eos-file-lines.txt"}]`)
	if run.txns, err = timed(fmt.Sprintf("eos-bare-%d", r), txn, func(cl *kgo.Client, batch []kgo.Record, to int) error {
		return bareTxn(ctx, cl, func() {
			produce(cl, batch)
			// An offsets record of the size a file source's
			// transaction ends with.
			cl.Produce(ctx, &kgo.Record{Topic: offsets, Key: key, Value: fmt.Appendf(nil, `{"position":%d}`, to*100)}, failed.promise)
		})
	}); err != nil {
		return run, fmt.Errorf("transactions of %d lines: %w", eosTxnLines, err)
	}
	return run, nil
}

// bareTxn is one transaction as the worker's poll boundary makes it:
// begun, its records handed over, flushed, committed.
func bareTxn(ctx context.Context, cl *kgo.Client, produce func()) error {
	if err := cl.BeginTransaction(); err != nil {
		return err
	}
	produce()
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	return cl.EndTransaction(ctx, kgo.TryCommit)
}
