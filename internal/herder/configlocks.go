package herder

import "sync"

// configLocks serializes the writes of each connector's config (create,
// PUT, PATCH, delete), so that a PATCH applies to the config the previous
// write left and a PUT's "does it exist" holds until its write. It is a
// lock per connector rather than the herder's main lock because a write
// validates the config while holding it, which may call the connector
// (the JDBC connectors open a database connection): the requests of other
// connectors, and every read, go on meanwhile. It is taken before the
// herder's main lock, never while holding it.
type configLocks struct {
	mu    sync.Mutex
	locks map[string]*configLock
}

type configLock struct {
	mu   sync.Mutex
	refs int // requests holding or waiting for mu
}

// lock waits for the connector's lock and returns its unlock.
func (l *configLocks) lock(name string) (unlock func()) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = map[string]*configLock{}
	}
	cl := l.locks[name]
	if cl == nil {
		cl = &configLock{}
		l.locks[name] = cl
	}
	cl.refs++
	l.mu.Unlock()
	cl.mu.Lock()
	return func() {
		cl.mu.Unlock()
		l.mu.Lock()
		if cl.refs--; cl.refs == 0 {
			delete(l.locks, name)
		}
		l.mu.Unlock()
	}
}

// patched is Kafka's ConnectUtils.patchConfig: the config with the
// patch's values set and its nil values removed.
func patched(config map[string]string, patch map[string]*string) map[string]string {
	out := make(map[string]string, len(config)+len(patch))
	for k, v := range config {
		out[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = *v
		}
	}
	return out
}
