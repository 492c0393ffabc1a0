package embedded

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// listener hands the broker both the connections accepted on its TCP
// port and those dialed in process through Broker.Dial. A worker's own
// clients use the latter: the bytes then go from the producer to the
// broker without two trips through the kernel's loopback, which is more
// than a tenth of the worker's CPU on a JDBC source.
type listener struct {
	net.Listener
	counters  counters
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func newListener(tcp net.Listener) *listener {
	l := &listener{Listener: tcp, conns: make(chan net.Conn), closed: make(chan struct{})}
	go l.acceptTCP()
	return l
}

func (l *listener) acceptTCP() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			l.close()
			return
		}
		select {
		case l.conns <- c:
		case <-l.closed:
			c.Close()
			return
		}
	}
}

func (l *listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return l.counters.count(c), nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *listener) Close() error {
	err := l.Listener.Close()
	l.close()
	return err
}

func (l *listener) close() { l.closeOnce.Do(func() { close(l.closed) }) }

// dial returns the client end of a new in-process connection.
func (l *listener) dial(ctx context.Context) (net.Conn, error) {
	server, client := net.Pipe()
	// The broker shows a connection's remote address as the client's
	// host (a group member's, for one): loopback, as over TCP, rather
	// than net.Pipe's "pipe".
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	var err error
	select {
	case l.conns <- addrConn{server, l.Addr(), local}:
		return addrConn{client, local, l.Addr()}, nil
	case <-l.closed:
		// What a TCP dial to the closed port gets: clients give up on it
		// as on a stopped broker, instead of retrying a closed pipe.
		err = &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}
	case <-ctx.Done():
		err = ctx.Err()
	}
	server.Close()
	client.Close()
	return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: l.Addr(), Err: err}
}

// addrConn is one end of an in-process connection, with addresses.
type addrConn struct {
	net.Conn
	local, remote net.Addr
}

func (c addrConn) LocalAddr() net.Addr  { return c.local }
func (c addrConn) RemoteAddr() net.Addr { return c.remote }

// Write fails as a TCP write does once the other end has closed: with a
// broken pipe, which clients retry on a new connection; net.Pipe's own
// io.ErrClosedPipe is an error they give up on.
func (c addrConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if errors.Is(err, io.ErrClosedPipe) {
		err = &net.OpError{Op: "write", Net: "tcp", Source: c.local, Addr: c.remote,
			Err: &os.SyscallError{Syscall: "write", Err: syscall.EPIPE}}
	}
	return n, err
}

// dialTimeout is franz-go's default dial timeout, kept for the addresses
// Dial passes on to the network.
const dialTimeout = 10 * time.Second

// Dial has net.Dialer.DialContext's signature, for kgo.Dialer: it
// connects in process to this broker's own address and over the network
// to any other.
func (b *Broker) Dial(ctx context.Context, network, host string) (net.Conn, error) {
	if host == b.addr {
		return b.ln.dial(ctx)
	}
	d := net.Dialer{Timeout: dialTimeout}
	return d.DialContext(ctx, network, host)
}
