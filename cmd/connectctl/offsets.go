package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/connectd/connectd/client"
)

// changeFlags are the flags of every command that changes offsets.
type changeFlags struct {
	yes    bool
	dryRun bool
	resume bool
	wait   time.Duration
}

func (f *changeFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&f.yes, "yes", "y", false, "stop a running connector without asking (needed when stdin is not a terminal)")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "show the change and change nothing")
	cmd.Flags().BoolVar(&f.resume, "resume", false, "resume the connector afterwards even if it was not running")
	cmd.Flags().DurationVar(&f.wait, "wait", 60*time.Second, "how long to wait for the connector to stop and for the change to be accepted")
}

// addConn adds the flags that say how to reach Kafka.
func (f *kafkaFlags) addConn(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.bootstrap, "bootstrap-server", "", "Kafka bootstrap servers, host:port[,host:port] (default: the context's)")
	cmd.Flags().StringVar(&f.kafkaConfig, "kafka-config", "", "properties file of Kafka client security settings (security.protocol, ssl.*, sasl.*)")
}

// kafkaFlags are the flags of the commands that talk to Kafka itself.
type kafkaFlags struct {
	bootstrap    string
	kafkaConfig  string
	direct       bool
	offsetsTopic string
	configTopic  string
	statusTopic  string
	force        bool
}

// add adds the flags; changes adds those of the commands that change
// offsets.
func (f *kafkaFlags) add(cmd *cobra.Command, changes bool) {
	f.addConn(cmd)
	cmd.Flags().BoolVar(&f.direct, "direct", false, "read the workers' offsets topic in Kafka instead of asking a worker (source connectors)")
	cmd.Flags().StringVar(&f.offsetsTopic, "offsets-topic", "", "the offsets topic, with --direct (default: the connector's own offsets.storage.topic, else the context's, else connect-offsets)")
	cmd.Flags().StringVar(&f.configTopic, "config-topic", defaultConfigTopic, "the workers' config topic, with --direct, where a connector's own offsets topic is found")
	if changes {
		cmd.Flags().StringVar(&f.statusTopic, "status-topic", "", "the workers' status topic, to check that the connector is not running (default: the context's, else connect-status)")
		cmd.Flags().BoolVar(&f.force, "force", false, "with --direct, change the offsets even though the connector seems to run")
	}
}

func (a *app) offsetsCmd() *cobra.Command {
	offsets := &cobra.Command{
		Use:   "offsets",
		Short: "Show, change, undo, export and import connectors' offsets",
		Long: `Show, change, undo, export and import connectors' offsets.

Every change (set, reset, undo, import) works the same way: connectctl reads
the connector's offsets, shows the change as a diff, stops the connector if it
runs (asking first on a terminal; --yes to skip the question, and needed when
stdin is not a terminal), applies the change, reads the offsets back to check
them, and resumes the connector if it was running (or with --resume). The
offsets it replaced are kept in ~/.local/state/connectctl/history/ (or
$XDG_STATE_HOME), and "connectctl offsets undo NAME" puts them back.
--dry-run shows the diff and changes nothing.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("offsets needs a subcommand: get, set, reset, undo, history, export or import")
			}
			return fmt.Errorf("unknown offsets subcommand %q: want get, set, reset, undo, history, export or import", args[0])
		},
	}
	offsets.AddCommand(a.offsetsGetCmd(), a.offsetsSetCmd(), a.offsetsResetCmd(), a.offsetsUndoCmd(),
		a.offsetsHistoryCmd(), a.offsetsExportCmd(), a.offsetsImportCmd())
	return offsets
}

func (a *app) offsetsGetCmd() *cobra.Command {
	var kf kafkaFlags
	cmd := &cobra.Command{
		Use:               "get NAME",
		Short:             "Show a connector's offsets",
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			var offsets []client.ConnectorOffset
			if kf.direct {
				d, err := a.directStore(a.ownOffsetsTopic(cmd.Context(), &kf, args[0]))
				if err != nil {
					return err
				}
				if offsets, err = d.read(cmd.Context(), args[0]); err != nil {
					return err
				}
			} else {
				c, err := a.client()
				if err != nil {
					return err
				}
				if offsets, err = c.Offsets(cmd.Context(), args[0]); err != nil {
					return err
				}
			}
			if a.structured() {
				if offsets == nil {
					offsets = []client.ConnectorOffset{}
				}
				return a.writeStructured(client.ConnectorOffsets{Offsets: offsets})
			}
			return a.offsetsTable(offsets)
		},
	}
	kf.add(cmd, false)
	return cmd
}

// setFlags are the ways of saying what `offsets set` sets.
type setFlags struct {
	file       string
	topic      string
	partition  string
	offset     string
	toDatetime string
}

func (a *app) offsetsSetCmd() *cobra.Command {
	var cf changeFlags
	var kf kafkaFlags
	var sf setFlags
	cmd := &cobra.Command{
		Use:   "set NAME (-f FILE | --topic T --partition P|all --offset N | --partition JSON --offset JSON | --to-datetime TIME)",
		Short: "Change some of a connector's offsets (stopping and resuming it)",
		Long: `Change some of a connector's offsets; the partitions not named keep theirs.

  -f FILE                        a PATCH /connectors/NAME/offsets body:
                                 {"offsets":[{"partition":{...},"offset":{...}}]} ("-" is stdin);
                                 an "offset" of null removes that partition's offset
  sink connectors:
  --topic T --partition P|all --offset N|earliest|latest|null
                                 all: every partition of T (from --bootstrap-server, else
                                 the ones the connector has offsets for); earliest and
                                 latest need --bootstrap-server
  --to-datetime TIME [--topic T] the first offset at or after TIME on every partition of
                                 the connector's topics (config "topics"/"topics.regex"
                                 and its current offsets), by Kafka's ListOffsets; the
                                 end offset where no record is that recent. Needs
                                 --bootstrap-server. TIME is RFC 3339 (2026-07-10T14:30:00Z)
                                 or local time (2026-07-10T14:30:00)
  source connectors:
  --partition JSON --offset JSON the connector's own partition and offset maps, e.g.
                                 --partition '{"filename":"/data/in.txt"}' --offset '{"position":0}'
  --to-datetime TIME             every partition back to the last offset committed at or
                                 before TIME, read from the offsets topic (needs
                                 --bootstrap-server; see offsets history --from-topic)

With --direct, the offsets topic in Kafka is changed instead, without any
worker (source connectors): connectctl refuses while the connector runs
(according to the status topic) unless --force.`,
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.offsetsSet(cmd, args[0], &sf, &cf, &kf)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&sf.file, "file", "f", "", `JSON body as for PATCH /connectors/NAME/offsets: {"offsets":[{"partition":{...},"offset":{...}}]}`)
	f.StringVar(&sf.topic, "topic", "", "sink connectors: the topic")
	f.StringVar(&sf.partition, "partition", "", "sink connectors: a partition number or all; source connectors: the partition as a JSON object")
	f.StringVar(&sf.offset, "offset", "", "sink connectors: an offset, earliest, latest or null; source connectors: the offset as a JSON object, or null")
	f.StringVar(&sf.toDatetime, "to-datetime", "", "sink connectors: to the first record at or after this time; source connectors: to the offsets committed at or before it")
	cf.add(cmd)
	kf.add(cmd, true)
	return cmd
}

func (a *app) offsetsResetCmd() *cobra.Command {
	var cf changeFlags
	var kf kafkaFlags
	cmd := &cobra.Command{
		Use:   "reset NAME",
		Short: "Remove all of a connector's offsets (stopping and resuming it)",
		Long: `Remove all of a connector's offsets, so that it starts over: a source from the
beginning of its data, a sink from its consumer's auto.offset.reset.`,
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := a.backendFor(cmd.Context(), args[0], &kf)
			if err != nil {
				return err
			}
			_, err = a.change(cmd.Context(), b, plan{name: args[0], op: "reset",
				target: func([]client.ConnectorOffset) ([]client.ConnectorOffset, error) { return nil, nil }}, &cf)
			return err
		},
	}
	cf.add(cmd)
	kf.add(cmd, true)
	return cmd
}

func (a *app) offsetsUndoCmd() *cobra.Command {
	var cf changeFlags
	var kf kafkaFlags
	cmd := &cobra.Command{
		Use:   "undo NAME",
		Short: "Put back the offsets that the last change by connectctl replaced",
		Long: `Put back the offsets that the last change made by connectctl on this cluster
replaced (set, reset, import or an earlier undo's target), from the local
history. Undoing again goes one more change back.`,
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, name := cmd.Context(), args[0]
			cluster, err := a.clusterID(&kf)
			if err != nil {
				return err
			}
			e, err := a.lastUndoable(cluster, subject{name: name})
			if err != nil {
				return err
			}
			if !a.structured() {
				fmt.Fprintf(a.stdout, "going back to the offsets of %s, before %s\n", e.Time.Local().Format("2006-01-02 15:04:05"), e.Operation)
			}
			// A connector deleted with --reset-offsets is created again
			// first, STOPPED, then given its offsets and its state.
			var recreated *client.Client
			if e.Operation == "delete" && !kf.direct {
				c, err := a.client()
				if err != nil {
					return err
				}
				if _, err := c.Connector(ctx, name); client.IsNotFound(err) {
					if cf.dryRun {
						fmt.Fprintf(a.stdout, "connector %s would be created again with its saved config, given its %d saved offset%s and left %s\ndry run: nothing changed\n",
							name, len(e.Offsets), plural(len(e.Offsets)), afterwardsText(e.State, &cf))
						return nil
					}
					if err := a.recreate(ctx, c, e); err != nil {
						return err
					}
					recreated = c
				}
			}
			b, err := a.backendFor(ctx, name, &kf)
			if err != nil {
				return err
			}
			res, err := a.change(ctx, b, plan{name: name, op: "undo", noHistory: true,
				target: func([]client.ConnectorOffset) ([]client.ConnectorOffset, error) { return e.Offsets, nil }}, &cf)
			if err != nil {
				return err
			}
			if res.DryRun {
				return nil
			}
			if recreated != nil {
				_, msg, err := restoreState(ctx, recreated, name, e.State, cf.resume)
				if err != nil {
					return err
				}
				if msg != "" && !a.structured() {
					fmt.Fprintln(a.stdout, msg)
				}
			}
			return markUndone(e)
		},
	}
	cf.add(cmd)
	kf.add(cmd, true)
	return cmd
}

func (a *app) offsetsHistoryCmd() *cobra.Command {
	var kf kafkaFlags
	var fromTopic bool
	var limit int
	cmd := &cobra.Command{
		Use:   "history NAME [--from-topic]",
		Short: "List the offsets connectctl replaced for a connector, or with --from-topic every offset it committed",
		Long: `List the offsets connectctl replaced for a connector on this cluster, newest
first (the local history that undo uses).

With --from-topic, list instead the source offsets the connector committed
over time, per source partition, as the offsets topic still holds them
(each record keeps the time it was written, until compaction keeps only the
latest of each partition). "connectctl offsets set NAME --to-datetime T"
goes back to them.`,
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			if fromTopic {
				return a.committedHistory(cmd.Context(), args[0], &kf, limit)
			}
			cluster, err := a.clusterID(&kf)
			if err != nil {
				return err
			}
			entries, err := a.history(cluster, subject{name: args[0]})
			if err != nil {
				return err
			}
			return a.historyTable(subject{name: args[0]}, entries)
		},
	}
	kf.add(cmd, false)
	cmd.Flags().BoolVar(&fromTopic, "from-topic", false, "list the source offsets committed over time, from the offsets topic")
	cmd.Flags().IntVar(&limit, "limit", 20, "with --from-topic, the newest commits shown per source partition (0: all)")
	return cmd
}

// readInput reads a file named on the command line, "-" being stdin (which
// then can hold no answer to a question).
func (a *app) readInput(path string) ([]byte, error) {
	if path == "-" {
		a.stdinUsed = true
		return io.ReadAll(a.stdin)
	}
	return os.ReadFile(path)
}

// readOffsetsFile reads a PATCH /connectors/{c}/offsets body from path
// ("-" is stdin).
func (a *app) readOffsetsFile(path string) ([]client.ConnectorOffset, error) {
	data, err := a.readInput(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var body struct {
		Offsets *[]client.ConnectorOffset `json:"offsets"`
	}
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf(`%s: want {"offsets":[{"partition":{...},"offset":{...}}]}: %v`, path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: unexpected data after the JSON object", path)
	}
	if body.Offsets == nil {
		return nil, fmt.Errorf(`%s: no "offsets" list`, path)
	}
	for i, o := range *body.Offsets {
		if o.Partition == nil {
			return nil, fmt.Errorf("%s: offsets[%d] has no partition", path, i)
		}
	}
	return *body.Offsets, nil
}

// sinkForm brings a sink offset to Kafka Connect's keys: the shorter
// {"topic","partition"} → {"offset"} form that connectd also takes (and
// some guides use) becomes {"kafka_topic","kafka_partition"} →
// {"kafka_offset"}, and numeric strings become numbers.
func sinkForm(o client.ConnectorOffset) client.ConnectorOffset {
	p := map[string]any{}
	for k, v := range o.Partition {
		switch k {
		case "topic":
			k = "kafka_topic"
		case "partition":
			k = "kafka_partition"
		}
		p[k] = v
	}
	if n, ok := intValue(p["kafka_partition"]); ok {
		p["kafka_partition"] = n
	}
	var off map[string]any
	if o.Offset != nil {
		off = map[string]any{}
		for k, v := range o.Offset {
			if k == "offset" {
				k = "kafka_offset"
			}
			off[k] = v
		}
		if n, ok := intValue(off["kafka_offset"]); ok {
			off["kafka_offset"] = n
		}
	}
	return client.ConnectorOffset{Partition: p, Offset: off}
}

// merge applies changes to offsets: a change with a nil Offset removes the
// partition, others replace or add it. Order: the existing partitions
// first, then the new ones.
func merge(offsets, changes []client.ConnectorOffset) []client.ConnectorOffset {
	var keys []string
	byKey := map[string]client.ConnectorOffset{}
	put := func(o client.ConnectorOffset) {
		k := offsetKey(o.Partition)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = o
	}
	for _, o := range offsets {
		if o.Offset != nil {
			put(o)
		}
	}
	for _, o := range changes {
		if o.Offset == nil {
			delete(byKey, offsetKey(o.Partition))
			continue
		}
		put(o)
	}
	out := make([]client.ConnectorOffset, 0, len(byKey))
	for _, k := range keys {
		if o, ok := byKey[k]; ok {
			out = append(out, o)
		}
	}
	return out
}

// offsetsSet works out what to set, then changes it.
func (a *app) offsetsSet(cmd *cobra.Command, name string, sf *setFlags, cf *changeFlags, kf *kafkaFlags) error {
	ctx := cmd.Context()
	flags := cmd.Flags()
	ways := 0
	if sf.file != "" {
		ways++
	}
	if sf.toDatetime != "" {
		ways++
	}
	if flags.Changed("offset") {
		ways++
	}
	if ways == 0 {
		return withHint(errors.New("offsets set needs -f FILE, --offset (with --topic/--partition) or --to-datetime"),
			"see connectctl offsets set --help")
	}
	if ways > 1 {
		return errors.New("give only one of -f, --offset and --to-datetime")
	}
	// Local input first: a bad file costs no request.
	var changes []client.ConnectorOffset
	var err error
	if sf.file != "" {
		if flags.Changed("topic") || flags.Changed("partition") {
			return errors.New("-f FILE goes without --topic and --partition")
		}
		if sf.file == "-" {
			a.stdinUsed = true // no answer to a question can come from it
		}
		if changes, err = a.readOffsetsFile(sf.file); err != nil {
			return err
		}
		if len(changes) == 0 {
			return fmt.Errorf("%s: the offsets list is empty", sf.file)
		}
	}
	b, err := a.backendFor(ctx, name, kf)
	if err != nil {
		return err
	}
	sink := b.typ == client.TypeSink
	switch {
	case b.direct && flags.Changed("topic"):
		return withHint(errors.New("direct mode changes source connectors' offsets in the offsets topic; a sink's offsets are its consumer group's"),
			"drop --direct to go through a worker")
	case sf.file != "":
		if sink {
			for i := range changes {
				changes[i] = sinkForm(changes[i])
			}
		}
	case sf.toDatetime != "" && sink:
		if changes, err = a.resolveDatetime(ctx, b, name, sf, kf); err != nil {
			return err
		}
	case sf.toDatetime != "":
		if flags.Changed("topic") || flags.Changed("partition") {
			return errors.New("a source connector goes back in time on all its partitions: --to-datetime takes no --topic or --partition")
		}
		if changes, err = a.sourceAtDatetime(ctx, b, name, sf.toDatetime, kf); err != nil {
			return err
		}
	case sink:
		if changes, err = a.sinkFlagOffsets(ctx, b, sf, kf); err != nil {
			return err
		}
	default:
		if changes, err = sourceFlagOffsets(name, b.typ, sf, flags.Changed("topic")); err != nil {
			return err
		}
	}
	_, err = a.change(ctx, b, plan{name: name, op: "set", target: func(before []client.ConnectorOffset) ([]client.ConnectorOffset, error) {
		return merge(before, changes), nil
	}}, cf)
	return err
}

// sourceFlagOffsets reads --partition JSON --offset JSON.
func sourceFlagOffsets(name, typ string, sf *setFlags, topicSet bool) ([]client.ConnectorOffset, error) {
	if topicSet {
		return nil, withHint(fmt.Errorf("--topic is for sink connectors; %s is a %s connector", name, typ),
			`give the partition as JSON: --partition '{"filename":"/data/in.txt"}' --offset '{"position":0}'`)
	}
	if sf.partition == "" {
		return nil, errors.New("--offset needs --partition: the connector's partition as a JSON object")
	}
	var body struct {
		P client.ConnectorOffset
	}
	raw := `{"partition":` + sf.partition + `,"offset":` + sf.offset + `}`
	if err := json.Unmarshal([]byte(raw), &body.P); err != nil || body.P.Partition == nil {
		var probe any
		if json.Unmarshal([]byte(sf.partition), &probe) != nil || body.P.Partition == nil {
			return nil, fmt.Errorf(`--partition %s: want a JSON object, such as '{"filename":"/data/in.txt"}'`, sf.partition)
		}
		return nil, fmt.Errorf(`--offset %s: want a JSON object, such as '{"position":0}', or null`, sf.offset)
	}
	return []client.ConnectorOffset{body.P}, nil
}

// plan is one change of one connector's offsets: target computes the
// offsets wanted from the ones the connector has.
type plan struct {
	name      string
	op        string // set, reset, undo, import
	target    func(before []client.ConnectorOffset) ([]client.ConnectorOffset, error)
	noHistory bool
}

// backend is where a connector's offsets live: a worker's REST API, or
// the offsets topic itself (direct mode).
type backend struct {
	cluster string // the history's name of the place
	typ     string // source, sink, or "" when unknown (direct mode)
	direct  bool   // the offsets topic itself, no worker
	// config is the connector's config (REST only).
	config map[string]string
	// state is the connector's state, "" when unknown.
	state func(ctx context.Context) (string, error)
	read  func(ctx context.Context) ([]client.ConnectorOffset, error)
	// stop makes it safe to change the offsets of a connector in state;
	// it reports whether the connector was stopped (so the offsets must
	// be read again).
	stop func(ctx context.Context, state string, cf *changeFlags) (bool, error)
	// write applies patch; all means every partition is being removed.
	// It returns what the worker said, if anything.
	write func(ctx context.Context, patch []client.ConnectorOffset, all bool, cf *changeFlags) (string, error)
	// restore brings the connector back to how it was, or resumes it;
	// it returns the state it asked for and what it did, for the user.
	restore func(ctx context.Context, state string, cf *changeFlags) (string, string, error)
}

// changeResult is what `-o json|yaml` shows of a change.
type changeResult struct {
	Connector   string                   `json:"connector"`
	Cluster     string                   `json:"cluster"`
	Operation   string                   `json:"operation"`
	DryRun      bool                     `json:"dry_run"`
	State       string                   `json:"state_before"`
	Before      []client.ConnectorOffset `json:"before"`
	After       []client.ConnectorOffset `json:"after"`
	Changed     int                      `json:"partitions_changed"`
	Stopped     bool                     `json:"stopped"`
	Verified    bool                     `json:"verified"`
	StateAfter  string                   `json:"state_after,omitempty"`
	Message     string                   `json:"message,omitempty"`
	HistoryFile string                   `json:"history_file,omitempty"`
}

// change runs the safe change of a connector's offsets: show the diff,
// stop, save the old offsets, apply, verify, restore the state.
func (a *app) change(ctx context.Context, b *backend, p plan, cf *changeFlags) (*changeResult, error) {
	a.target = p.name
	text := !a.structured()
	w := a.stdout
	res := &changeResult{Connector: p.name, Cluster: b.cluster, Operation: p.op, DryRun: cf.dryRun}
	state, err := b.state(ctx)
	if err != nil {
		return nil, err
	}
	res.State = state
	before, err := b.read(ctx)
	if err != nil {
		return nil, err
	}
	after, err := p.target(before)
	if err != nil {
		return nil, err
	}
	changed, same := offsetDiff(before, after)
	res.Before, res.After, res.Changed = nonNil(before), nonNil(after), len(changed)
	title := "offsets of " + p.name
	finish := func() (*changeResult, error) {
		if !text {
			return res, a.writeStructured(res)
		}
		return res, nil
	}
	if len(changed) == 0 {
		if text {
			fmt.Fprintf(w, "the offsets of %s are already as asked: nothing to change\n", p.name)
		}
		return finish()
	}
	if text {
		writeDiff(w, a.out(), title, changed, same)
	}
	needsStop := state != client.StateStopped
	if cf.dryRun {
		if text {
			switch {
			case needsStop && b.direct:
				fmt.Fprintf(w, "connector %s is %s according to the status topic: the change would be refused without --force\n", p.name, state)
			case needsStop && state != "":
				fmt.Fprintf(w, "connector %s is %s: it would be stopped first, and %s afterwards\n", p.name, state, afterwardsText(state, cf))
			}
			fmt.Fprintln(w, "dry run: nothing changed")
		}
		return finish()
	}
	if needsStop {
		stopped, err := b.stop(ctx, state, cf)
		if err != nil {
			return nil, err
		}
		res.Stopped = stopped
		if stopped {
			if text {
				fmt.Fprintf(w, "connector %s stopped\n", p.name)
			}
			// A running connector commits offsets until it stops: what
			// it stopped at is what the change replaces.
			if before, err = b.read(ctx); err != nil {
				return nil, err
			}
			if after, err = p.target(before); err != nil {
				return nil, err
			}
			again, same2 := offsetDiff(before, after)
			if diffText(again) != diffText(changed) {
				if text {
					fmt.Fprintln(w, "the offsets moved while the connector stopped; the change is now:")
					writeDiff(w, a.out(), title, again, same2)
				}
			}
			changed = again
			res.Before, res.After, res.Changed = nonNil(before), nonNil(after), len(changed)
			if len(changed) == 0 && text {
				fmt.Fprintf(w, "the offsets of %s are now as asked: nothing to change\n", p.name)
			}
		}
	}
	if len(changed) > 0 {
		if !p.noHistory {
			path, err := a.saveHistory(historyEntry{Connector: p.name, Cluster: b.cluster, Operation: p.op, Offsets: before})
			if err != nil {
				return nil, err
			}
			res.HistoryFile = path
		}
		patch := make([]client.ConnectorOffset, 0, len(changed))
		for _, d := range changed {
			patch = append(patch, client.ConnectorOffset{Partition: d.partition, Offset: d.after})
		}
		said, err := b.write(ctx, patch, len(after) == 0, cf)
		if err != nil {
			if res.Stopped {
				return nil, withHint(err, fmt.Sprintf("connector %s was left STOPPED; resume it with: connectctl resume %s", p.name, p.name))
			}
			return nil, err
		}
		if err := a.verify(ctx, b.read, after, cf.wait); err != nil {
			hint := fmt.Sprintf("put the previous offsets back with: connectctl offsets undo %s", p.name)
			if b.direct {
				hint += " --direct"
			}
			if res.Stopped || state == client.StateStopped {
				hint = fmt.Sprintf("connector %s was left STOPPED; %s", p.name, hint)
			}
			return nil, withHint(err, hint)
		}
		res.Verified = true
		res.Message = said
		if text && strings.Contains(said, "However") {
			// Apache's framework-only answer: the connector may keep
			// offsets of its own elsewhere.
			fmt.Fprintln(w, "the worker says: "+said)
		}
		if text {
			fmt.Fprintf(w, "offsets of %s changed (%d partition%s) and verified\n", p.name, len(changed), plural(len(changed)))
			if res.HistoryFile != "" {
				fmt.Fprintf(w, "previous offsets saved; put them back with: connectctl offsets undo %s\n", p.name)
			}
		}
	}
	after2, msg, err := b.restore(ctx, state, cf)
	if err != nil {
		return nil, err
	}
	res.StateAfter = after2
	if msg != "" {
		res.Message = strings.TrimSpace(res.Message + "\n" + msg)
	}
	if text && msg != "" {
		fmt.Fprintln(w, msg)
	}
	return finish()
}

func nonNil(o []client.ConnectorOffset) []client.ConnectorOffset {
	if o == nil {
		return []client.ConnectorOffset{}
	}
	return o
}

func diffText(d []diffLine) string {
	var b strings.Builder
	for _, l := range d {
		fmt.Fprintf(&b, "%s %s %s\n", mapText(l.partition), mapText(l.before), mapText(l.after))
	}
	return b.String()
}

// afterwardsText says what happens to a connector in state after its
// offsets changed.
func afterwardsText(state string, cf *changeFlags) string {
	switch {
	case cf.resume:
		return "resumed"
	case state == client.StatePaused:
		return "paused again"
	case wasRunning(state):
		return "resumed"
	}
	return "left STOPPED"
}

// wasRunning reports whether a connector in state should run again after
// its offsets changed.
func wasRunning(state string) bool {
	switch state {
	case client.StateRunning, client.StateUnassigned, client.StateRestarting:
		return true
	}
	return false
}

// verify reads the offsets back until they are want (a worker may take a
// moment to see its own write) or the wait is over.
func (a *app) verify(ctx context.Context, read func(context.Context) ([]client.ConnectorOffset, error), want []client.ConnectorOffset, wait time.Duration) error {
	deadline := time.Now().Add(min(wait, 15*time.Second))
	for {
		got, err := read(ctx)
		if err != nil {
			return err
		}
		changed, _ := offsetDiff(got, want)
		if len(changed) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var sb strings.Builder
			writeDiff(&sb, painter{}, "offsets wanted → read back", changed, 0)
			return fmt.Errorf("the offsets read back differ from the ones written:\n%s", strings.TrimRight(sb.String(), "\n"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// confirmStop asks whether to stop a connector, or refuses when nobody can
// be asked.
func (a *app) confirmStop(name, state string, cf *changeFlags) error {
	verb := afterwardsVerb(state, cf)
	return a.confirm(cf.yes,
		fmt.Sprintf("connector %s is %s; its offsets can only change while it is stopped", name, state),
		fmt.Sprintf("Stop it, change its offsets and %s it afterwards?", verb),
		fmt.Sprintf("pass --yes to let connectctl stop it (and %s it afterwards), or stop it first: connectctl stop %s", verb, name))
}

// confirm asks question on the terminal after saying what; without a
// terminal (or with stdin holding data) it refuses with hint, unless yes.
func (a *app) confirm(yes bool, what, question, hint string) error {
	if yes {
		return nil
	}
	if !a.stdinTTY || a.stdinUsed {
		return withHint(errors.New(what), hint)
	}
	if a.bar != nil {
		a.bar.finish() // the question goes on a line of its own
	}
	fmt.Fprintf(a.stderr, "%s.\n%s [y/N] ", what, question)
	if a.stdinReader == nil {
		a.stdinReader = bufio.NewReader(a.stdin)
	}
	line, err := a.stdinReader.ReadString('\n')
	if err != nil && line == "" {
		return errors.New("aborted: no answer")
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return errors.New("aborted: nothing changed")
}

func afterwardsVerb(state string, cf *changeFlags) string {
	switch afterwardsText(state, cf) {
	case "paused again":
		return "pause"
	case "resumed":
		return "resume"
	}
	return "leave"
}

// backendFor is the REST backend of a connector, or with --direct the
// offsets topic.
func (a *app) backendFor(ctx context.Context, name string, kf *kafkaFlags) (*backend, error) {
	if kf.direct {
		return a.directBackend(ctx, name, kf)
	}
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	return a.restBackend(ctx, c, name)
}

// clusterID names the place of the offsets in the history.
func (a *app) clusterID(kf *kafkaFlags) (string, error) {
	if kf.direct {
		d, err := a.directStore(kf)
		if err != nil {
			return "", err
		}
		return d.cluster, nil
	}
	c, err := a.client()
	if err != nil {
		return "", err
	}
	return c.BaseURL(), nil
}

// restBackend changes offsets through a worker's REST API.
func (a *app) restBackend(ctx context.Context, c *client.Client, name string) (*backend, error) {
	info, err := c.Connector(ctx, name)
	if err != nil {
		return nil, err
	}
	return &backend{
		cluster: c.BaseURL(),
		typ:     info.Type,
		config:  info.Config,
		state: func(ctx context.Context) (string, error) {
			st, err := c.Status(ctx, name)
			if client.IsNotFound(err) {
				return client.StateUnassigned, nil
			}
			if err != nil {
				return "", err
			}
			return st.Connector.State, nil
		},
		read: func(ctx context.Context) ([]client.ConnectorOffset, error) { return c.Offsets(ctx, name) },
		stop: func(ctx context.Context, state string, cf *changeFlags) (bool, error) {
			if err := a.confirmStop(name, state, cf); err != nil {
				return false, err
			}
			return true, stopAndWait(ctx, c, name, cf.wait)
		},
		write: func(ctx context.Context, patch []client.ConnectorOffset, all bool, cf *changeFlags) (string, error) {
			var said string
			err := retryBusy(ctx, cf.wait, func() error {
				var err error
				if all {
					said, err = c.ResetOffsets(ctx, name)
				} else {
					said, err = c.AlterOffsets(ctx, name, patch)
				}
				return err
			})
			return said, err
		},
		restore: func(ctx context.Context, state string, cf *changeFlags) (string, string, error) {
			return restoreState(ctx, c, name, state, cf.resume)
		},
	}, nil
}

// stopAndWait stops a connector and waits until it and its tasks are
// stopped: only then have its last offsets been committed.
func stopAndWait(ctx context.Context, c *client.Client, name string, wait time.Duration) error {
	if err := c.Stop(ctx, name); err != nil {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		st, err := c.Status(ctx, name)
		if err != nil && !client.IsNotFound(err) {
			return err
		}
		if err == nil && st.Connector.State == client.StateStopped && !tasksActive(st) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("connector %s did not stop within %s", name, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func tasksActive(st *client.ConnectorStatus) bool {
	for _, t := range st.Tasks {
		switch t.State {
		case client.StateRunning, client.StatePaused, client.StateRestarting:
			return true
		}
	}
	return false
}

// retryBusy runs f again while the worker says the connector's tasks are
// still shutting down, or that it is rebalancing: both pass.
func retryBusy(ctx context.Context, wait time.Duration, f func() error) error {
	deadline := time.Now().Add(wait)
	for {
		err := f()
		var cerr *client.Error
		busy := errors.As(err, &cerr) && (strings.Contains(cerr.Message, "haven't stopped completely yet") || cerr.StatusCode == 409)
		if !busy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// restoreState brings a connector whose offsets changed back to how it
// was: running ones are resumed, paused ones paused, others left stopped
// (unless resume). It returns the target state and a message.
func restoreState(ctx context.Context, c *client.Client, name, state string, resume bool) (string, string, error) {
	switch {
	case resume || wasRunning(state):
		if err := c.Resume(ctx, name); err != nil {
			return "", "", err
		}
		return client.StateRunning, "connector " + name + " resumed", nil
	case state == client.StatePaused:
		if err := c.Pause(ctx, name); err != nil {
			return "", "", err
		}
		return client.StatePaused, "connector " + name + " paused again", nil
	case state == client.StateFailed:
		return client.StateStopped, "connector " + name + " was FAILED and is left STOPPED; start it with: connectctl resume " + name, nil
	}
	return client.StateStopped, "", nil
}
