package jdbcdb

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// HandOver keeps a few released connections for a few seconds, by the URL
// and credentials they were opened with. Creating a connector validates
// its config, starts it and starts its tasks, each needing a connection
// within milliseconds of the previous one; a PostgreSQL connection takes
// tens of milliseconds to open, and its first catalog queries as long
// again while the new backend fills its caches. A restart (a PUT of the
// config, a resume, a rebalance) goes the same way. It is a hand-over, not
// a pool: few, short-lived, so that idle connections never crowd the
// database's max_connections.
type HandOver[T any] struct {
	ttl   time.Duration
	max   int
	close func(T)

	mu   sync.Mutex
	idle []*handedOver[T] // oldest first
}

type handedOver[T any] struct {
	key   string
	v     T
	timer *time.Timer
}

// handOverTTL is how long a released connection waits for its next user.
const handOverTTL = 10 * time.Second

// NewHandOver keeps at most max connections, closing each with close.
func NewHandOver[T any](max int, close func(T)) *HandOver[T] {
	return &HandOver[T]{ttl: handOverTTL, max: max, close: close}
}

// ConnKey keeps connections opened with other credentials apart.
func ConnKey(url, user, password string) string {
	return url + "\x00" + user + "\x00" + password
}

// Take removes the most recently released connection of key, if any.
func (p *HandOver[T]) Take(key string) (T, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := len(p.idle) - 1; i >= 0; i-- {
		if e := p.idle[i]; e.key == key {
			p.idle = slices.Delete(p.idle, i, i+1)
			e.timer.Stop()
			return e.v, true
		}
	}
	var zero T
	return zero, false
}

// Put keeps v for ttl, closing the oldest connection beyond max.
func (p *HandOver[T]) Put(key string, v T) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := &handedOver[T]{key: key, v: v}
	e.timer = time.AfterFunc(p.ttl, func() {
		p.mu.Lock()
		n := len(p.idle)
		p.idle = slices.DeleteFunc(p.idle, func(x *handedOver[T]) bool { return x == e })
		gone := len(p.idle) < n
		p.mu.Unlock()
		if gone { // else taken meanwhile
			p.close(v)
		}
	})
	p.idle = append(p.idle, e)
	if len(p.idle) > p.max {
		old := p.idle[0]
		p.idle = p.idle[1:]
		old.timer.Stop()
		go p.close(old.v)
	}
}

// PGReadyToHandOn readies a PostgreSQL connection for its next user, and
// reports whether it is fit for one: open, out of any transaction, and
// rid of the statements it prepared, since the next user may come after
// the tables changed.
func PGReadyToHandOn(c *pgx.Conn) bool {
	if c.IsClosed() || c.PgConn().IsBusy() || c.PgConn().TxStatus() != 'I' {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.DeallocateAll(ctx) == nil
}

// Held is what p keeps of key, oldest first: the tests of the connectors
// check by it which connections wait for their next user.
func (p *HandOver[T]) Held(key string) []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	var held []T
	for _, e := range p.idle {
		if e.key == key {
			held = append(held, e.v)
		}
	}
	return held
}
