package herder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/worker"
)

// Exactly-once source support (KIP-618) in a cluster: a source task's
// producer is transactional, and before a new generation of a connector's
// tasks writes anything, the leader fences out the producers of the
// generation before it (zombie fencing), recording each round in the
// config topic as a tasks-fencing-<connector> task count record.

// exactlyOnceFor is what a source task needs to run exactly once here,
// nil when the worker runs its source tasks at least once. generation is
// that of the task configs it starts with.
func (h *Distributed) exactlyOnceFor(id client.TaskID, connConfig map[string]string, generation int) *worker.ExactlyOnce {
	if !h.dcfg.ExactlyOnceSourceEnabled() || h.plugin(connConfig["connector.class"]).Type != connect.PluginSource {
		return nil
	}
	return &worker.ExactlyOnce{
		TransactionalID: h.dcfg.TaskTransactionalID(id.Connector, id.Task),
		Fence:           func(ctx context.Context) error { return h.fenceForTask(ctx, id.Connector) },
		Verify:          func(ctx context.Context) error { return h.verifyTask(ctx, id, generation) },
	}
}

// fenceForTask has the leader run a round of zombie fencing for a task
// about to start: here when this worker leads, else through the leader's
// internal endpoint, waiting through rebalances until ctx ends.
func (h *Distributed) fenceForTask(ctx context.Context, name string) error {
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, 2*time.Second) {
		lead := h.leadership()
		var err error
		switch {
		case lead.leader:
			err = h.fenceZombies(ctx, name)
		case lead.url == "":
			err = NoLeader()
		default:
			err = putFence(ctx, h.leaderClient, lead.url, name, sessionKeyBytes(h.store.SessionKey()))
		}
		if err == nil {
			return nil
		}
		// A rebalance (no leader yet, a leader that no longer leads, one
		// that cannot be reached) passes: the fencing is asked again.
		// What the leader answered otherwise fails the task, as in Kafka.
		if e, ok := err.(*Error); ok && e.Status != http.StatusConflict {
			return err
		}
		h.log.Debug("zombie fencing not done yet", "connector", name, "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// FenceZombies answers the internal PUT /connectors/{name}/fence, which a
// worker starting an exactly-once task sends the leader, signed with the
// session key.
func (h *Distributed) FenceZombies(ctx context.Context, name string, body []byte, header http.Header) error {
	if err := verifySignature(sessionKeyBytes(h.store.SessionKey()), body, header); err != nil {
		return err
	}
	if lead := h.leadership(); !lead.leader {
		// Sent on to the leader, as Kafka's NotLeaderException is.
		return &RequestTargetError{URL: lead.url}
	}
	return h.fenceZombies(ctx, name)
}

// fenceZombies is a round of zombie fencing at the leader, as Kafka's
// DistributedHerder runs it: when task configs were committed since the
// connector's last task count record, the producers of the tasks that
// record counts are fenced (unless both generations have a single task,
// whose new producer fences the old one by itself), and a record of the
// new task count is written. A connector brought up exactly once for the
// first time has nothing to fence: the record alone is written.
func (h *Distributed) fenceZombies(ctx context.Context, name string) error {
	if !h.leadership().leader {
		return Conflict("Only the leader may perform zombie fencing.")
	}
	cs, ok := h.store.Connector(name)
	if !ok {
		return NotFound("Connector %s not found", name)
	}
	if h.plugin(cs.Config["connector.class"]).Type != connect.PluginSource {
		return BadRequest("Connector %s is not a source connector", name)
	}
	h.fenceMu.Lock()
	defer h.fenceMu.Unlock()
	if err := h.store.Refresh(ctx); err != nil {
		return Internal("Failed to read to end of config topic before performing zombie fencing: %v", err)
	}
	if cs, ok = h.store.Connector(name); !ok {
		return NotFound("Connector %s not found", name)
	}
	if !cs.PendingFencing {
		return nil
	}
	if n := cs.TaskCountRecord; n != nil && (*n != 1 || cs.TaskCount != 1) {
		ids := make([]string, *n)
		for i := range ids {
			ids[i] = h.dcfg.TaskTransactionalID(name, i)
		}
		h.log.Debug("fencing out the producers of an earlier task generation", "connector", name, "tasks", *n)
		if err := h.w.FenceProducers(ctx, name, cs.Config, ids); err != nil {
			return Internal("Failed to perform zombie fencing: %v", err)
		}
		if err := h.store.Refresh(ctx); err != nil {
			return Internal("Failed to read to end of config topic: %v", err)
		}
		if now, ok := h.store.Connector(name); ok && now.Generation > cs.Generation {
			return Conflict("Fencing failed because new task configurations were generated for the connector")
		}
	}
	if err := h.store.PutTaskCountRecord(ctx, name, cs.TaskCount); err != nil {
		return Internal("Failed to write the task count record of %s: %v", name, err)
	}
	return nil
}

// verifyTask is an exactly-once task's check, once its producer holds its
// transactional id, that it may still write: no newer task configs were
// committed, and the task is still assigned here. (The task then reads its
// offsets to their end, as every source task does before it starts.)
func (h *Distributed) verifyTask(ctx context.Context, id client.TaskID, generation int) error {
	if err := h.store.Refresh(ctx); err != nil {
		return Internal("Failed to read to end of config topic: %v", err)
	}
	if cs, ok := h.store.Connector(id.Connector); !ok || cs.Generation != generation {
		return Internal("Cannot start source task %s with exactly-once support as the connector has already generated a new set of task configs", id)
	}
	if a := h.assigned.Load(); a == nil || !(*a)[id] {
		return Internal("Cannot start source task %s as it has already been revoked from this worker", id)
	}
	return nil
}

// putFence asks the leader for a round of zombie fencing on its internal,
// signed endpoint (an empty body, signed as such).
func putFence(ctx context.Context, hc *http.Client, leaderURL, name string, key []byte) error {
	return toLeaderSigned(ctx, hc, http.MethodPut, leaderURL, "/connectors/"+url.PathEscape(name)+"/fence?forward=true", nil, key, "the leader refused to fence the zombies of "+name)
}

// MsgStandaloneExactlyOnce is Kafka's refusal of exactly-once in a
// standalone worker.
const MsgStandaloneExactlyOnce = "Kafka Connect in standalone mode does not support exactly-once source connectors."

// checkExactlyOnce runs Kafka's preflight checks of a source connector's
// exactly-once keys, with their texts, for a worker whose
// exactly.once.source.support is support ("" for a standalone worker,
// which refuses exactly.once.support=required with its own message where
// Kafka would take it and run the connector at least once).
func checkExactlyOnce(plugins *connect.PluginSet, config map[string]string, infos *client.ConfigInfos, support string) {
	conn, p, err := worker.Instantiate(plugins, config["connector.class"])
	if err != nil || p.Type != connect.PluginSource {
		return
	}
	eos, _ := conn.(connect.ExactlyOnceSource)
	for _, c := range infos.Configs {
		v := c.Value
		if v == nil || len(v.Errors) > 0 || v.Value == nil {
			continue
		}
		var msgs []string
		switch {
		case v.Name == "exactly.once.support" && strings.EqualFold(*v.Value, "required"):
			msgs = exactlyOnceRequired(eos, config, support)
		case v.Name == "transaction.boundary" && strings.EqualFold(*v.Value, "connector"):
			if ok, err := preflight(func() bool { return eos != nil && eos.CanDefineTransactionBoundaries(config) }); err != nil {
				msgs = []string{err.Error()}
			} else if !ok {
				msgs = []string{"The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition."}
			}
		}
		v.Errors = append(v.Errors, msgs...)
		infos.ErrorCount += len(msgs)
	}
}

// exactlyOnceRequired is what Kafka says of exactly.once.support=required.
func exactlyOnceRequired(eos connect.ExactlyOnceSource, config map[string]string, support string) []string {
	var msgs []string
	switch support {
	case "":
		return []string{MsgStandaloneExactlyOnce}
	case worker.ExactlyOnceEnabled:
	default:
		msgs = append(msgs, "This worker does not have exactly-once source support enabled.")
	}
	if eos == nil {
		return append(msgs, `The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value "requested" for this property (which will disable this preflight check and allow the connector to be created).`)
	}
	ok, err := preflight(func() bool { return eos.ExactlyOnceSupport(config) == connect.ExactlyOnceSupported })
	switch {
	case err != nil:
		msgs = append(msgs, err.Error())
	case !ok:
		msgs = append(msgs, "The connector does not support exactly-once semantics with the provided configuration.")
	}
	return msgs
}

// preflight runs a connector's preflight answer, a panic in it becoming
// Kafka's message for an exception there.
func preflight(f func() bool) (ok bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			msg := strings.TrimSpace(fmt.Sprint(p))
			if msg == "" {
				err = errors.New("An unexpected error occurred during validation; please see the worker logs for more details.")
			} else {
				err = errors.New("An unexpected error occurred during validation: " + msg)
			}
		}
	}()
	return f(), nil
}
