package server

import (
	"net"
	"sync"
	"time"

	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/rest"
	"github.com/connectd/connectd/internal/worker"
)

const (
	// defaultMaxConnections bounds the sockets and goroutines clients
	// can hold of the worker (the REST handler bounds the memory their
	// bodies take), and leaves room for UIs, tools and other workers.
	defaultMaxConnections = 64
	// idleTimeout frees the slot of a kept-alive connection nobody uses;
	// 30 s is Jetty's default, which Kafka Connect keeps.
	idleTimeout = 30 * time.Second
)

// restOptions are the REST handler's options from the worker config.
func restOptions(cfg *worker.Config, loggers *logging.Registry) rest.Options {
	log := loggers.Logger("org.apache.kafka.connect.runtime.rest")
	if cfg.RESTAuth && len(cfg.RESTCredentials) == 0 {
		log.Warn("the basic authentication's credentials file lists no user: every request is let in, as Kafka's PropertyFileLoginModule does")
	}
	return rest.Options{
		AdminEnabled:    cfg.AdminOnMain,
		MaxRequestBytes: cfg.RESTMaxRequestBytes,
		BodyTimeout:     cfg.RESTBodyTimeout,
		Logger:          log,
		Client:          cfg.RESTClient,
		Auth:            cfg.RESTAuth,
		Credentials:     cfg.RESTCredentials,
		CORSOrigins:     cfg.CORSOrigins,
		CORSMethods:     cfg.CORSMethods,
		Headers:         headerRules(cfg.RESTHeaders),
	}
}

// limitListener accepts at most n connections at a time; the next ones
// wait in the kernel's backlog until one closes.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitedListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

func headerRules(rules []worker.HeaderRule) []rest.HeaderRule {
	out := make([]rest.HeaderRule, len(rules))
	for i, r := range rules {
		out[i] = rest.HeaderRule(r)
	}
	return out
}
