package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/client"
)

// ANSI colours.
const (
	red    = "31"
	green  = "32"
	yellow = "33"
	cyan   = "36"
	bold   = "1"
)

// painter colours text, or leaves it alone when colour is off.
type painter struct{ on bool }

func (p painter) paint(code, s string) string {
	if !p.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// painter returns the painter for a stream: colour only on a terminal,
// never with $NO_COLOR, --no-color or TERM=dumb.
func (a *app) painter(tty bool) painter {
	return painter{on: tty && !a.noColor && a.getenv("NO_COLOR") == "" && a.getenv("TERM") != "dumb"}
}

// out is the painter of stdout.
func (a *app) out() painter { return a.painter(a.stdoutTTY) }

// stateColor is the colour of a connector or task state.
func stateColor(state string) string {
	switch state {
	case client.StateRunning:
		return green
	case client.StateFailed:
		return red
	case client.StatePaused, client.StateStopped, client.StateRestarting, client.StateUnassigned:
		return yellow
	}
	return ""
}

// writeJSON writes v indented, without HTML escaping (Java stack traces
// hold "<init>").
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeYAML writes v as block YAML, keeping the field order and the exact
// numbers of its JSON form.
func writeYAML(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	var n yaml.Node
	if err := yaml.Unmarshal(b.Bytes(), &n); err != nil {
		return err
	}
	plainStyle(&n)
	ye := yaml.NewEncoder(w)
	ye.SetIndent(2)
	if err := ye.Encode(&n); err != nil {
		return err
	}
	return ye.Close()
}

// plainStyle drops the flow and quoting styles that parsing JSON gives,
// so the encoder picks YAML's usual block style (it still quotes strings
// that would otherwise read as another type).
func plainStyle(n *yaml.Node) {
	n.Style = 0
	for _, c := range n.Content {
		plainStyle(c)
	}
}

// writeStructured writes v as -o asks: JSON or YAML.
func (a *app) writeStructured(v any) error {
	if a.output == "yaml" {
		return writeYAML(a.stdout, v)
	}
	return writeJSON(a.stdout, v)
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

// mapText is a partition or offset map as one line of JSON the way the
// client sends it to a worker: keys sorted, integral floats with ".0" (so
// that 1 and 1.0, a Java Long and a Double, read differently). nil is
// "null".
func mapText(m map[string]any) string {
	if m == nil {
		return "null"
	}
	b, err := client.ConnectorOffset{Partition: m}.MarshalJSON()
	if err != nil {
		return compactJSON(m)
	}
	s := strings.TrimPrefix(string(b), `{"partition":`)
	return strings.TrimSuffix(s, `,"offset":null}`)
}

// table writes rows as aligned columns, three spaces apart; the last
// column is not padded. color, if not nil, gives the colour of a cell.
func table(w io.Writer, p painter, header []string, rows [][]string, color func(row, col int, cell string) string) error {
	widths := make([]int, len(header))
	measure := func(r []string) {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	var b strings.Builder
	line := func(row int, r []string) {
		for i, c := range r {
			text := c
			if row < 0 {
				text = p.paint(bold, c)
			} else if color != nil {
				text = p.paint(color(row, i, c), c)
			}
			b.WriteString(text)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+3))
			}
		}
		b.WriteByte('\n')
	}
	line(-1, header)
	for i, r := range rows {
		line(i, r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// offsetKey is the identity of a partition: its JSON text, with a sink's
// {"kafka_topic","kafka_partition"} brought to one form (a numeric string
// partition, as Kafka Connect accepts, is the same partition).
func offsetKey(p map[string]any) string {
	if t, ok := p["kafka_topic"]; ok && len(p) == 2 {
		if n, ok := intValue(p["kafka_partition"]); ok {
			return mapText(map[string]any{"kafka_topic": fmt.Sprint(t), "kafka_partition": n})
		}
	}
	return mapText(p)
}

// offsetValueText is an offset's identity for comparisons, with a sink's
// kafka_offset brought to one form.
func offsetValueText(o map[string]any) string {
	if v, ok := o["kafka_offset"]; ok && len(o) == 1 {
		if n, ok := intValue(v); ok {
			return mapText(map[string]any{"kafka_offset": n})
		}
	}
	return mapText(o)
}

// intValue reads an integer given as a JSON number or a numeric string.
func intValue(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	case string:
		var n int64
		if _, err := fmt.Sscan(strings.TrimSpace(x), &n); err == nil && fmt.Sprint(n) == strings.TrimSpace(x) {
			return n, true
		}
	}
	return 0, false
}

// sortOffsets orders offsets by partition: sinks by topic and partition
// number, anything else by its JSON text.
func sortOffsets(offsets []client.ConnectorOffset) []client.ConnectorOffset {
	sorted := slices.Clone(offsets)
	slices.SortStableFunc(sorted, func(x, y client.ConnectorOffset) int {
		return comparePartitions(x.Partition, y.Partition)
	})
	return sorted
}

// comparePartitions orders sink partitions by topic and partition number,
// and anything else by its JSON text.
func comparePartitions(x, y map[string]any) int {
	xt, xok := x["kafka_topic"].(string)
	yt, yok := y["kafka_topic"].(string)
	xp, xpok := intValue(x["kafka_partition"])
	yp, ypok := intValue(y["kafka_partition"])
	if xok && yok && xpok && ypok {
		if c := cmp.Compare(xt, yt); c != 0 {
			return c
		}
		return cmp.Compare(xp, yp)
	}
	return cmp.Compare(mapText(x), mapText(y))
}

// offsetsTable writes PARTITION OFFSET rows, sorted by partition.
func (a *app) offsetsTable(offsets []client.ConnectorOffset) error {
	sorted := sortOffsets(offsets)
	rows := make([][]string, 0, len(sorted))
	for _, o := range sorted {
		rows = append(rows, []string{mapText(o.Partition), mapText(o.Offset)})
	}
	return table(a.stdout, a.out(), []string{"PARTITION", "OFFSET"}, rows, nil)
}

// diffLine is one changed partition.
type diffLine struct {
	partition     map[string]any
	before, after map[string]any // nil: none
	hadBefore     bool
	hasAfter      bool
}

// offsetDiff compares two sets of offsets by partition. It returns the
// changed partitions, sorted, and the number of unchanged ones.
func offsetDiff(before, after []client.ConnectorOffset) (changed []diffLine, same int) {
	type entry struct {
		p   map[string]any
		o   map[string]any
		has bool
	}
	b := map[string]entry{}
	for _, o := range before {
		if o.Offset != nil {
			b[offsetKey(o.Partition)] = entry{o.Partition, o.Offset, true}
		}
	}
	seen := map[string]bool{}
	for _, o := range after {
		if o.Offset == nil {
			continue
		}
		k := offsetKey(o.Partition)
		seen[k] = true
		old, ok := b[k]
		switch {
		case ok && offsetValueText(old.o) == offsetValueText(o.Offset):
			same++
		default:
			changed = append(changed, diffLine{partition: o.Partition, before: old.o, hadBefore: ok, after: o.Offset, hasAfter: true})
		}
	}
	for k, old := range b {
		if !seen[k] {
			changed = append(changed, diffLine{partition: old.p, before: old.o, hadBefore: true})
		}
	}
	slices.SortStableFunc(changed, func(x, y diffLine) int { return comparePartitions(x.partition, y.partition) })
	return changed, same
}

// writeDiff shows a change of offsets as a unified diff: "-" lines are the
// offsets before, "+" lines after, one partition each.
func writeDiff(w io.Writer, p painter, title string, changed []diffLine, same int) {
	fmt.Fprintln(w, p.paint(bold, "--- "+title+" (before)"))
	fmt.Fprintln(w, p.paint(bold, "+++ "+title+" (after)"))
	for _, d := range changed {
		part := mapText(d.partition)
		if d.hadBefore {
			fmt.Fprintln(w, p.paint(red, "- "+part+" "+mapText(d.before)))
		}
		if d.hasAfter {
			fmt.Fprintln(w, p.paint(green, "+ "+part+" "+mapText(d.after)))
		}
	}
	if same > 0 {
		fmt.Fprintf(w, "  (%d partition%s unchanged)\n", same, plural(same))
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// progress draws a progress bar on a terminal; elsewhere it says nothing.
type progress struct {
	w     io.Writer
	on    bool
	total int
	done  int
	width int
}

func (a *app) newProgress(total int) *progress {
	return &progress{w: a.stderr, on: a.stderrTTY && total > 1, total: total, width: 30}
}

// step redraws the bar for the item now being worked on.
func (p *progress) step(label string) {
	if !p.on {
		return
	}
	filled := p.width * p.done / p.total
	if len(label) > 40 {
		label = label[:39] + "…"
	}
	fmt.Fprintf(p.w, "\r\x1b[K[%s%s] %d/%d %s", strings.Repeat("#", filled), strings.Repeat("-", p.width-filled), p.done, p.total, label)
}

func (p *progress) advance() { p.done++ }

// finish clears the bar.
func (p *progress) finish() {
	if p.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
