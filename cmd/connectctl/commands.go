package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/connectd/connectd/client"
)

// writeJSON writes v indented, without HTML escaping (Java stack traces
// hold "<init>").
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// compactJSON is v as one line of JSON.
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return string(bytes.TrimRight(b.Bytes(), "\n"))
}

// table writes rows as aligned columns.
func table(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	writeRow := func(cells []string) {
		for i, c := range cells {
			if i > 0 {
				io.WriteString(tw, "\t")
			}
			io.WriteString(tw, c)
		}
		io.WriteString(tw, "\n")
	}
	writeRow(header)
	for _, r := range rows {
		writeRow(r)
	}
	return tw.Flush()
}

// getConnectors lists the connectors: NAME STATE TASKS TYPE, where TASKS
// is running/total.
func (a *app) getConnectors(ctx context.Context) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	all, err := c.ConnectorsExpanded(ctx, "status", "info")
	if err != nil {
		return err
	}
	if a.output == "json" {
		return writeJSON(a.stdout, all)
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	rows := make([][]string, 0, len(names))
	for _, n := range names {
		e := all[n]
		state, tasks, typ := "-", "-", "-"
		if e.Info != nil && e.Info.Type != "" {
			typ = e.Info.Type
		}
		if s := e.Status; s != nil {
			if s.Connector.State != "" {
				state = s.Connector.State
			}
			running := 0
			for _, t := range s.Tasks {
				if t.State == client.StateRunning {
					running++
				}
			}
			tasks = strconv.Itoa(running) + "/" + strconv.Itoa(len(s.Tasks))
			if s.Type != "" {
				typ = s.Type
			}
		}
		rows = append(rows, []string{n, state, tasks, typ})
	}
	return table(a.stdout, []string{"NAME", "STATE", "TASKS", "TYPE"}, rows)
}

// describe prints {"status":...,"info":...} for one connector. A
// connector without a status yet is shown without one.
func (a *app) describe(ctx context.Context, name string) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	info, err := c.Connector(ctx, name)
	if err != nil {
		return err
	}
	status, err := c.Status(ctx, name)
	if err != nil && !client.IsNotFound(err) {
		return err
	}
	return writeJSON(a.stdout, client.ConnectorExpanded{Status: status, Info: info})
}

var pastTense = map[string]string{"pause": "paused", "resume": "resumed", "stop": "stopped", "delete": "deleted"}

// lifecycle pauses, resumes, stops or deletes a connector.
func (a *app) lifecycle(ctx context.Context, verb, name string) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	switch verb {
	case "pause":
		err = c.Pause(ctx, name)
	case "resume":
		err = c.Resume(ctx, name)
	case "stop":
		err = c.Stop(ctx, name)
	case "delete":
		err = c.Delete(ctx, name)
	default:
		err = fmt.Errorf("unknown action %q", verb)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "connector %s %s\n", name, pastTense[verb])
	return err
}

// restart restarts a connector. When the worker answers with the restart
// plan (--include-tasks or --only-failed), the instances are listed.
func (a *app) restart(ctx context.Context, name string, includeTasks, onlyFailed bool) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	status, err := c.Restart(ctx, name, includeTasks, onlyFailed)
	if err != nil {
		return err
	}
	if a.output == "json" {
		if status == nil {
			return writeJSON(a.stdout, map[string]any{"name": name, "restarted": true})
		}
		return writeJSON(a.stdout, status)
	}
	if status == nil {
		_, err = fmt.Fprintf(a.stdout, "connector %s restarted\n", name)
		return err
	}
	fmt.Fprintf(a.stdout, "restart of connector %s requested\n", name)
	rows := [][]string{{"connector", status.Connector.State, status.Connector.WorkerID}}
	for _, t := range status.Tasks {
		rows = append(rows, []string{"task " + strconv.Itoa(t.ID), t.State, t.WorkerID})
	}
	return table(a.stdout, []string{"INSTANCE", "STATE", "WORKER"}, rows)
}

// offsetsGet prints a connector's offsets: PARTITION OFFSET as JSON text,
// sorted by partition, or the REST body with -o json.
func (a *app) offsetsGet(ctx context.Context, name string) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	offsets, err := c.Offsets(ctx, name)
	if err != nil {
		return err
	}
	if a.output == "json" {
		if offsets == nil {
			offsets = []client.ConnectorOffset{}
		}
		return writeJSON(a.stdout, client.ConnectorOffsets{Offsets: offsets})
	}
	sorted := slices.Clone(offsets)
	slices.SortStableFunc(sorted, func(x, y client.ConnectorOffset) int {
		return comparePartitions(x.Partition, y.Partition)
	})
	rows := make([][]string, 0, len(sorted))
	for _, o := range sorted {
		rows = append(rows, []string{compactJSON(o.Partition), compactJSON(o.Offset)})
	}
	return table(a.stdout, []string{"PARTITION", "OFFSET"}, rows)
}

// comparePartitions orders sink partitions by topic and partition number,
// and anything else by its JSON text.
func comparePartitions(x, y map[string]any) int {
	xt, xok := x["kafka_topic"].(string)
	yt, yok := y["kafka_topic"].(string)
	xp, xpok := x["kafka_partition"].(int64)
	yp, ypok := y["kafka_partition"].(int64)
	if xok && yok && xpok && ypok {
		if c := cmp.Compare(xt, yt); c != 0 {
			return c
		}
		return cmp.Compare(xp, yp)
	}
	return cmp.Compare(compactJSON(x), compactJSON(y))
}

// readOffsetsFile reads a PATCH /connectors/{c}/offsets body from path
// ("-" is stdin).
func (a *app) readOffsetsFile(path string) ([]client.ConnectorOffset, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(a.stdin)
	} else {
		data, err = os.ReadFile(path)
	}
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
	return *body.Offsets, nil
}

// offsetsSet alters a stopped connector's offsets from a file.
func (a *app) offsetsSet(ctx context.Context, name, path string) error {
	offsets, err := a.readOffsetsFile(path)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	msg, err := c.AlterOffsets(ctx, name, offsets)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(a.stdout, msg)
	return err
}

// offsetsReset resets all of a stopped connector's offsets.
func (a *app) offsetsReset(ctx context.Context, name string) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	msg, err := c.ResetOffsets(ctx, name)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(a.stdout, msg)
	return err
}

// plugins lists the plugins: CLASS TYPE VERSION.
func (a *app) plugins(ctx context.Context, all bool) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	ps, err := c.Plugins(ctx, !all)
	if err != nil {
		return err
	}
	if a.output == "json" {
		if ps == nil {
			ps = []client.PluginInfo{}
		}
		return writeJSON(a.stdout, ps)
	}
	rows := make([][]string, 0, len(ps))
	for _, p := range ps {
		v := p.Version
		if v == "" {
			v = "-"
		}
		rows = append(rows, []string{p.Class, p.Type, v})
	}
	return table(a.stdout, []string{"CLASS", "TYPE", "VERSION"}, rows)
}
