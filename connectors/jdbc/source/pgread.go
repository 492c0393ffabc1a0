package source

import (
	"bufio"
	"context"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
)

// pgReadBuffer is how much a source connection to PostgreSQL reads from
// its socket at once.
const pgReadBuffer = 128 << 10

// bufferReads makes cfg's connections read their socket through a buffer
// of pgReadBuffer bytes. Over TLS, the client otherwise reads each record
// of at most 16 kB with its own system call: 4,000 calls for a
// million-row table, a twentieth of the source's CPU on a machine where a
// call is dear. The buffer sits under TLS, and takes whatever the server
// has sent, up to its size, in one call.
func bufferReads(cfg *pgconn.Config) {
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &bufferedConn{Conn: c, r: bufio.NewReaderSize(c, pgReadBuffer)}, nil
	}
}

// bufferedConn is a net.Conn whose reads go through r. Deadlines still
// apply: r reads the connection only when it holds nothing.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
