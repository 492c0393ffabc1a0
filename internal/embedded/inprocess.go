package embedded

import (
	"context"
	"net"
	"sync"
	"time"
)

// listener hands the broker both the connections accepted on its TCP
// port and those dialed in process through Broker.Dial. A worker's own
// clients use the latter: the bytes then go from the producer to the
// broker without two trips through the kernel's loopback, which is more
// than a tenth of the worker's CPU on a JDBC source.
type listener struct {
	net.Listener
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
		return c, nil
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
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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
