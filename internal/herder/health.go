package herder

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/connectd/connectd/client"
)

// healthCheckTimeout is Kafka's DEFAULT_HEALTH_CHECK_TIMEOUT_MS: a herder
// that does not take a no-op request within it is unhealthy.
const healthCheckTimeout = 10 * time.Second

// KIP-1017's answers.
const (
	healthyMessage   = "Worker has completed startup and is ready to handle requests."
	startingMessage  = "Worker is still starting up."
	unhealthyMessage = "Worker was unable to handle this request and may be unable to handle other requests."
)

// healthProbe answers GET /health as KIP-1017 defines it: starting until
// the worker is ready; then unhealthy when its herder does not get its
// lock within healthCheckTimeout (a request would wait as long), or when
// Kafka does not answer.
type healthProbe struct {
	// kafka asks Kafka for its metadata; nil: not checked.
	kafka func(ctx context.Context) error

	mu sync.Mutex
	// inflight is closed once the lock probe in flight got the lock: a
	// herder stuck holding its lock keeps one probe waiting, however
	// often the worker is probed.
	inflight chan struct{}
}

func (p *healthProbe) check(ctx context.Context, ready bool, lock sync.Locker) (int, client.WorkerStatus) {
	if !ready {
		return http.StatusServiceUnavailable, client.WorkerStatus{Status: "starting", Message: startingMessage}
	}
	ctx, cancel := context.WithTimeout(ctx, healthCheckTimeout)
	defer cancel()
	select {
	case <-p.lockProbe(lock):
	case <-ctx.Done():
		return http.StatusInternalServerError, client.WorkerStatus{Status: "unhealthy",
			Message: unhealthyMessage + " The worker's herder did not take a request within 10 seconds."}
	}
	if p.kafka != nil {
		if err := p.kafka(ctx); err != nil {
			return http.StatusInternalServerError, client.WorkerStatus{Status: "unhealthy",
				Message: unhealthyMessage + " The worker cannot reach Kafka: " + err.Error()}
		}
	}
	return http.StatusOK, client.WorkerStatus{Status: "healthy", Message: healthyMessage}
}

// lockProbe is closed once lock was taken and released.
func (p *healthProbe) lockProbe(lock sync.Locker) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.inflight != nil {
		return p.inflight
	}
	done := make(chan struct{})
	p.inflight = done
	go func() {
		lock.Lock()
		lock.Unlock() //nolint:staticcheck // taking the lock is the probe
		p.mu.Lock()
		p.inflight = nil
		p.mu.Unlock()
		close(done)
	}()
	return done
}
