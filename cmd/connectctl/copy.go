package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/client"
)

func (a *app) copyCmd() *cobra.Command {
	var from, to string
	var all, resume, stopOld, yes bool
	var wait time.Duration
	var kf kafkaFlags
	cmd := &cobra.Command{
		Use:   "copy NAME...|--all --from URL|CONTEXT --to URL|CONTEXT [--resume]",
		Short: "Copy connectors with their config and offsets to another cluster",
		Long: `Copy connectors to another Kafka Connect cluster: read each one's config and
offsets from the old cluster, create it on the new one in the STOPPED state
(initial_state, Kafka 3.5+), write the offsets, read them back to check them,
and with --resume start it. The new connector then carries on exactly where
the old one stopped.

For an exact hand-over the old connector must be stopped first, else its
offsets move on after the copy: stop it (connectctl --url OLD stop NAME), or
pass --stop-old to have connectctl stop it. --from defaults to the current
connection (--url or the context).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if all && len(args) > 0 {
				return errors.New("give connector names or --all, not both")
			}
			if !all && len(args) == 0 {
				return errors.New("connectors copy needs connector names, or --all")
			}
			if len(args) == 1 {
				a.target = args[0]
			}
			return nil
		},
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return errors.New("connectors copy needs --to URL (or a context name)")
			}
			var src *client.Client
			var err error
			if from == "" {
				src, err = a.client()
			} else {
				src, err = a.clientFor(from)
			}
			if err != nil {
				return err
			}
			dst, err := a.clientFor(to)
			if err != nil {
				return err
			}
			if src.BaseURL() == dst.BaseURL() {
				return errors.New("--from and --to are the same cluster")
			}
			return a.copyConnectors(cmd.Context(), src, dst, args, all, copyOptions{resume: resume, stopOld: stopOld, yes: yes, wait: wait, kf: &kf})
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the old cluster: a URL or a context name (default: the current connection)")
	f.StringVar(&to, "to", "", "the new cluster: a URL or a context name")
	f.BoolVar(&all, "all", false, "copy every connector of the old cluster")
	f.BoolVar(&resume, "resume", false, "start the connectors on the new cluster once their offsets are in place")
	f.BoolVar(&stopOld, "stop-old", false, "stop the connectors on the old cluster first (asks on a terminal unless --yes)")
	f.BoolVarP(&yes, "yes", "y", false, "with --stop-old, stop without asking")
	f.DurationVar(&wait, "wait", 60*time.Second, "how long to wait for a connector to stop and for its offsets to be accepted")
	kf.addConn(cmd)
	return cmd
}

type copyOptions struct {
	resume, stopOld, yes bool
	wait                 time.Duration
	// kf reaches the Kafka the copied sources write to, for the check of
	// an exactly-once copy.
	kf *kafkaFlags
}

// copyResult is one connector's outcome.
type copyResult struct {
	Name    string `json:"name"`
	Type    string `json:"type,omitempty"`
	Offsets int    `json:"offsets"`
	// ExactlyOnce: a source copied between two clusters that both run
	// sources exactly once; Verified, what the check of its topics found.
	ExactlyOnce bool   `json:"exactly_once,omitempty"`
	Verified    string `json:"verified,omitempty"`
	State       string `json:"state,omitempty"`
	Error       string `json:"error,omitempty"`
}

func (a *app) copyConnectors(ctx context.Context, src, dst *client.Client, names []string, all bool, opts copyOptions) error {
	if all {
		var err error
		if names, err = src.Connectors(ctx); err != nil {
			return err
		}
		slices.Sort(names)
		if len(names) == 0 {
			fmt.Fprintf(a.stdout, "no connectors on %s\n", src.BaseURL())
			return nil
		}
	}
	bar := a.newProgress(len(names))
	a.bar = bar
	defer func() { a.bar = nil }()
	var results []copyResult
	failed := 0
	for _, name := range names {
		bar.step(name)
		r, err := a.copyOne(ctx, src, dst, name, opts)
		bar.advance()
		if err != nil {
			failed++
			r.Error = err.Error()
			if len(names) == 1 {
				bar.finish()
				return err
			}
		}
		results = append(results, r)
		if !a.structured() {
			bar.finish()
			if err != nil {
				fmt.Fprintf(a.stderr, "%s %s: %v\n", a.painter(a.stderrTTY).paint(red, "failed:"), name, err)
				if h := a.hintFor(err); h != "" {
					fmt.Fprintf(a.stderr, "hint: %s\n", h)
				}
			} else {
				fmt.Fprintf(a.stdout, "copied %s (%s, %d offset%s) from %s to %s: %s\n", name, r.Type, r.Offsets, plural(r.Offsets), src.BaseURL(), dst.BaseURL(), r.State)
			}
		}
	}
	bar.finish()
	if a.structured() {
		if err := a.writeStructured(results); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d connectors not copied", failed, len(names))
	}
	return nil
}

// copyOne copies one connector.
func (a *app) copyOne(ctx context.Context, src, dst *client.Client, name string, opts copyOptions) (copyResult, error) {
	r := copyResult{Name: name}
	info, err := src.Connector(ctx, name)
	if err != nil {
		return r, err
	}
	r.Type = info.Type
	state := client.StateUnassigned
	if st, err := src.Status(ctx, name); err == nil {
		state = st.Connector.State
	}
	if state != client.StateStopped {
		switch {
		case opts.stopOld:
			err := a.confirm(opts.yes,
				fmt.Sprintf("connector %s is %s on %s", name, state, src.BaseURL()),
				"Stop it there before copying it?",
				"pass --yes to let connectctl stop it, or stop it first: connectctl --url "+src.BaseURL()+" stop "+name)
			if err != nil {
				return r, err
			}
			if err := stopAndWait(ctx, src, name, opts.wait); err != nil {
				return r, err
			}
		case opts.resume:
			return r, withHint(fmt.Errorf("connector %s is %s on %s: running it on both clusters would process its data twice", name, state, src.BaseURL()),
				"stop it there first (connectctl --url "+src.BaseURL()+" stop "+name+"), or pass --stop-old")
		default:
			fmt.Fprintf(a.stderr, "warning: connector %s is %s on %s: its offsets move on after this copy\n", name, state, src.BaseURL())
		}
	}
	offsets, err := src.Offsets(ctx, name)
	if err != nil {
		return r, err
	}
	r.Offsets = len(offsets)
	var mark copyMark
	var kopts []kgo.Opt
	if info.Type == "source" {
		r.ExactlyOnce = a.copyExactlyOnce(ctx, src, dst, name, info.Config)
		if r.ExactlyOnce && opts.resume && a.hasBootstrap(opts.kf) {
			if mark, kopts, err = a.markCopy(ctx, src, name, opts.kf); err != nil {
				return r, err
			}
		}
	}
	r.State, err = a.createWithOffsets(ctx, dst, name, info.Config, offsets, opts.resume, opts.wait)
	if err != nil || mark == nil {
		return r, err
	}
	r.Verified, err = a.verifyCopy(ctx, dst, name, offsets, mark, kopts, opts.wait)
	return r, err
}

// markCopy reads where the topics of a source connector about to be
// copied end, for verifyCopy.
func (a *app) markCopy(ctx context.Context, src *client.Client, name string, kf *kafkaFlags) (copyMark, []kgo.Opt, error) {
	topics, err := src.Topics(ctx, name)
	if err != nil || len(topics) == 0 {
		return nil, nil, err
	}
	adm, closeAdm, err := a.admin(kf)
	if err != nil {
		return nil, nil, err
	}
	defer closeAdm()
	mark, err := markTopics(ctx, adm, topics)
	if err != nil {
		return nil, nil, err
	}
	opts, _, err := a.kafkaOpts(kf)
	return mark, opts, err
}

// verifyCopy checks an exactly-once copy once the new connector wrote
// something (its offsets moved past those copied, within wait): none of
// the records it wrote repeats one of those its topics held before.
func (a *app) verifyCopy(ctx context.Context, dst *client.Client, name string, copied []client.ConnectorOffset, mark copyMark, opts []kgo.Opt, wait time.Duration) (string, error) {
	moved := false
	deadline := time.Now().Add(wait)
	for !moved && time.Now().Before(deadline) {
		now, err := dst.Offsets(ctx, name)
		if err != nil {
			return "", err
		}
		moved = !sameOffsets(now, copied)
		if !moved {
			select {
			case <-ctx.Done():
				return "", ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	if !moved {
		msg := "the new connector wrote nothing within --wait: nothing to check"
		if !a.structured() {
			fmt.Fprintf(a.stdout, "%s: %s\n", name, msg)
		}
		return msg, nil
	}
	res, err := checkDuplicates(ctx, opts, mark)
	if err != nil {
		return "", fmt.Errorf("checking the topics of %s for duplicates: %w", name, err)
	}
	if res.dup != "" {
		return "", fmt.Errorf("connector %s wrote a record again after the copy: %s", name, res.dup)
	}
	msg := fmt.Sprintf("verified: the %d record%s written since the copy repeat none of the %d before it", res.after, plural(res.after), res.before)
	if !a.structured() {
		fmt.Fprintf(a.stdout, "%s: %s\n", name, msg)
	}
	return msg, nil
}

// sameOffsets reports whether two offset lists hold the same offsets.
func sameOffsets(a, b []client.ConnectorOffset) bool {
	key := func(o client.ConnectorOffset) string {
		p, _ := json.Marshal(o.Partition)
		v, _ := json.Marshal(o.Offset)
		return string(p) + "=" + string(v)
	}
	if len(a) != len(b) {
		return false
	}
	set := map[string]bool{}
	for _, o := range a {
		set[key(o)] = true
	}
	for _, o := range b {
		if !set[key(o)] {
			return false
		}
	}
	return true
}

// copyExactlyOnce says what a source's copy between the two clusters
// guarantees: when both run sources exactly once, the offsets read from
// the old one are those committed with its last records, so that the new
// one writes nothing twice; when either does not, a record written after
// the last offset commit (a crash, a kill) may be written again.
func (a *app) copyExactlyOnce(ctx context.Context, src, dst *client.Client, name string, config map[string]string) bool {
	from, knownFrom := exactlyOnceSources(ctx, src, config)
	to, knownTo := exactlyOnceSources(ctx, dst, config)
	both := knownFrom && knownTo && from && to
	if !a.structured() {
		switch {
		case both:
			fmt.Fprintf(a.stdout, "%s: both clusters run source connectors exactly once: the offsets copied are those committed with the last records, so nothing is written twice\n", name)
		case knownTo && !to && strings.EqualFold(config["exactly.once.support"], "required"):
			fmt.Fprintf(a.stderr, "warning: %s requires exactly-once support, which %s does not have: it will not be created there\n", name, dst.BaseURL())
		}
	}
	return both
}

// createWithOffsets creates a connector STOPPED, writes its offsets,
// verifies them and, with resume, starts it. It returns the state the
// connector is left in.
func (a *app) createWithOffsets(ctx context.Context, dst *client.Client, name string, config map[string]string, offsets []client.ConnectorOffset, resume bool, wait time.Duration) (string, error) {
	if len(config) == 0 {
		return "", fmt.Errorf("connector %s: no config to create it with", name)
	}
	cfg := maps.Clone(config)
	if _, err := dst.CreateConnector(ctx, name, cfg, client.InitialStopped, nil); err != nil {
		if client.IsConflict(err) {
			return "", withHint(fmt.Errorf("connector %s already exists on %s", name, dst.BaseURL()),
				"delete it there first, or change its offsets with: connectctl offsets set/import")
		}
		return "", err
	}
	if len(offsets) > 0 {
		err := retryBusy(ctx, wait, func() error {
			_, err := dst.AlterOffsets(ctx, name, offsets)
			return err
		})
		if err != nil {
			hint := "write them with connectctl offsets set, or delete it and copy again"
			if strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
				hint = "a sink's offsets are its consumer group's in the new cluster's Kafka, so its topics must exist there: create or mirror them, then " + hint
			}
			return "", withHint(fmt.Errorf("connector %s was created STOPPED on %s, but its offsets were not written: %w", name, dst.BaseURL(), err), hint)
		}
		read := func(ctx context.Context) ([]client.ConnectorOffset, error) { return dst.Offsets(ctx, name) }
		if err := a.verify(ctx, read, offsets, wait); err != nil {
			return "", withHint(fmt.Errorf("connector %s on %s: %w", name, dst.BaseURL(), err), "it was left STOPPED")
		}
	}
	if !resume {
		return client.StateStopped, nil
	}
	if err := dst.Resume(ctx, name); err != nil {
		return "", err
	}
	return "resumed", nil
}
