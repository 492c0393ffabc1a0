package file

import (
	"context"
	"io"
	"os"
	"sync"
	"time"
)

// input is where the source task reads from: a regular file read directly,
// or a stream (stdin, a named pipe, a device) read by a goroutine so that
// Poll never blocks on it.
type input interface {
	// Read reads data that is ready into p. It returns 0, nil when none is
	// ready now, also at the end of the input: more may be appended.
	Read(p []byte) (int, error)
	// Wait returns when data may be ready, after at most d, or when ctx
	// is done.
	Wait(ctx context.Context, d time.Duration)
	Close() error
}

// fileInput reads a regular file, which never blocks; at its end it
// re-reads after recheck so appended data is picked up, then less and
// less often while nothing comes, up to idleRecheck: a thousand idle
// sources each reading ten times a second would be a core's worth of
// reads for nothing, and a file that grows is read again at once.
type fileInput struct {
	f       *os.File
	recheck time.Duration
	idle    time.Duration // the current wait between reads at the end
}

// idleRecheck is the longest wait between reads of a file that stopped
// growing: Java's FileStreamSourceTask waits a second.
const idleRecheck = time.Second

func (in *fileInput) Read(p []byte) (int, error) {
	n, err := in.f.Read(p)
	if err == io.EOF {
		err = nil
	}
	if n > 0 {
		in.idle = 0
	}
	return n, err
}

func (in *fileInput) Wait(ctx context.Context, d time.Duration) {
	if in.idle == 0 {
		in.idle = in.recheck
	} else {
		in.idle = min(2*in.idle, max(idleRecheck, in.recheck))
	}
	sleep(ctx, min(d, in.idle))
}

func (in *fileInput) Close() error { return in.f.Close() }

// pump reads a stream on its own goroutine and hands the data over in
// chunks. At the end of the stream it tries again every eofRetry, as the
// stream may still grow (a file redirected to stdin, a pipe that gets a new
// writer). It ends on a read error other than EOF, or when stopped.
type pump struct {
	ch   chan []byte
	err  error // set before ch is closed
	stop chan struct{}
	once sync.Once
}

const (
	pumpBufSize = 64 << 10
	pumpMinRead = 4 << 10
	eofRetry    = time.Second
)

// startPump reads from what open returns; open runs on the pump's
// goroutine because opening a named pipe blocks until it has a writer.
// closeOnStop tells whether stopping the pump closes the reader.
func startPump(open func() (io.ReadCloser, error), closeOnStop bool) *pump {
	p := &pump{ch: make(chan []byte), stop: make(chan struct{})}
	go p.run(open, closeOnStop)
	return p
}

func (p *pump) run(open func() (io.ReadCloser, error), closeOnStop bool) {
	defer close(p.ch)
	r, err := open()
	if err != nil {
		p.err = err
		return
	}
	if closeOnStop {
		go func() {
			// Unblock a pending Read when stopped.
			<-p.stop
			r.Close()
		}()
	}
	var buf []byte
	for {
		if cap(buf)-len(buf) < pumpMinRead {
			buf = make([]byte, 0, pumpBufSize)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			chunk := buf[len(buf) : len(buf)+n : len(buf)+n]
			buf = buf[:len(buf)+n]
			select {
			case p.ch <- chunk:
			case <-p.stop:
				return
			}
		}
		switch {
		case err == io.EOF || (err == nil && n == 0):
			t := time.NewTimer(eofRetry)
			select {
			case <-t.C:
			case <-p.stop:
				t.Stop()
				return
			}
		case err != nil:
			select {
			case <-p.stop:
			default:
				p.err = err
			}
			return
		}
	}
}

func (p *pump) Stop() { p.once.Do(func() { close(p.stop) }) }

// pumpInput is the input side of a pump.
type pumpInput struct {
	p       *pump
	pending []byte
	ended   bool
	stop    bool // Close stops the pump
}

func (in *pumpInput) Read(b []byte) (int, error) {
	if len(in.pending) == 0 {
		if in.ended {
			return 0, in.p.err
		}
		select {
		case c, ok := <-in.p.ch:
			if !ok {
				in.ended = true
				return 0, in.p.err
			}
			in.pending = c
		default:
			return 0, nil
		}
	}
	n := copy(b, in.pending)
	in.pending = in.pending[n:]
	return n, nil
}

func (in *pumpInput) Wait(ctx context.Context, d time.Duration) {
	if len(in.pending) > 0 {
		return
	}
	if in.ended {
		sleep(ctx, d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case c, ok := <-in.p.ch:
		if !ok {
			in.ended = true
			return
		}
		in.pending = c
	case <-t.C:
	case <-ctx.Done():
	}
}

func (in *pumpInput) Close() error {
	if in.stop {
		in.p.Stop()
	}
	return nil
}

// stdinPump is the process's one reader of stdin, shared by every task
// that reads it (stdin can be neither reopened nor read by two readers).
var stdinPump = sync.OnceValue(func() *pump {
	return startPump(func() (io.ReadCloser, error) { return io.NopCloser(os.Stdin), nil }, false)
})

// openStdin returns the input of a task reading stdin; tests replace it.
var openStdin = func() input { return &pumpInput{p: stdinPump()} }

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
