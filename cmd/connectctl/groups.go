package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/internal/groupoffsets"
)

// The groups commands manage the offsets of plain consumer groups, the
// applications between a pipeline's connectors, with the safety of the
// offsets commands: a diff first, --dry-run, a refusal while the group has
// members, a read-back, and a history that `groups undo` restores. The
// reset specs, the CSV of --export and --from-file, and the describe
// columns are kafka-consumer-groups.sh's.

func (a *app) groupsCmd() *cobra.Command {
	groups := &cobra.Command{
		Use:   "groups",
		Short: "Show and change the offsets of consumer groups (kafka-consumer-groups.sh, made safe)",
		Long: `Show and change the offsets of Kafka consumer groups: the applications between
connectors, and the consumer groups of sink connectors (connect-NAME).

Every change (reset, delete, undo) shows the offsets before and after,
is refused while the group has members (Kafka refuses it too: stop the
consumers first), keeps the offsets it replaces in the local history
(~/.local/state/connectctl/history/groups/), and reads them back to check
them. "connectctl groups undo GROUP" puts them back; --dry-run shows the
change and changes nothing.

These commands talk to Kafka: --bootstrap-server (or the context's) and
--kafka-config for security settings.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("groups needs a subcommand: list, describe, reset, delete, undo or history")
			}
			return fmt.Errorf("unknown groups subcommand %q: want list, describe, reset, delete, undo or history", args[0])
		},
	}
	groups.AddCommand(a.groupsListCmd(), a.groupsDescribeCmd(), a.groupsResetCmd(), a.groupsDeleteCmd(),
		a.groupsUndoCmd(), a.groupsHistoryCmd())
	return groups
}

// groupsAdmin is an admin client for the groups commands and the name of
// the cluster in the history.
func (a *app) groupsAdmin(kf *kafkaFlags) (*kadm.Client, string, func(), error) {
	_, seeds, err := a.kafkaOpts(kf)
	if err != nil {
		return nil, "", nil, err
	}
	adm, closeAdm, err := a.admin(kf)
	if err != nil {
		return nil, "", nil, err
	}
	return adm, "kafka://" + strings.Join(seeds, ","), closeAdm, nil
}

// groupCtx bounds one command's requests: kadm retries until its context
// ends.
func (a *app) groupCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, a.timeout)
}

func (a *app) groupsListCmd() *cobra.Command {
	var kf kafkaFlags
	var states []string
	cmd := &cobra.Command{
		Use:   "list [--state STATE...]",
		Short: "List the consumer groups, with their state, members and lag",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			adm, _, closeAdm, err := a.groupsAdmin(&kf)
			if err != nil {
				return err
			}
			defer closeAdm()
			ctx, cancel := a.groupCtx(cmd.Context())
			defer cancel()
			consumers, listed, err := groupoffsets.ConsumerGroups(ctx, adm, states...)
			if err != nil {
				return err
			}
			var lags kadm.DescribedGroupLags
			if len(consumers) > 0 {
				if lags, err = adm.Lag(ctx, consumers...); err != nil && len(lags) == 0 {
					return fmt.Errorf("reading the groups' lag: %w", err)
				}
			}
			type row struct {
				Group        string `json:"group"`
				State        string `json:"state"`
				ProtocolType string `json:"protocol_type"`
				Members      int    `json:"members"`
				Lag          *int64 `json:"lag"`
			}
			var out []row
			for _, name := range slices.Sorted(maps.Keys(listed)) {
				g := listed[name]
				r := row{Group: name, State: g.State, ProtocolType: g.ProtocolType}
				if l, ok := lags[name]; ok && l.Error() == nil {
					r.State, r.Members = l.State, len(l.Members)
					total := l.Lag.Total()
					r.Lag = &total
				}
				out = append(out, r)
			}
			if a.structured() {
				if out == nil {
					out = []row{}
				}
				return a.writeStructured(out)
			}
			if len(out) == 0 {
				_, err := fmt.Fprintln(a.stdout, "no consumer groups")
				return err
			}
			rows := make([][]string, 0, len(out))
			for _, r := range out {
				lag := "-"
				if r.Lag != nil {
					lag = strconv.FormatInt(*r.Lag, 10)
				}
				rows = append(rows, []string{r.Group, r.State, strconv.Itoa(r.Members), lag, r.ProtocolType})
			}
			return table(a.stdout, a.out(), []string{"GROUP", "STATE", "MEMBERS", "LAG", "TYPE"}, rows, func(_, col int, cell string) string {
				if col == 1 {
					return groupStateColor(cell)
				}
				return ""
			})
		},
	}
	kf.addConn(cmd)
	cmd.Flags().StringSliceVar(&states, "state", nil, "only groups in these states (Stable, Empty, PreparingRebalance, CompletingRebalance, Dead)")
	return cmd
}

func groupStateColor(state string) string {
	switch state {
	case "Stable":
		return green
	case "Empty":
		return ""
	case "Dead":
		return red
	}
	return yellow
}

// describedPartition is one line of `groups describe`: the columns of
// kafka-consumer-groups --describe.
type describedPartition struct {
	Group      string `json:"group"`
	Topic      string `json:"topic"`
	Partition  int32  `json:"partition"`
	Current    *int64 `json:"current_offset"`
	LogEnd     *int64 `json:"log_end_offset"`
	Lag        *int64 `json:"lag"`
	ConsumerID string `json:"consumer_id"`
	Host       string `json:"host"`
	ClientID   string `json:"client_id"`
}

type describedGroup struct {
	Group      string               `json:"group"`
	State      string               `json:"state"`
	Members    int                  `json:"members"`
	TotalLag   int64                `json:"total_lag"`
	Partitions []describedPartition `json:"partitions"`
}

func (a *app) groupsDescribeCmd() *cobra.Command {
	var kf kafkaFlags
	var all bool
	cmd := &cobra.Command{
		Use:   "describe GROUP... | --all-groups",
		Short: "Show a group's offsets, log end offsets, lag and members per partition",
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return errors.New("name the groups to describe, or pass --all-groups")
			}
			adm, _, closeAdm, err := a.groupsAdmin(&kf)
			if err != nil {
				return err
			}
			defer closeAdm()
			ctx, cancel := a.groupCtx(cmd.Context())
			defer cancel()
			if all {
				var err error
				if args, _, err = groupoffsets.ConsumerGroups(ctx, adm); err != nil {
					return err
				}
			}
			if len(args) == 0 {
				_, err := fmt.Fprintln(a.stdout, "no consumer groups")
				return err
			}
			lags, err := adm.Lag(ctx, args...)
			if err != nil && len(lags) == 0 {
				return fmt.Errorf("describing %s: %w", strings.Join(args, ", "), err)
			}
			var out []describedGroup
			for _, name := range args {
				l, ok := lags[name]
				if !ok {
					return fmt.Errorf("group %s: no answer from Kafka", name)
				}
				if groupoffsets.Missing(l) {
					return withHint(fmt.Errorf("consumer group '%s' does not exist", name), "list the groups with: connectctl groups list")
				}
				if err := l.Error(); err != nil {
					return fmt.Errorf("group %s: %w", name, err)
				}
				out = append(out, describeLag(l))
			}
			if a.structured() {
				return a.writeStructured(out)
			}
			for i, g := range out {
				if i > 0 {
					fmt.Fprintln(a.stdout)
				}
				fmt.Fprintf(a.stdout, "group %s: %s, %d member%s, lag %d\n", g.Group, a.out().paint(groupStateColor(g.State), g.State), g.Members, plural(g.Members), g.TotalLag)
				if len(g.Partitions) == 0 {
					fmt.Fprintln(a.stdout, "no committed offsets and no partitions assigned")
					continue
				}
				rows := make([][]string, 0, len(g.Partitions))
				for _, p := range g.Partitions {
					rows = append(rows, []string{p.Group, p.Topic, strconv.Itoa(int(p.Partition)), optInt(p.Current), optInt(p.LogEnd), optInt(p.Lag),
						orDash(p.ConsumerID), orDash(p.Host), orDash(p.ClientID)})
				}
				if err := table(a.stdout, a.out(), []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"}, rows, nil); err != nil {
					return err
				}
				if strings.HasPrefix(g.Group, "connect-") {
					fmt.Fprintf(a.stdout, "hint: if this is sink connector %s's group, change its offsets through the worker: connectctl offsets set %s\n",
						strings.TrimPrefix(g.Group, "connect-"), strings.TrimPrefix(g.Group, "connect-"))
				}
			}
			return nil
		},
	}
	kf.addConn(cmd)
	cmd.Flags().BoolVar(&all, "all-groups", false, "describe every consumer group")
	return cmd
}

func describeLag(l kadm.DescribedGroupLag) describedGroup {
	g := describedGroup{Group: l.Group, State: l.State, Members: len(l.Members), Partitions: []describedPartition{}}
	for _, m := range l.Lag.Sorted() {
		p := describedPartition{Group: l.Group, Topic: m.Topic, Partition: m.Partition}
		if m.Commit.At >= 0 {
			p.Current = new(m.Commit.At)
		}
		if m.End.Err == nil {
			p.LogEnd = new(m.End.Offset)
		}
		if m.Err == nil && m.Lag >= 0 && p.Current != nil {
			p.Lag = new(m.Lag)
			g.TotalLag += m.Lag
		}
		if m.Member != nil {
			p.ConsumerID, p.Host, p.ClientID = m.Member.MemberID, strings.TrimPrefix(m.Member.ClientHost, "/"), m.Member.ClientID
		}
		g.Partitions = append(g.Partitions, p)
	}
	return g
}

func optInt(v *int64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatInt(*v, 10)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// resetFlags say which partitions `groups reset` moves, and where.
type resetFlags struct {
	topics     []string
	allTopics  bool
	toEarliest bool
	toLatest   bool
	toCurrent  bool
	toOffset   int64
	shiftBy    int64
	toDatetime string
	byDuration string
	fromFile   string
	export     bool
	force      bool
	dryRun     bool
}

func (a *app) groupsResetCmd() *cobra.Command {
	var kf kafkaFlags
	var rf resetFlags
	cmd := &cobra.Command{
		Use:   "reset GROUP (--topic T[:P,P...]... | --all-topics) (--to-earliest | --to-latest | --to-offset N | --shift-by N | --to-datetime T | --by-duration D | --to-current) | --from-file FILE",
		Short: "Move a consumer group's offsets, as kafka-consumer-groups --reset-offsets does, with a diff, a history and undo",
		Long: `Move a consumer group's committed offsets, as kafka-consumer-groups.sh
--reset-offsets --execute does, for the partitions of:

  --topic T               every partition of T (repeat for more topics)
  --topic T:0,2           partitions 0 and 2 of T
  --all-topics            every partition the group has committed offsets for

to:

  --to-earliest           the start of each partition
  --to-latest             its end
  --to-offset N           offset N
  --shift-by N            the committed offset plus N (N may be negative)
  --to-datetime T         the first record at or after T: 2026-07-10T14:30:00.000
                          (local time) or with a zone (2026-07-10T14:30:00Z)
  --by-duration D         the first record at or after now minus D: an ISO-8601
                          duration as Kafka takes it (PT15M, P1DT2H) or 15m, 2h30m
  --to-current            the committed offset (the end where there is none)
  --from-file FILE        the offsets of a CSV file, "topic,partition,offset" per
                          line (or "group,topic,partition,offset"), as --export writes

Offsets beyond a partition's end or before its start are brought to it,
with a warning, as Kafka does. The change is refused while the group has
members (Kafka refuses commits from outside an active group); --force
tries anyway. --export prints the new offsets as CSV instead of the diff.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.groupsReset(cmd, args[0], &rf, &kf)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&rf.topics, "topic", nil, "a topic, or topic:partition,partition (repeatable)")
	f.BoolVar(&rf.allTopics, "all-topics", false, "every partition the group has committed offsets for")
	f.BoolVar(&rf.toEarliest, "to-earliest", false, "to the start of each partition")
	f.BoolVar(&rf.toLatest, "to-latest", false, "to the end of each partition")
	f.BoolVar(&rf.toCurrent, "to-current", false, "to the committed offset (the end where there is none)")
	f.Int64Var(&rf.toOffset, "to-offset", 0, "to this offset")
	f.Int64Var(&rf.shiftBy, "shift-by", 0, "by this many records from the committed offset (negative: back)")
	f.StringVar(&rf.toDatetime, "to-datetime", "", "to the first record at or after this time")
	f.StringVar(&rf.byDuration, "by-duration", "", "to the first record at or after now minus this duration (PT15M, P1D, 15m)")
	f.StringVar(&rf.fromFile, "from-file", "", "to the offsets of this CSV file (topic,partition,offset per line)")
	f.BoolVar(&rf.export, "export", false, "print the new offsets as CSV (for --from-file) instead of the diff")
	addGroupChangeFlags(cmd, &rf.force, &rf.dryRun)
	kf.addConn(cmd)
	return cmd
}

// groupsReset works out the new offsets, then changes them.
func (a *app) groupsReset(cmd *cobra.Command, group string, rf *resetFlags, kf *kafkaFlags) error {
	flags := cmd.Flags()
	var specs []string
	for _, s := range []string{"to-earliest", "to-latest", "to-current", "to-offset", "shift-by", "to-datetime", "by-duration", "from-file"} {
		if flags.Changed(s) {
			specs = append(specs, "--"+s)
		}
	}
	if len(specs) != 1 {
		if len(specs) == 0 {
			return withHint(errors.New("say where to move the offsets: one of --to-earliest, --to-latest, --to-offset, --shift-by, --to-datetime, --by-duration, --to-current or --from-file"),
				"see connectctl groups reset --help")
		}
		return fmt.Errorf("give only one of %s", strings.Join(specs, ", "))
	}
	scoped := len(rf.topics) > 0 || rf.allTopics
	switch {
	case rf.fromFile != "" && scoped:
		return errors.New("--from-file names its partitions: it goes without --topic and --all-topics")
	case rf.fromFile == "" && !scoped:
		return withHint(errors.New("say which partitions to move: --topic T, --topic T:0,2 or --all-topics"), "see connectctl groups reset --help")
	case len(rf.topics) > 0 && rf.allTopics:
		return errors.New("give --topic or --all-topics, not both")
	}
	// Local input first: a bad file or time costs no request.
	var scope []groupoffsets.TopicSpec
	for _, t := range rf.topics {
		s, err := groupoffsets.ParseTopicSpec(t)
		if err != nil {
			return err
		}
		scope = append(scope, s)
	}
	var filePlan groupoffsets.State
	var at time.Time
	switch {
	case rf.fromFile != "":
		data, err := a.readInput(rf.fromFile)
		if err != nil {
			return err
		}
		if filePlan, err = parseResetCSV(data, group); err != nil {
			return fmt.Errorf("%s: %w", rf.fromFile, err)
		}
		if len(filePlan) == 0 {
			return fmt.Errorf("%s: no offsets for group %s", rf.fromFile, group)
		}
	case rf.toDatetime != "":
		t, err := groupoffsets.ParseDatetime(rf.toDatetime)
		if err != nil {
			return err
		}
		at = t
	case rf.byDuration != "":
		d, err := parseISODuration(rf.byDuration)
		if err != nil {
			return err
		}
		at = a.now().Add(-d)
	}
	adm, cluster, closeAdm, err := a.groupsAdmin(kf)
	if err != nil {
		return err
	}
	defer closeAdm()
	ctx, cancel := a.groupCtx(cmd.Context())
	defer cancel()
	target := func(before groupoffsets.State) (groupoffsets.State, error) {
		var parts []groupoffsets.TP
		switch {
		case filePlan != nil:
			parts = slices.Collect(maps.Keys(filePlan))
		case rf.allTopics:
			if len(before) == 0 {
				return nil, withHint(fmt.Errorf("group %s has no committed offsets, so --all-topics names no partition", group),
					"name the topics with --topic")
			}
			parts = slices.Collect(maps.Keys(before))
		default:
			var err error
			if parts, err = groupoffsets.PartitionsOf(ctx, adm, scope); err != nil {
				return nil, err
			}
		}
		slices.SortFunc(parts, groupoffsets.CompareTP)
		r := groupoffsets.Resolver{Adm: adm, Warn: func(w string) { fmt.Fprintln(a.stderr, "warning: "+w) }}
		switch {
		case rf.toEarliest:
			return r.Start(ctx, parts)
		case rf.toLatest:
			return r.End(ctx, parts)
		case flags.Changed("to-offset"):
			want := groupoffsets.State{}
			for _, tp := range parts {
				want[tp] = rf.toOffset
			}
			return r.Clamp(ctx, want)
		case flags.Changed("shift-by"):
			return r.Shift(ctx, parts, before, rf.shiftBy)
		case !at.IsZero():
			return r.AtTime(ctx, parts, at)
		case rf.toCurrent:
			return r.Current(ctx, parts, before)
		default:
			return r.Clamp(ctx, filePlan)
		}
	}
	// The partitions not moved keep their offsets.
	merged := func(before groupoffsets.State) (groupoffsets.State, error) {
		moved, err := target(before)
		if err != nil {
			return nil, err
		}
		after := maps.Clone(before)
		maps.Copy(after, moved)
		return after, nil
	}
	return a.groupChange(ctx, adm, groupPlan{group: group, cluster: cluster, op: "reset", target: merged, export: rf.export}, rf.force, rf.dryRun)
}

func (a *app) groupsDeleteCmd() *cobra.Command {
	var kf kafkaFlags
	var topics []string
	var force, dryRun bool
	cmd := &cobra.Command{
		Use:   "delete GROUP [--topic T[:P,P...]...]",
		Short: "Delete a consumer group, or its offsets of some topics (kafka-consumer-groups --delete / --delete-offsets)",
		Long: `Delete a consumer group and its committed offsets, or with --topic only its
offsets of those topics (or partitions). The offsets are kept in the history
first: "connectctl groups undo GROUP" commits them again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			group := args[0]
			var scope []groupoffsets.TopicSpec
			for _, t := range topics {
				s, err := groupoffsets.ParseTopicSpec(t)
				if err != nil {
					return err
				}
				scope = append(scope, s)
			}
			adm, cluster, closeAdm, err := a.groupsAdmin(&kf)
			if err != nil {
				return err
			}
			defer closeAdm()
			ctx, cancel := a.groupCtx(cmd.Context())
			defer cancel()
			p := groupPlan{group: group, cluster: cluster, op: "delete", deleteGroup: len(scope) == 0}
			p.target = func(before groupoffsets.State) (groupoffsets.State, error) {
				if p.deleteGroup {
					return groupoffsets.State{}, nil
				}
				after := maps.Clone(before)
				for tp := range before {
					for _, s := range scope {
						if s.Topic == tp.Topic && (len(s.Partitions) == 0 || slices.Contains(s.Partitions, tp.Partition)) {
							delete(after, tp)
						}
					}
				}
				return after, nil
			}
			return a.groupChange(ctx, adm, p, force, dryRun)
		},
	}
	cmd.Flags().StringArrayVar(&topics, "topic", nil, "delete only the offsets of this topic, or topic:partition,partition (repeatable)")
	addGroupChangeFlags(cmd, &force, &dryRun)
	kf.addConn(cmd)
	return cmd
}

func (a *app) groupsUndoCmd() *cobra.Command {
	var kf kafkaFlags
	var force, dryRun bool
	cmd := &cobra.Command{
		Use:   "undo GROUP",
		Short: "Put back the offsets that the last change by connectctl replaced",
		Long: `Put back a consumer group's offsets as they were before the last change made
by connectctl on this cluster (reset, delete, or an earlier undo's target),
from the local history. Undoing again goes one more change back.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			group := args[0]
			adm, cluster, closeAdm, err := a.groupsAdmin(&kf)
			if err != nil {
				return err
			}
			defer closeAdm()
			e, err := a.lastUndoable(cluster, subject{group: true, name: group})
			if err != nil {
				return err
			}
			if !a.structured() {
				fmt.Fprintf(a.stdout, "going back to the offsets of %s, before %s\n", e.Time.Local().Format("2006-01-02 15:04:05"), e.Operation)
			}
			ctx, cancel := a.groupCtx(cmd.Context())
			defer cancel()
			saved := groupoffsets.FromList(e.GroupOffsets)
			p := groupPlan{group: group, cluster: cluster, op: "undo", noHistory: true,
				target: func(groupoffsets.State) (groupoffsets.State, error) { return saved, nil }}
			done, err := a.groupChangeDone(ctx, adm, p, force, dryRun)
			if err != nil || !done {
				return err
			}
			return markUndone(e)
		},
	}
	addGroupChangeFlags(cmd, &force, &dryRun)
	kf.addConn(cmd)
	return cmd
}

func (a *app) groupsHistoryCmd() *cobra.Command {
	var kf kafkaFlags
	cmd := &cobra.Command{
		Use:   "history GROUP",
		Short: "List the offsets connectctl replaced for a consumer group on this cluster, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, seeds, err := a.kafkaOpts(&kf)
			if err != nil {
				return err
			}
			s := subject{group: true, name: args[0]}
			entries, err := a.history("kafka://"+strings.Join(seeds, ","), s)
			if err != nil {
				return err
			}
			return a.historyTable(s, entries)
		},
	}
	kf.addConn(cmd)
	return cmd
}

// addGroupChangeFlags adds the flags of every command that changes a
// group's offsets.
func addGroupChangeFlags(cmd *cobra.Command, force, dryRun *bool) {
	cmd.Flags().BoolVar(force, "force", false, "try the change even though the group has members")
	cmd.Flags().BoolVar(dryRun, "dry-run", false, "show the change and change nothing")
}

// groupPlan is one change of a group's offsets: target computes the
// committed offsets wanted from those the group has. Partitions missing
// from the target lose their offsets.
type groupPlan struct {
	group       string
	cluster     string
	op          string // reset, delete, undo
	target      func(before groupoffsets.State) (groupoffsets.State, error)
	noHistory   bool
	deleteGroup bool // delete the group itself, not only offsets
	export      bool // print the target as CSV instead of the diff
}

// groupChangeResult is what `-o json|yaml` shows of a change.
type groupChangeResult struct {
	Group       string                `json:"group"`
	Cluster     string                `json:"cluster"`
	Operation   string                `json:"operation"`
	DryRun      bool                  `json:"dry_run"`
	State       string                `json:"state_before"`
	Members     int                   `json:"members"`
	Before      []groupoffsets.Offset `json:"before"`
	After       []groupoffsets.Offset `json:"after"`
	Changed     int                   `json:"partitions_changed"`
	Verified    bool                  `json:"verified"`
	HistoryFile string                `json:"history_file,omitempty"`
}

func (a *app) groupChange(ctx context.Context, adm *kadm.Client, p groupPlan, force, dryRun bool) error {
	_, err := a.groupChangeDone(ctx, adm, p, force, dryRun)
	return err
}

// groupChangeDone runs the safe change of a group's offsets: show the
// diff, refuse while the group has members, save the old offsets, apply,
// verify. It reports whether it changed anything.
func (a *app) groupChangeDone(ctx context.Context, adm *kadm.Client, p groupPlan, force, dryRun bool) (bool, error) {
	text := !a.structured()
	w := a.stdout
	if p.export {
		// The CSV is the output; what is said goes to stderr.
		text, w = false, a.stderr
	}
	res := &groupChangeResult{Group: p.group, Cluster: p.cluster, Operation: p.op, DryRun: dryRun}
	state, members, err := groupoffsets.Describe(ctx, adm, p.group)
	if err != nil {
		return false, err
	}
	res.State, res.Members = state, len(members)
	before, err := groupoffsets.Fetch(ctx, adm, p.group)
	if err != nil {
		return false, err
	}
	after, err := p.target(before)
	if err != nil {
		return false, err
	}
	res.Before, res.After = before.List(), after.List()
	rows, commits, deletes := groupoffsets.Diff(before, after)
	res.Changed = len(commits) + len(deletes)
	finish := func(done bool) (bool, error) {
		switch {
		case p.export:
			var b strings.Builder
			for _, o := range after.List() {
				fmt.Fprintf(&b, "%s,%d,%d\n", o.Topic, o.Partition, o.Offset)
			}
			_, err := fmt.Fprint(a.stdout, b.String())
			return done, err
		case !text:
			return done, a.writeStructured(res)
		}
		return done, nil
	}
	if res.Changed == 0 && !(p.deleteGroup && state != "Dead") {
		fmt.Fprintf(w, "the offsets of group %s are already as asked: nothing to change\n", p.group)
		return finish(false)
	}
	if text || p.export {
		pt := a.out()
		if p.export {
			pt = painter{}
		}
		writeGroupDiff(w, pt, p.group, rows, len(after)-len(commits))
	}
	active := groupoffsets.Active(state)
	if active && !force {
		err := withHint(groupoffsets.InactiveError(p.group, state, len(members)),
			"stop the group's consumers first (Kafka refuses commits from outside a group with members); --force tries anyway")
		if !dryRun {
			return false, err
		}
		fmt.Fprintf(w, "the change would be refused: %v\n", err)
	}
	if dryRun {
		fmt.Fprintln(w, "dry run: nothing changed")
		return finish(false)
	}
	if active {
		fmt.Fprintf(a.stderr, "warning: group %s is %s with %d member%s; trying anyway (--force)\n", p.group, state, len(members), plural(len(members)))
	}
	if !p.noHistory {
		path, err := a.saveHistory(historyEntry{Group: p.group, Cluster: p.cluster, Operation: p.op, GroupOffsets: before.List()})
		if err != nil {
			return false, err
		}
		res.HistoryFile = path
	}
	apply := func() error { return groupoffsets.Apply(ctx, adm, p.group, commits, deletes) }
	if p.deleteGroup {
		apply = func() error { return groupoffsets.DeleteGroup(ctx, adm, p.group) }
	}
	if err := apply(); err != nil {
		if active {
			err = withHint(err, "Kafka takes offset changes only for a group without members: stop its consumers")
		}
		return false, err
	}
	differ, err := groupoffsets.Verify(ctx, adm, p.group, after, min(a.timeout, 15*time.Second))
	if err == nil && len(differ) > 0 {
		var sb strings.Builder
		writeGroupDiff(&sb, painter{}, p.group, differ, 0)
		err = fmt.Errorf("the offsets read back differ from the ones written (CURRENT is what was read):\n%s", strings.TrimRight(sb.String(), "\n"))
	}
	if err != nil {
		return false, withHint(err, "put the previous offsets back with: connectctl groups undo "+p.group)
	}
	res.Verified = true
	if text || p.export {
		if p.deleteGroup {
			fmt.Fprintf(w, "group %s deleted (%d partition%s had offsets) and verified\n", p.group, len(before), plural(len(before)))
		} else {
			fmt.Fprintf(w, "offsets of group %s changed (%d partition%s) and verified\n", p.group, res.Changed, plural(res.Changed))
		}
		if res.HistoryFile != "" {
			fmt.Fprintf(w, "previous offsets saved; put them back with: connectctl groups undo %s\n", p.group)
		}
	}
	return finish(true)
}

// writeGroupDiff shows the change as kafka-consumer-groups' plan, with the
// offsets before beside the new ones.
func writeGroupDiff(w io.Writer, p painter, group string, rows []groupoffsets.Change, same int) {
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		cur, next := "-", "(deleted)"
		if r.HadBefore {
			cur = strconv.FormatInt(r.Before, 10)
		}
		if r.Has {
			next = strconv.FormatInt(r.After, 10)
		}
		out = append(out, []string{group, r.TP.Topic, strconv.Itoa(int(r.TP.Partition)), cur, next})
	}
	_ = table(w, p, []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"}, out, func(row, col int, _ string) string {
		switch {
		case col == 3 && rows[row].HadBefore:
			return red
		case col == 4:
			return green
		}
		return ""
	})
	if same > 0 {
		fmt.Fprintf(w, "  (%d partition%s unchanged)\n", same, plural(same))
	}
}
