package main

import (
	"context"
	"fmt"
	"github.com/connectd/connectd/internal/groupoffsets"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/client"
)

// The pipeline view puts the reference chapter's three offsets surfaces on
// one screen, in the order data flows through them: where each source
// connector stands, how far behind each consumer group (the applications
// between connectors) is, and how far behind each sink connector is.

// pipelineRow is one surface.
type pipelineRow struct {
	Surface string   `json:"surface"` // source, group, sink
	Name    string   `json:"name"`
	State   string   `json:"state"`
	Topics  []string `json:"topics"`
	// Position is a source connector's offsets.
	Position []client.ConnectorOffset `json:"position,omitempty"`
	// Lag is a group's or a sink's records behind the ends of its topics;
	// nil when it could not be read (Note says why).
	Lag   *int64 `json:"lag,omitempty"`
	Group string `json:"group,omitempty"` // a sink's consumer group
	Note  string `json:"note,omitempty"`
}

func (a *app) pipelineCmd() *cobra.Command {
	var kf kafkaFlags
	var connectors, groups []string
	var noGroups bool
	cmd := &cobra.Command{
		Use:   "pipeline [--connector NAME...] [--group GROUP...]",
		Short: "Every offsets surface on one screen: sources' positions, consumer groups' and sinks' lag",
		Long: `Show a pipeline's offsets surfaces on one screen, in the order data flows:
each source connector's position, each consumer group's lag (the
applications between connectors), and each sink connector's lag.

By default every connector of the worker and, when Kafka's address is known
(--bootstrap-server or the context's), every consumer group that is not a
sink connector's. --connector and --group choose some; -o json for scripts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.pipeline(cmd.Context(), &kf, connectors, groups, noGroups)
		},
	}
	cmd.Flags().StringArrayVar(&connectors, "connector", nil, "only this connector (repeatable)")
	cmd.Flags().StringArrayVar(&groups, "group", nil, "only this consumer group (repeatable)")
	cmd.Flags().BoolVar(&noGroups, "no-groups", false, "no consumer groups, only connectors")
	kf.addConn(cmd)
	return cmd
}

func (a *app) pipeline(ctx context.Context, kf *kafkaFlags, only, groups []string, noGroups bool) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	all, err := c.ConnectorsExpanded(ctx, "status", "info")
	if err != nil {
		return err
	}
	names := only
	if len(names) == 0 {
		names = slices.Sorted(maps.Keys(all))
	}
	var adm *kadm.Client
	if a.hasBootstrap(kf) {
		var closeAdm func()
		if adm, _, closeAdm, err = a.groupsAdmin(kf); err != nil {
			return err
		}
		defer closeAdm()
	}
	var sources, sinks, apps []pipelineRow
	sinkGroups := map[string]bool{}
	for _, name := range names {
		e, ok := all[name]
		if !ok || e.Info == nil {
			return withHint(fmt.Errorf("connector %s not found", name), "list the connectors with: connectctl get connectors")
		}
		row := pipelineRow{Name: name, State: "-", Topics: []string{}}
		if e.Status != nil {
			row.State = e.Status.Connector.State
		}
		offsets, err := c.Offsets(ctx, name)
		if err != nil {
			row.Note = "offsets: " + err.Error()
		}
		if e.Info.Type == client.TypeSink {
			row.Surface = "sink"
			row.Group = sinkGroup(name, e.Info.Config)
			sinkGroups[row.Group] = true
			row.Topics = configTopics(e.Info.Config, offsets)
			if adm != nil {
				a.groupLag(ctx, adm, &row)
			} else if row.Note == "" {
				row.Note = "lag: pass --bootstrap-server"
			}
			sinks = append(sinks, row)
			continue
		}
		row.Surface = "source"
		row.Position = sortOffsets(offsets)
		if topics, err := c.Topics(ctx, name); err == nil {
			row.Topics = nonNilStrings(topics)
		}
		sources = append(sources, row)
	}
	if adm != nil && !noGroups {
		if len(groups) == 0 {
			all, _, err := groupoffsets.ConsumerGroups(ctx, adm)
			if err != nil {
				return err
			}
			for _, g := range all {
				if !sinkGroups[g] && !strings.HasPrefix(g, "connect-") {
					groups = append(groups, g)
				}
			}
		}
		for _, g := range groups {
			row := pipelineRow{Surface: "group", Name: g, Group: g, State: "-", Topics: []string{}}
			a.groupLag(ctx, adm, &row)
			apps = append(apps, row)
		}
	} else if len(groups) > 0 {
		return errNoBootstrap
	}
	rows := slices.Concat(sources, apps, sinks)
	if a.structured() {
		if rows == nil {
			rows = []pipelineRow{}
		}
		return a.writeStructured(rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(a.stdout, "no connectors and no consumer groups")
		return err
	}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		where := "-"
		switch {
		case r.Surface == "source" && len(r.Position) == 0:
			where = "no offsets yet"
		case r.Surface == "source" && len(r.Position) == 1:
			where = mapText(r.Position[0].Offset)
		case r.Surface == "source":
			where = fmt.Sprintf("%d partitions", len(r.Position))
		case r.Lag != nil:
			where = "lag " + strconv.FormatInt(*r.Lag, 10)
		}
		if r.Note != "" {
			where += " (" + r.Note + ")"
		}
		surface := r.Surface
		if r.Surface != "group" {
			surface += " connector"
		} else {
			surface = "consumer group"
		}
		out = append(out, []string{surface, r.Name, r.State, strings.Join(r.Topics, ","), where})
	}
	return table(a.stdout, a.out(), []string{"SURFACE", "NAME", "STATE", "TOPICS", "POSITION / LAG"}, out, func(row, col int, cell string) string {
		if col != 2 {
			return ""
		}
		if rows[row].Surface == "group" {
			return groupStateColor(cell)
		}
		return stateColor(cell)
	})
}

// sinkGroup is a sink connector's consumer group: Kafka Connect's
// connect-<name>, unless its config overrides it.
func sinkGroup(name string, config map[string]string) string {
	if g := config["consumer.override.group.id"]; g != "" {
		return g
	}
	return "connect-" + name
}

// configTopics are the topics a sink names in its config (topics.regex
// shows as the pattern) and those it has offsets for.
func configTopics(config map[string]string, offsets []client.ConnectorOffset) []string {
	var out []string
	for _, t := range strings.Split(config["topics"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	for _, o := range offsets {
		if t, ok := o.Partition["kafka_topic"].(string); ok {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if re := strings.TrimSpace(config["topics.regex"]); re != "" {
		out = append(out, "/"+re+"/")
	}
	return nonNilStrings(out)
}

// groupLag fills a row's lag, state and topics from its consumer group.
func (a *app) groupLag(ctx context.Context, adm *kadm.Client, row *pipelineRow) {
	lags, err := adm.Lag(ctx, row.Group)
	l, ok := lags[row.Group]
	switch {
	case !ok && err != nil:
		row.Note = "lag: " + err.Error()
		return
	case !ok:
		row.Note = "lag: no answer from Kafka"
		return
	case l.Error() != nil:
		row.Note = "lag: " + l.Error().Error()
		return
	}
	if row.Surface == "group" {
		row.State = l.State
	}
	var total int64
	topics := map[string]bool{}
	for _, t := range row.Topics {
		topics[t] = true
	}
	for _, m := range l.Lag.Sorted() {
		topics[m.Topic] = true
		if m.Err == nil && m.Lag > 0 {
			total += m.Lag
		}
	}
	row.Lag = &total
	row.Topics = slices.Sorted(maps.Keys(topics))
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
