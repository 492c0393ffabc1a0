package postgrescdc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// walEvent is one message of the replication stream: a decoded pgoutput
// message at walStart, or (msg nil) a server keepalive saying every
// transaction that committed before walEnd was sent.
type walEvent struct {
	walStart pglogrepl.LSN
	msg      pglogrepl.Message
	walEnd   pglogrepl.LSN
}

// replStream reads a started replication stream on its own goroutine and
// hands batches of decoded messages to the task. It alone writes to the
// connection: it answers the server's keepalives and sends the standby
// status updates that confirm a flush position to the slot. That position
// only ever is one the task asked for in Commit, i.e. one the offset store
// holds.
type replStream struct {
	conn     *pgconn.PgConn
	interval time.Duration

	batches chan []walEvent
	stop    chan struct{}
	done    chan struct{}

	flushWanted atomic.Uint64 // highest position Commit asked to confirm
	flushSent   atomic.Uint64 // highest position confirmed to the server

	mu  sync.Mutex
	err error // why the stream ended
}

// readTimeout bounds a wait for the server, so that flush requests and
// status updates are never late by more.
const readTimeout = 100 * time.Millisecond

// maxEventBatch bounds the messages handed over at once.
const maxEventBatch = 512

func startStream(conn *pgconn.PgConn, interval time.Duration, queue int, flushed pglogrepl.LSN) *replStream {
	s := &replStream{
		conn: conn, interval: interval,
		batches: make(chan []walEvent, max(2, queue/maxEventBatch)),
		stop:    make(chan struct{}), done: make(chan struct{}),
	}
	s.flushWanted.Store(uint64(flushed))
	s.flushSent.Store(uint64(flushed))
	go s.run()
	return s
}

// requestFlush asks for lsn to be confirmed to the slot; the reader does it
// at once.
func (s *replStream) requestFlush(lsn pglogrepl.LSN) {
	for {
		cur := s.flushWanted.Load()
		if uint64(lsn) <= cur {
			return
		}
		if s.flushWanted.CompareAndSwap(cur, uint64(lsn)) {
			break
		}
	}
	// Wake the reader up from its wait for the server.
	_ = s.conn.Conn().SetReadDeadline(time.Now())
}

func (s *replStream) setErr(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

func (s *replStream) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// close stops the reader and closes the connection.
func (s *replStream) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	_ = s.conn.Conn().SetReadDeadline(time.Now())
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.conn.Close(ctx)
}

func (s *replStream) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// sendStatus confirms the wanted flush position (write, flush and apply
// all say it: nothing past it may be taken as received for good).
func (s *replStream) sendStatus(reply bool) error {
	lsn := pglogrepl.LSN(s.flushWanted.Load())
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: lsn, WALFlushPosition: lsn, WALApplyPosition: lsn, ReplyRequested: reply,
	})
	if err != nil {
		return fmt.Errorf("sending the replication status to the server: %w", err)
	}
	s.flushSent.Store(uint64(lsn))
	return nil
}

func (s *replStream) run() {
	defer close(s.done)
	defer close(s.batches)
	nextStatus := time.Now().Add(s.interval)
	var batch []walEvent
	replyNow := false
	for !s.stopped() {
		now := time.Now()
		if replyNow || s.flushWanted.Load() > s.flushSent.Load() || !now.Before(nextStatus) {
			if err := s.sendStatus(false); err != nil {
				s.setErr(err)
				return
			}
			replyNow, nextStatus = false, now.Add(s.interval)
		}
		if len(batch) > 0 && (len(batch) >= maxEventBatch || s.conn.Frontend().ReadBufferLen() == 0) {
			if !s.deliver(batch, &nextStatus) {
				return
			}
			batch = nil
			continue
		}
		deadline := now.Add(readTimeout)
		if nextStatus.Before(deadline) {
			deadline = nextStatus
		}
		_ = s.conn.Conn().SetReadDeadline(deadline)
		msg, err := s.conn.ReceiveMessage(context.Background())
		if err != nil {
			if pgconn.Timeout(err) {
				continue
			}
			if !s.stopped() {
				s.setErr(fmt.Errorf("reading the replication stream: %w", err))
			}
			s.deliverLast(batch)
			return
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if len(m.Data) == 0 {
				continue
			}
			switch m.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				pkm, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
				if err != nil {
					s.setErr(err)
					s.deliverLast(batch)
					return
				}
				replyNow = replyNow || pkm.ReplyRequested
				if n := len(batch); n > 0 && batch[n-1].msg == nil {
					batch[n-1].walEnd = pkm.ServerWALEnd
				} else {
					batch = append(batch, walEvent{walEnd: pkm.ServerWALEnd})
				}
			case pglogrepl.XLogDataByteID:
				xld, err := pglogrepl.ParseXLogData(m.Data[1:])
				if err != nil {
					s.setErr(err)
					s.deliverLast(batch)
					return
				}
				// Parse copies what it keeps: the buffer is reused by the
				// next receive.
				lm, err := pglogrepl.Parse(xld.WALData)
				if err != nil {
					s.setErr(fmt.Errorf("decoding a pgoutput message at %s: %w", xld.WALStart, err))
					s.deliverLast(batch)
					return
				}
				batch = append(batch, walEvent{walStart: xld.WALStart, msg: lm})
			}
		case *pgproto3.ErrorResponse:
			s.setErr(pgconn.ErrorResponseToPgError(m))
			s.deliverLast(batch)
			return
		case *pgproto3.CopyDone:
			s.setErr(errors.New("the server ended the replication stream"))
			s.deliverLast(batch)
			return
		}
	}
}

// deliver hands a batch to the task, answering the server meanwhile if the
// task is slow. It returns false when the stream stops.
func (s *replStream) deliver(batch []walEvent, nextStatus *time.Time) bool {
	for {
		wait := time.Until(*nextStatus)
		if wait < time.Millisecond {
			wait = time.Millisecond
		}
		t := time.NewTimer(min(wait, readTimeout))
		select {
		case s.batches <- batch:
			t.Stop()
			return true
		case <-s.stop:
			t.Stop()
			return false
		case <-t.C:
		}
		if s.flushWanted.Load() > s.flushSent.Load() || !time.Now().Before(*nextStatus) {
			if err := s.sendStatus(false); err != nil {
				s.setErr(err)
				return false
			}
			*nextStatus = time.Now().Add(s.interval)
		}
	}
}

// deliverLast hands over what was read before the stream failed, unless
// the task is gone.
func (s *replStream) deliverLast(batch []walEvent) {
	if len(batch) == 0 {
		return
	}
	select {
	case s.batches <- batch:
	case <-s.stop:
	}
}
