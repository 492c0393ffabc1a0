// Package groupoffsets reads and changes a consumer group's committed
// offsets the way kafka-consumer-groups.sh does: its topic scopes, its
// reset specs (earliest, latest, an offset, a shift, a time, the current
// offset) with offsets brought into each partition's range, and Kafka's
// refusals explained. connectctl's groups commands and the web console
// both change groups through it.
package groupoffsets

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Offset is one partition's committed offset.
type Offset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}

// TP is a topic partition.
type TP struct {
	Topic     string
	Partition int32
}

func (tp TP) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// CompareTP orders partitions by topic, then number.
func CompareTP(x, y TP) int {
	return cmp.Or(strings.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
}

// State is a group's committed offsets by partition.
type State map[TP]int64

// List is the state as offsets, sorted.
func (s State) List() []Offset {
	out := make([]Offset, 0, len(s))
	for _, tp := range slices.SortedFunc(maps.Keys(s), CompareTP) {
		out = append(out, Offset{tp.Topic, tp.Partition, s[tp]})
	}
	return out
}

// FromList is the state of offsets.
func FromList(offsets []Offset) State {
	s := State{}
	for _, o := range offsets {
		s[TP{o.Topic, o.Partition}] = o.Offset
	}
	return s
}

// Describe returns a group's state and members. A group Kafka does not
// know is Dead (Kafka 4 answers GROUP_ID_NOT_FOUND; before, Dead).
func Describe(ctx context.Context, adm *kadm.Client, group string) (string, []kadm.DescribedGroupMember, error) {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil && len(described) == 0 {
		return "", nil, fmt.Errorf("describing group %s: %w", group, err)
	}
	d, ok := described[group]
	switch {
	case !ok:
		return "", nil, fmt.Errorf("group %s: no answer from Kafka", group)
	case errors.Is(d.Err, kerr.GroupIDNotFound):
		return "Dead", nil, nil
	case d.Err != nil:
		return "", nil, fmt.Errorf("group %s: %w", group, d.Err)
	}
	return d.State, d.Members, nil
}

// Active tells whether a group in state has members, so that Kafka takes
// no commits from outside it.
func Active(state string) bool { return state != "Empty" && state != "Dead" }

// InactiveError is Kafka's refusal of a reset while the group is active.
func InactiveError(group, state string, members int) error {
	plural := "s"
	if members == 1 {
		plural = ""
	}
	return fmt.Errorf("assignments can only be reset if the group '%s' is inactive, but the current state is %s (%d member%s)", group, state, members, plural)
}

// ConsumerGroups lists the consumer groups, sorted, in the states given
// (none: all): not the groups of Kafka Connect's workers, whose protocol
// is "connect". listed is every group the broker answered, of any
// protocol.
func ConsumerGroups(ctx context.Context, adm *kadm.Client, states ...string) (names []string, listed kadm.ListedGroups, err error) {
	if listed, err = adm.ListGroups(ctx, states...); err != nil {
		return nil, nil, fmt.Errorf("listing groups: %w", err)
	}
	for name, g := range listed {
		if g.ProtocolType == "consumer" || g.ProtocolType == "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names, listed, nil
}

// Missing tells whether the lag of a group Kafka answered for says it
// does not know the group: Kafka 4 answers GROUP_ID_NOT_FOUND, earlier
// brokers a Dead group with no offsets.
func Missing(l kadm.DescribedGroupLag) bool {
	err := l.Error()
	return errors.Is(err, kerr.GroupIDNotFound) || err == nil && l.State == "Dead" && len(l.Lag) == 0
}

// Fetch reads a group's committed offsets; a deleted group has none.
func Fetch(ctx context.Context, adm *kadm.Client, group string) (State, error) {
	fetched, err := adm.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return State{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the offsets of group %s: %w", group, err)
	}
	out := State{}
	var errs []error
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s-%d: %w", o.Topic, o.Partition, o.Err))
			return
		}
		if o.At >= 0 {
			out[TP{o.Topic, o.Partition}] = o.At
		}
	})
	if len(errs) > 0 {
		return nil, fmt.Errorf("reading the offsets of group %s: %w", group, errors.Join(errs...))
	}
	return out, nil
}

// TopicSpec is a topic, and the partitions named (none: all of them).
type TopicSpec struct {
	Topic      string
	Partitions []int32
}

// ParseTopicSpec reads T or T:0,2 as kafka-consumer-groups' --topic does.
func ParseTopicSpec(s string) (TopicSpec, error) {
	topic, parts, found := strings.Cut(s, ":")
	if topic == "" {
		return TopicSpec{}, fmt.Errorf("--topic %q: no topic name", s)
	}
	spec := TopicSpec{Topic: topic}
	if !found {
		return spec, nil
	}
	for _, p := range strings.Split(parts, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil || n < 0 {
			return TopicSpec{}, fmt.Errorf("--topic %q: invalid partition %q; want T or T:0,2", s, p)
		}
		spec.Partitions = append(spec.Partitions, int32(n))
	}
	return spec, nil
}

// PartitionsOf lists the partitions that specs name, checking that they
// exist.
func PartitionsOf(ctx context.Context, adm *kadm.Client, specs []TopicSpec) ([]TP, error) {
	var names []string
	for _, s := range specs {
		names = append(names, s.Topic)
	}
	td, err := adm.ListTopics(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("reading the topics' metadata: %w", err)
	}
	seen := map[TP]bool{}
	var out []TP
	for _, s := range specs {
		d, ok := td[s.Topic]
		if !ok || d.Err != nil {
			return nil, fmt.Errorf("topic %s does not exist", s.Topic)
		}
		parts := s.Partitions
		if len(parts) == 0 {
			parts = slices.Sorted(maps.Keys(d.Partitions))
		}
		for _, p := range parts {
			if _, ok := d.Partitions[p]; !ok {
				return nil, fmt.Errorf("topic %s has no partition %d (it has %d)", s.Topic, p, len(d.Partitions))
			}
			tp := TP{s.Topic, p}
			if !seen[tp] {
				seen[tp] = true
				out = append(out, tp)
			}
		}
	}
	return out, nil
}

// Resolver turns a reset spec into offsets, asking Kafka where partitions
// start and end. Warn, if set, receives Kafka's warnings (an offset
// brought into range, a time with no record after it).
type Resolver struct {
	Adm  *kadm.Client
	Warn func(string)
}

func (r *Resolver) warn(format string, args ...any) {
	if r.Warn != nil {
		r.Warn(fmt.Sprintf(format, args...))
	}
}

func topicsOf(parts []TP) []string {
	var out []string
	for _, tp := range parts {
		out = append(out, tp.Topic)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Start is each partition's log start offset (--to-earliest).
func (r *Resolver) Start(ctx context.Context, parts []TP) (State, error) {
	return r.listed(ctx, parts, r.Adm.ListStartOffsets, "start")
}

// End is each partition's log end offset (--to-latest).
func (r *Resolver) End(ctx context.Context, parts []TP) (State, error) {
	return r.listed(ctx, parts, r.Adm.ListEndOffsets, "end")
}

func (r *Resolver) listed(ctx context.Context, parts []TP, list func(context.Context, ...string) (kadm.ListedOffsets, error), which string) (State, error) {
	out := State{}
	if len(parts) == 0 {
		return out, nil
	}
	listed, err := list(ctx, topicsOf(parts)...)
	if err != nil {
		return nil, fmt.Errorf("listing %s offsets: %w", which, err)
	}
	for _, tp := range parts {
		o, ok := listed.Lookup(tp.Topic, tp.Partition)
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

// Clamp brings offsets past a partition's end or before its start to it,
// with Kafka's warning (--to-offset, --shift-by, --from-file).
func (r *Resolver) Clamp(ctx context.Context, want State) (State, error) {
	parts := slices.SortedFunc(maps.Keys(want), CompareTP)
	start, err := r.Start(ctx, parts)
	if err != nil {
		return nil, err
	}
	end, err := r.End(ctx, parts)
	if err != nil {
		return nil, err
	}
	out := State{}
	for _, tp := range parts {
		off := want[tp]
		switch {
		case off > end[tp]:
			r.warn("new offset (%d) is higher than latest offset for topic partition %s. Value will be set to %d", off, tp, end[tp])
			off = end[tp]
		case off < start[tp]:
			r.warn("new offset (%d) is lower than earliest offset for topic partition %s. Value will be set to %d", off, tp, start[tp])
			off = start[tp]
		}
		out[tp] = off
	}
	return out, nil
}

// Shift is each partition's committed offset plus n, in range.
func (r *Resolver) Shift(ctx context.Context, parts []TP, before State, n int64) (State, error) {
	want := State{}
	for _, tp := range parts {
		cur, ok := before[tp]
		if !ok {
			return nil, fmt.Errorf("cannot shift offset for partition %s since there is no current committed offset", tp)
		}
		want[tp] = cur + n
	}
	return r.Clamp(ctx, want)
}

// AtTime is the first offset at or after t on each partition, or its end
// where no record is that recent (kadm lists the end then, with no
// timestamp).
func (r *Resolver) AtTime(ctx context.Context, parts []TP, t time.Time) (State, error) {
	listed, err := r.Adm.ListOffsetsAfterMilli(ctx, t.UnixMilli(), topicsOf(parts)...)
	if err != nil {
		return nil, fmt.Errorf("listing offsets by time: %w", err)
	}
	out := State{}
	for _, tp := range parts {
		o, ok := listed.Lookup(tp.Topic, tp.Partition)
		if !ok || o.Err != nil || o.Offset < 0 {
			return nil, fmt.Errorf("error getting offset by timestamp of topic partition %s", tp)
		}
		if o.Timestamp < 0 {
			r.warn("partition %d of topic %s has no record at or after %s: falling back to its end",
				tp.Partition, tp.Topic, t.Local().Format("2006-01-02T15:04:05.000"))
		}
		out[tp] = o.Offset
	}
	return out, nil
}

// Current is the committed offset, or the end where there is none.
func (r *Resolver) Current(ctx context.Context, parts []TP, before State) (State, error) {
	out := State{}
	var missing []TP
	for _, tp := range parts {
		if off, ok := before[tp]; ok {
			out[tp] = off
		} else {
			missing = append(missing, tp)
		}
	}
	ends, err := r.End(ctx, missing)
	if err != nil {
		return nil, err
	}
	maps.Copy(out, ends)
	return out, nil
}

// Change is one partition whose offset changes: from Before (if
// HadBefore) to After (if Has; else its offset is deleted).
type Change struct {
	TP             TP
	Before, After  int64
	HadBefore, Has bool
}

// Diff compares two states: the changes, what to commit and what to
// delete.
func Diff(before, after State) (changes []Change, commits State, deletes []TP) {
	commits = State{}
	for tp, off := range after {
		old, had := before[tp]
		if had && old == off {
			continue
		}
		commits[tp] = off
		changes = append(changes, Change{TP: tp, Before: old, HadBefore: had, After: off, Has: true})
	}
	for tp, old := range before {
		if _, ok := after[tp]; !ok {
			deletes = append(deletes, tp)
			changes = append(changes, Change{TP: tp, Before: old, HadBefore: true})
		}
	}
	slices.SortFunc(changes, func(x, y Change) int { return CompareTP(x.TP, y.TP) })
	slices.SortFunc(deletes, CompareTP)
	return changes, commits, deletes
}

// Apply commits and deletes offsets of a group.
func Apply(ctx context.Context, adm *kadm.Client, group string, commits State, deletes []TP) error {
	if len(commits) > 0 {
		var os kadm.Offsets
		for tp, off := range commits {
			os.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: off, LeaderEpoch: -1})
		}
		resps, err := adm.CommitOffsets(ctx, group, os)
		if err != nil {
			return fmt.Errorf("committing the offsets of group %s: %w", group, err)
		}
		var errs []error
		resps.Each(func(r kadm.OffsetResponse) {
			if r.Err != nil {
				errs = append(errs, fmt.Errorf("%s-%d: %w", r.Topic, r.Partition, explain(r.Err)))
			}
		})
		if len(errs) > 0 {
			return fmt.Errorf("Kafka refused the offsets of group %s: %w", group, errors.Join(errs...))
		}
	}
	if len(deletes) > 0 {
		set := kadm.TopicsSet{}
		for _, tp := range deletes {
			set.Add(tp.Topic, tp.Partition)
		}
		resps, err := adm.DeleteOffsets(ctx, group, set)
		if err != nil {
			return fmt.Errorf("deleting offsets of group %s: %w", group, explain(err))
		}
		if err := resps.Error(); err != nil {
			return fmt.Errorf("deleting offsets of group %s: %w", group, explain(err))
		}
	}
	return nil
}

// DeleteGroup deletes a group and its offsets.
func DeleteGroup(ctx context.Context, adm *kadm.Client, group string) error {
	resps, err := adm.DeleteGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("deleting group %s: %w", group, err)
	}
	if r, ok := resps[group]; ok && r.Err != nil {
		return fmt.Errorf("deleting group %s: %w", group, explain(r.Err))
	}
	return nil
}

// explain says what Kafka's refusals of an admin's change mean.
func explain(err error) error {
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

// Verify reads the offsets back until they are want (a coordinator
// answers from what it applied, so the first read normally matches) or
// wait passes; it returns what still differs then.
func Verify(ctx context.Context, adm *kadm.Client, group string, want State, wait time.Duration) ([]Change, error) {
	deadline := time.Now().Add(wait)
	for {
		got, err := Fetch(ctx, adm, group)
		if err != nil {
			return nil, err
		}
		changes, _, _ := Diff(got, want)
		if len(changes) == 0 || time.Now().After(deadline) {
			return changes, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ParseDatetime reads a --to-datetime: RFC 3339 with a zone, or a local
// date and time as kafka-consumer-groups takes (2026-07-10T14:30:00[.000]).
func ParseDatetime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.000", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--to-datetime %q: want a time such as 2026-07-10T14:30:00Z (RFC 3339) or 2026-07-10T14:30:00 (local time)", s)
}
