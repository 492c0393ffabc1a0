package main

import (
	"cmp"
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
	"github.com/twmb/franz-go/pkg/kerr"
)

// The groups commands manage the offsets of plain consumer groups, the
// applications between a pipeline's connectors, with the safety of the
// offsets commands: a diff first, --dry-run, a refusal while the group has
// members, a read-back, and a history that `groups undo` restores. The
// reset specs, the CSV of --export and --from-file, and the describe
// columns are kafka-consumer-groups.sh's.

// groupOffset is one partition's committed offset.
type groupOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

type topicPartition struct {
	topic     string
	partition int32
}

func (tp topicPartition) String() string { return fmt.Sprintf("%s-%d", tp.topic, tp.partition) }

func compareTP(x, y topicPartition) int {
	return cmp.Or(strings.Compare(x.topic, y.topic), cmp.Compare(x.partition, y.partition))
}

// groupState is a group's committed offsets by partition.
type groupState map[topicPartition]int64

func (s groupState) list() []groupOffset {
	out := make([]groupOffset, 0, len(s))
	for _, tp := range slices.SortedFunc(maps.Keys(s), compareTP) {
		out = append(out, groupOffset{tp.topic, tp.partition, s[tp]})
	}
	return out
}

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
			listed, err := adm.ListGroups(ctx, states...)
			if err != nil {
				return fmt.Errorf("listing groups: %w", err)
			}
			var consumers []string
			for name, g := range listed {
				if g.ProtocolType == "consumer" || g.ProtocolType == "" {
					consumers = append(consumers, name)
				}
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
				listed, err := adm.ListGroups(ctx)
				if err != nil {
					return fmt.Errorf("listing groups: %w", err)
				}
				for name, g := range listed {
					if g.ProtocolType == "consumer" || g.ProtocolType == "" {
						args = append(args, name)
					}
				}
				slices.Sort(args)
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
				err := l.Error()
				// Kafka 4 answers GROUP_ID_NOT_FOUND; before, a Dead group.
				if errors.Is(err, kerr.GroupIDNotFound) || err == nil && l.State == "Dead" && len(l.Lag) == 0 {
					return withHint(fmt.Errorf("consumer group '%s' does not exist", name), "list the groups with: connectctl groups list")
				}
				if err != nil {
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
			p.Current = ptr(m.Commit.At)
		}
		if m.End.Err == nil {
			p.LogEnd = ptr(m.End.Offset)
		}
		if m.Err == nil && m.Lag >= 0 && p.Current != nil {
			p.Lag = ptr(m.Lag)
			g.TotalLag += m.Lag
		}
		if m.Member != nil {
			p.ConsumerID, p.Host, p.ClientID = m.Member.MemberID, strings.TrimPrefix(m.Member.ClientHost, "/"), m.Member.ClientID
		}
		g.Partitions = append(g.Partitions, p)
	}
	return g
}

func ptr[T any](v T) *T { return &v }

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
	f.BoolVar(&rf.force, "force", false, "try the change even though the group has members")
	f.BoolVar(&rf.dryRun, "dry-run", false, "show the change and change nothing")
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
	var scope []topicSpec
	for _, t := range rf.topics {
		s, err := parseTopicSpec(t)
		if err != nil {
			return err
		}
		scope = append(scope, s)
	}
	var filePlan groupState
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
		t, err := parseDatetime(rf.toDatetime)
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
	target := func(before groupState) (groupState, error) {
		var parts []topicPartition
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
			if parts, err = partitionsOf(ctx, adm, scope); err != nil {
				return nil, err
			}
		}
		slices.SortFunc(parts, compareTP)
		r := resolver{a: a, ctx: ctx, adm: adm, parts: parts}
		switch {
		case rf.toEarliest:
			return r.listed(adm.ListStartOffsets, "start")
		case rf.toLatest:
			return r.listed(adm.ListEndOffsets, "end")
		case flags.Changed("to-offset"):
			want := groupState{}
			for _, tp := range parts {
				want[tp] = rf.toOffset
			}
			return r.clamp(want)
		case flags.Changed("shift-by"):
			want := groupState{}
			for _, tp := range parts {
				cur, ok := before[tp]
				if !ok {
					return nil, fmt.Errorf("cannot shift offset for partition %s since there is no current committed offset", tp)
				}
				want[tp] = cur + rf.shiftBy
			}
			return r.clamp(want)
		case !at.IsZero():
			return r.atTime(at)
		case rf.toCurrent:
			return r.current(before)
		default:
			return r.clamp(filePlan)
		}
	}
	// The partitions not moved keep their offsets.
	merged := func(before groupState) (groupState, error) {
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

// topicSpec is a --topic: a topic, and the partitions named (none: all).
type topicSpec struct {
	topic      string
	partitions []int32
}

// parseTopicSpec reads --topic T or T:0,2 as kafka-consumer-groups does.
func parseTopicSpec(s string) (topicSpec, error) {
	topic, parts, found := strings.Cut(s, ":")
	if topic == "" {
		return topicSpec{}, fmt.Errorf("--topic %q: no topic name", s)
	}
	spec := topicSpec{topic: topic}
	if !found {
		return spec, nil
	}
	for _, p := range strings.Split(parts, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil || n < 0 {
			return topicSpec{}, fmt.Errorf("--topic %q: invalid partition %q; want T or T:0,2", s, p)
		}
		spec.partitions = append(spec.partitions, int32(n))
	}
	return spec, nil
}

// partitionsOf lists the partitions that --topic flags name, checking that
// they exist.
func partitionsOf(ctx context.Context, adm *kadm.Client, scope []topicSpec) ([]topicPartition, error) {
	var names []string
	for _, s := range scope {
		names = append(names, s.topic)
	}
	td, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("reading the topics' metadata: %w", err)
	}
	seen := map[topicPartition]bool{}
	var out []topicPartition
	for _, s := range scope {
		d, ok := td[s.topic]
		if !ok || d.Err != nil {
			return nil, fmt.Errorf("topic %s does not exist", s.topic)
		}
		parts := s.partitions
		if len(parts) == 0 {
			parts = slices.Sorted(maps.Keys(d.Partitions))
		}
		for _, p := range parts {
			if _, ok := d.Partitions[p]; !ok {
				return nil, fmt.Errorf("topic %s has no partition %d (it has %d)", s.topic, p, len(d.Partitions))
			}
			tp := topicPartition{s.topic, p}
			if !seen[tp] {
				seen[tp] = true
				out = append(out, tp)
			}
		}
	}
	return out, nil
}

// resolver turns a reset spec into offsets for parts, asking Kafka where
// the partitions start and end.
type resolver struct {
	a     *app
	ctx   context.Context
	adm   *kadm.Client
	parts []topicPartition
}

func (r *resolver) topics(parts []topicPartition) []string {
	var out []string
	for _, tp := range parts {
		out = append(out, tp.topic)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// listed is each partition's offset as list (start or end offsets) gives it.
func (r *resolver) listed(list func(context.Context, ...string) (kadm.ListedOffsets, error), which string) (groupState, error) {
	return r.listedFor(r.parts, list, which)
}

func (r *resolver) listedFor(parts []topicPartition, list func(context.Context, ...string) (kadm.ListedOffsets, error), which string) (groupState, error) {
	out := groupState{}
	if len(parts) == 0 {
		return out, nil
	}
	listed, err := list(r.ctx, r.topics(parts)...)
	if err != nil {
		return nil, fmt.Errorf("listing %s offsets: %w", which, err)
	}
	for _, tp := range parts {
		o, ok := listed.Lookup(tp.topic, tp.partition)
		if !ok || o.Err != nil {
			cause := "no answer"
			if ok {
				cause = o.Err.Error()
			}
			return nil, fmt.Errorf("error getting the %s offset of %s: %s", which, tp, cause)
		}
		out[tp] = o.Offset
	}
	return out, nil
}

// clamp brings offsets past a partition's end or before its start to it,
// with Kafka's warning.
func (r *resolver) clamp(want groupState) (groupState, error) {
	parts := slices.SortedFunc(maps.Keys(want), compareTP)
	start, err := r.listedFor(parts, r.adm.ListStartOffsets, "start")
	if err != nil {
		return nil, err
	}
	end, err := r.listedFor(parts, r.adm.ListEndOffsets, "end")
	if err != nil {
		return nil, err
	}
	out := groupState{}
	for _, tp := range parts {
		off := want[tp]
		switch {
		case off > end[tp]:
			fmt.Fprintf(r.a.stderr, "warning: new offset (%d) is higher than latest offset for topic partition %s. Value will be set to %d\n", off, tp, end[tp])
			off = end[tp]
		case off < start[tp]:
			fmt.Fprintf(r.a.stderr, "warning: new offset (%d) is lower than earliest offset for topic partition %s. Value will be set to %d\n", off, tp, start[tp])
			off = start[tp]
		}
		out[tp] = off
	}
	return out, nil
}

// atTime is the first offset at or after t on each partition, or its end
// where no record is that recent (kadm lists the end then, with no
// timestamp).
func (r *resolver) atTime(t time.Time) (groupState, error) {
	listed, err := r.adm.ListOffsetsAfterMilli(r.ctx, t.UnixMilli(), r.topics(r.parts)...)
	if err != nil {
		return nil, fmt.Errorf("listing offsets by time: %w", err)
	}
	out := groupState{}
	for _, tp := range r.parts {
		o, ok := listed.Lookup(tp.topic, tp.partition)
		if !ok || o.Err != nil || o.Offset < 0 {
			return nil, fmt.Errorf("error getting offset by timestamp of topic partition %s", tp)
		}
		if o.Timestamp < 0 {
			fmt.Fprintf(r.a.stderr, "warning: partition %d of topic %s has no record at or after %s: falling back to its end\n",
				tp.partition, tp.topic, t.Local().Format("2006-01-02T15:04:05.000"))
		}
		out[tp] = o.Offset
	}
	return out, nil
}

// current is the committed offset, or the end where there is none.
func (r *resolver) current(before groupState) (groupState, error) {
	out := groupState{}
	var missing []topicPartition
	for _, tp := range r.parts {
		if off, ok := before[tp]; ok {
			out[tp] = off
		} else {
			missing = append(missing, tp)
		}
	}
	ends, err := r.listedFor(missing, r.adm.ListEndOffsets, "end")
	if err != nil {
		return nil, err
	}
	maps.Copy(out, ends)
	return out, nil
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
			var scope []topicSpec
			for _, t := range topics {
				s, err := parseTopicSpec(t)
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
			p.target = func(before groupState) (groupState, error) {
				if p.deleteGroup {
					return groupState{}, nil
				}
				after := maps.Clone(before)
				for tp := range before {
					for _, s := range scope {
						if s.topic == tp.topic && (len(s.partitions) == 0 || slices.Contains(s.partitions, tp.partition)) {
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
	cmd.Flags().BoolVar(&force, "force", false, "try even though the group has members")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the change and change nothing")
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
			saved := groupState{}
			for _, o := range e.GroupOffsets {
				saved[topicPartition{o.Topic, o.Partition}] = o.Offset
			}
			p := groupPlan{group: group, cluster: cluster, op: "undo", noHistory: true,
				target: func(groupState) (groupState, error) { return saved, nil }}
			done, err := a.groupChangeDone(ctx, adm, p, force, dryRun)
			if err != nil || !done {
				return err
			}
			return markUndone(e)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "try even though the group has members")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show the change and change nothing")
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

// groupPlan is one change of a group's offsets: target computes the
// committed offsets wanted from those the group has. Partitions missing
// from the target lose their offsets.
type groupPlan struct {
	group       string
	cluster     string
	op          string // reset, delete, undo
	target      func(before groupState) (groupState, error)
	noHistory   bool
	deleteGroup bool // delete the group itself, not only offsets
	export      bool // print the target as CSV instead of the diff
}

// groupChangeResult is what `-o json|yaml` shows of a change.
type groupChangeResult struct {
	Group       string        `json:"group"`
	Cluster     string        `json:"cluster"`
	Operation   string        `json:"operation"`
	DryRun      bool          `json:"dry_run"`
	State       string        `json:"state_before"`
	Members     int           `json:"members"`
	Before      []groupOffset `json:"before"`
	After       []groupOffset `json:"after"`
	Changed     int           `json:"partitions_changed"`
	Verified    bool          `json:"verified"`
	HistoryFile string        `json:"history_file,omitempty"`
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
	described, err := adm.DescribeGroups(ctx, p.group)
	if err != nil && len(described) == 0 {
		return false, fmt.Errorf("describing group %s: %w", p.group, err)
	}
	d, ok := described[p.group]
	if !ok {
		return false, fmt.Errorf("group %s: no answer from Kafka", p.group)
	}
	switch {
	case errors.Is(d.Err, kerr.GroupIDNotFound):
		d.State, d.Members = "Dead", nil // Kafka 4's answer for a group that is not there
	case d.Err != nil:
		return false, fmt.Errorf("group %s: %w", p.group, d.Err)
	}
	res.State, res.Members = d.State, len(d.Members)
	before, err := fetchGroup(ctx, adm, p.group)
	if err != nil {
		return false, err
	}
	after, err := p.target(before)
	if err != nil {
		return false, err
	}
	res.Before, res.After = before.list(), after.list()
	rows, commits, deletes := groupDiff(before, after)
	res.Changed = len(commits) + len(deletes)
	finish := func(done bool) (bool, error) {
		switch {
		case p.export:
			var b strings.Builder
			for _, o := range after.list() {
				fmt.Fprintf(&b, "%s,%d,%d\n", o.Topic, o.Partition, o.Offset)
			}
			_, err := fmt.Fprint(a.stdout, b.String())
			return done, err
		case !text:
			return done, a.writeStructured(res)
		}
		return done, nil
	}
	if res.Changed == 0 && !(p.deleteGroup && d.State != "Dead") {
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
	active := d.State != "Empty" && d.State != "Dead"
	if active && !force {
		err := withHint(fmt.Errorf("assignments can only be reset if the group '%s' is inactive, but the current state is %s (%d member%s)", p.group, d.State, len(d.Members), plural(len(d.Members))),
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
		fmt.Fprintf(a.stderr, "warning: group %s is %s with %d member%s; trying anyway (--force)\n", p.group, d.State, len(d.Members), plural(len(d.Members)))
	}
	if !p.noHistory {
		path, err := a.saveHistory(historyEntry{Group: p.group, Cluster: p.cluster, Operation: p.op, GroupOffsets: before.list()})
		if err != nil {
			return false, err
		}
		res.HistoryFile = path
	}
	if err := applyGroup(ctx, adm, p, commits, deletes); err != nil {
		if active {
			err = withHint(err, "Kafka takes offset changes only for a group without members: stop its consumers")
		}
		return false, err
	}
	if err := a.verifyGroup(ctx, adm, p.group, after); err != nil {
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

// fetchGroup reads a group's committed offsets.
func fetchGroup(ctx context.Context, adm *kadm.Client, group string) (groupState, error) {
	fetched, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return groupState{}, nil // deleted: no offsets
	}
	if err != nil {
		return nil, fmt.Errorf("reading the offsets of group %s: %w", group, err)
	}
	out := groupState{}
	var errs []error
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s-%d: %w", o.Topic, o.Partition, o.Err))
			return
		}
		if o.At >= 0 {
			out[topicPartition{o.Topic, o.Partition}] = o.At
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("reading the offsets of group %s: %w", group, errors.Join(errs...))
	}
	return out, nil
}

// groupDiffRow is one partition whose offset changes.
type groupDiffRow struct {
	tp             topicPartition
	before, after  int64
	hadBefore, has bool
}

// groupDiff compares two states: the rows that change, what to commit and
// what to delete.
func groupDiff(before, after groupState) (rows []groupDiffRow, commits groupState, deletes []topicPartition) {
	commits = groupState{}
	for tp, off := range after {
		old, had := before[tp]
		if had && old == off {
			continue
		}
		commits[tp] = off
		rows = append(rows, groupDiffRow{tp: tp, before: old, hadBefore: had, after: off, has: true})
	}
	for tp, old := range before {
		if _, ok := after[tp]; !ok {
			deletes = append(deletes, tp)
			rows = append(rows, groupDiffRow{tp: tp, before: old, hadBefore: true})
		}
	}
	slices.SortFunc(rows, func(x, y groupDiffRow) int { return compareTP(x.tp, y.tp) })
	slices.SortFunc(deletes, compareTP)
	return rows, commits, deletes
}

// writeGroupDiff shows the change as kafka-consumer-groups' plan, with the
// offsets before beside the new ones.
func writeGroupDiff(w io.Writer, p painter, group string, rows []groupDiffRow, same int) {
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		cur, next := "-", "(deleted)"
		if r.hadBefore {
			cur = strconv.FormatInt(r.before, 10)
		}
		if r.has {
			next = strconv.FormatInt(r.after, 10)
		}
		out = append(out, []string{group, r.tp.topic, strconv.Itoa(int(r.tp.partition)), cur, next})
	}
	_ = table(w, p, []string{"GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET"}, out, func(row, col int, _ string) string {
		switch {
		case col == 3 && rows[row].hadBefore:
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

// applyGroup commits and deletes offsets, or deletes the whole group.
func applyGroup(ctx context.Context, adm *kadm.Client, p groupPlan, commits groupState, deletes []topicPartition) error {
	if p.deleteGroup {
		resps, err := adm.DeleteGroups(ctx, p.group)
		if err != nil {
			return fmt.Errorf("deleting group %s: %w", p.group, err)
		}
		if r, ok := resps[p.group]; ok && r.Err != nil {
			return fmt.Errorf("deleting group %s: %w", p.group, explainGroupErr(r.Err))
		}
		return nil
	}
	if len(commits) > 0 {
		var os kadm.Offsets
		for tp, off := range commits {
			os.Add(kadm.Offset{Topic: tp.topic, Partition: tp.partition, At: off, LeaderEpoch: -1})
		}
		resps, err := adm.CommitOffsets(ctx, p.group, os)
		if err != nil {
			return fmt.Errorf("committing the offsets of group %s: %w", p.group, err)
		}
		var errs []error
		resps.Each(func(r kadm.OffsetResponse) {
			if r.Err != nil {
				errs = append(errs, fmt.Errorf("%s-%d: %w", r.Topic, r.Partition, explainGroupErr(r.Err)))
			}
		})
		if len(errs) > 0 {
			return fmt.Errorf("Kafka refused the offsets of group %s: %w", p.group, errors.Join(errs...))
		}
	}
	if len(deletes) > 0 {
		set := kadm.TopicsSet{}
		for _, tp := range deletes {
			set.Add(tp.topic, tp.partition)
		}
		resps, err := adm.DeleteOffsets(ctx, p.group, set)
		if err != nil {
			return fmt.Errorf("deleting offsets of group %s: %w", p.group, explainGroupErr(err))
		}
		if err := resps.Error(); err != nil {
			return fmt.Errorf("deleting offsets of group %s: %w", p.group, explainGroupErr(err))
		}
	}
	return nil
}

// explainGroupErr says what Kafka's refusals of an admin's change mean.
func explainGroupErr(err error) error {
	switch {
	case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.IllegalGeneration):
		return fmt.Errorf("%w (the group has members: Kafka takes commits only from them)", err)
	case errors.Is(err, kerr.NonEmptyGroup):
		return fmt.Errorf("%w (the group has members)", err)
	case errors.Is(err, kerr.GroupSubscribedToTopic):
		return fmt.Errorf("%w (a member of the group reads the topic)", err)
	}
	return err
}

// verifyGroup reads the offsets back until they are want (a coordinator
// answers from what it applied, so the first read normally matches).
func (a *app) verifyGroup(ctx context.Context, adm *kadm.Client, group string, want groupState) error {
	deadline := time.Now().Add(min(a.timeout, 15*time.Second))
	for {
		got, err := fetchGroup(ctx, adm, group)
		if err != nil {
			return err
		}
		rows, _, _ := groupDiff(got, want)
		if len(rows) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var sb strings.Builder
			writeGroupDiff(&sb, painter{}, group, rows, 0)
			return fmt.Errorf("the offsets read back differ from the ones written (CURRENT is what was read):\n%s", strings.TrimRight(sb.String(), "\n"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
