package embedded

import (
	"net"
	"sync"
	"sync/atomic"
)

// Stats are the broker's connection and traffic counters since it started,
// over TCP and in process alike.
type Stats struct {
	// Connections are open now; ConnectionsTotal were ever accepted.
	Connections, ConnectionsTotal int64
	// BytesReceived and BytesSent are the bytes of Kafka requests and
	// responses, as on the wire.
	BytesReceived, BytesSent int64
}

// counters are Stats as the connections update them: one atomic add per
// read or write, which costs nothing beside the read or write itself.
type counters struct {
	open, total, in, out atomic.Int64
}

// count wraps a connection the broker accepted.
func (s *counters) count(c net.Conn) net.Conn {
	s.open.Add(1)
	s.total.Add(1)
	return &countedConn{Conn: c, s: s}
}

func (s *counters) stats() Stats {
	return Stats{Connections: s.open.Load(), ConnectionsTotal: s.total.Load(), BytesReceived: s.in.Load(), BytesSent: s.out.Load()}
}

type countedConn struct {
	net.Conn
	s    *counters
	once sync.Once
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.s.in.Add(int64(n))
	return n, err
}

func (c *countedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.s.out.Add(int64(n))
	return n, err
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.s.open.Add(-1) })
	return c.Conn.Close()
}
