package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/connectd/connectd/internal/groupoffsets"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/client"
)

// The offsets history keeps, for every change connectctl makes to a
// connector's or a consumer group's offsets, the offsets it had before,
// one JSON file per change:
//
//	$XDG_STATE_HOME/connectctl/history/<connector>/<time>-<operation>.json
//	$XDG_STATE_HOME/connectctl/history/groups/<group>/<time>-<operation>.json
//
// (~/.local/state/... without $XDG_STATE_HOME). `offsets undo` and
// `groups undo` restore the newest entry of the same cluster and rename it
// to *.json.undone, so that undoing again goes one change further back.
// Nothing is ever deleted.

// historyEntry is one saved state: of a connector (Connector, Offsets) or
// of a consumer group (Group, GroupOffsets).
type historyEntry struct {
	Connector    string                   `json:"connector,omitempty"`
	Group        string                   `json:"group,omitempty"`
	Cluster      string                   `json:"cluster"`
	Operation    string                   `json:"operation"`
	Time         time.Time                `json:"time"`
	Offsets      []client.ConnectorOffset `json:"offsets,omitempty"`
	GroupOffsets []groupoffsets.Offset    `json:"group_offsets,omitempty"`
	// Config and State are a deleted connector's (delete --reset-offsets),
	// for undo to create it again.
	Config map[string]string `json:"config,omitempty"`
	State  string            `json:"state,omitempty"`

	path   string
	undone bool
}

// subject is whose offsets an entry holds: a connector, or a consumer
// group.
type subject struct {
	group bool
	name  string
}

func (s subject) String() string {
	if s.group {
		return "consumer group " + s.name
	}
	return "connector " + s.name
}

func (e *historyEntry) subject() subject {
	if e.Group != "" {
		return subject{group: true, name: e.Group}
	}
	return subject{name: e.Connector}
}

// dir is where s's entries live: a group's under groups/, where no
// connector's entry is a directory.
func (s subject) dir(base string) string {
	if s.group {
		return filepath.Join(base, "groups", fileName(s.name))
	}
	return filepath.Join(base, fileName(s.name))
}

const undoneSuffix = ".undone"

// historyDir is where the history lives.
func (a *app) historyDir() (string, error) {
	if x := a.getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "connectctl", "history"), nil
	}
	if h := a.getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "connectctl", "history"), nil
	}
	return "", errors.New("no place for the offsets history: set $HOME or $XDG_STATE_HOME")
}

// fileName makes a connector name safe as a directory name: letters,
// digits, '.', '_' and '-' stay, anything else becomes %XX.
func fileName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-',
			c == '.' && name != "." && name != "..":
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// saveHistory records offsets before a change (e without its Time) and
// returns the file written.
func (a *app) saveHistory(e historyEntry) (string, error) {
	dir, err := a.historyDir()
	if err != nil {
		return "", err
	}
	dir = e.subject().dir(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("offsets history: %w", err)
	}
	if e.Group == "" && e.Offsets == nil {
		e.Offsets = []client.ConnectorOffset{}
	}
	if e.Group != "" && e.GroupOffsets == nil {
		e.GroupOffsets = []groupoffsets.Offset{}
	}
	now := a.now().UTC()
	e.Time = now
	op := e.Operation
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, now.Format("20060102T150405.000000000Z")+"-"+op+".json")
	for i := 1; ; i++ {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			break
		}
		path = filepath.Join(dir, fmt.Sprintf("%s-%d-%s.json", now.Format("20060102T150405.000000000Z"), i, op))
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("offsets history: %w", err)
	}
	return path, nil
}

// history lists the saved states of s on a cluster, newest first, undone
// ones included.
func (a *app) history(cluster string, s subject) ([]historyEntry, error) {
	dir, err := a.historyDir()
	if err != nil {
		return nil, err
	}
	dir = s.dir(dir)
	files, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []historyEntry
	for _, f := range files {
		n := f.Name()
		if f.IsDir() || !(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json"+undoneSuffix)) {
			continue
		}
		path := filepath.Join(dir, n)
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var e historyEntry
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("offsets history %s: %w", path, err)
		}
		if e.subject() != s || e.Cluster != cluster {
			continue
		}
		e.path, e.undone = path, strings.HasSuffix(n, undoneSuffix)
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(x, y historyEntry) int {
		if c := y.Time.Compare(x.Time); c != 0 {
			return c
		}
		return strings.Compare(y.path, x.path)
	})
	return out, nil
}

// lastUndoable is the newest entry not undone yet.
func (a *app) lastUndoable(cluster string, s subject) (*historyEntry, error) {
	all, err := a.history(cluster, s)
	if err != nil {
		return nil, err
	}
	for i := range all {
		if !all[i].undone {
			return &all[i], nil
		}
	}
	cmd := "connectctl offsets history "
	if s.group {
		cmd = "connectctl groups history "
	}
	return nil, withHint(fmt.Errorf("no offsets of %s on %s to go back to", s, cluster),
		"connectctl keeps the offsets it replaced; see them with: "+cmd+s.name)
}

func markUndone(e *historyEntry) error {
	return os.Rename(e.path, e.path+undoneSuffix)
}

// historyTable lists the entries: TIME OPERATION PARTITIONS UNDONE.
func (a *app) historyTable(s subject, entries []historyEntry) error {
	if a.structured() {
		if entries == nil {
			entries = []historyEntry{}
		}
		type out struct {
			historyEntry
			File   string `json:"file"`
			Undone bool   `json:"undone"`
		}
		list := make([]out, len(entries))
		for i, e := range entries {
			list[i] = out{e, e.path, e.undone}
		}
		return a.writeStructured(list)
	}
	if len(entries) == 0 {
		_, err := fmt.Fprintf(a.stdout, "no offsets saved for %s on this cluster\n", s)
		return err
	}
	rows := make([][]string, 0, len(entries))
	for _, e := range entries {
		status := "-"
		if e.undone {
			status = "undone"
		}
		n := len(e.Offsets) + len(e.GroupOffsets)
		rows = append(rows, []string{e.Time.Local().Format("2006-01-02 15:04:05"), e.Operation, fmt.Sprint(n), status, e.path})
	}
	return table(a.stdout, a.out(), []string{"SAVED", "BEFORE", "PARTITIONS", "STATUS", "FILE"}, rows, nil)
}
