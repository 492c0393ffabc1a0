package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/properties"
)

func (a *app) getCmd() *cobra.Command {
	get := &cobra.Command{
		Use:   "get RESOURCE",
		Short: "List resources (connectors)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("get needs a resource: connectors")
			}
			return fmt.Errorf("unknown resource %q: want connectors", args[0])
		},
	}
	get.AddCommand(&cobra.Command{
		Use:     "connectors",
		Aliases: []string{"connector", "conn"},
		Short:   "List connectors with their state, tasks and type",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.getConnectors(cmd.Context())
		},
	})
	return get
}

// getConnectors lists the connectors: NAME STATE TASKS TYPE EXACTLY-ONCE,
// where TASKS is running/total and EXACTLY-ONCE, for a source, whether the
// cluster runs it exactly once (and "(required)" when its config says so).
func (a *app) getConnectors(ctx context.Context) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	all, err := c.ConnectorsExpanded(ctx, "status", "info")
	if err != nil {
		return err
	}
	if a.structured() {
		if all == nil {
			all = map[string]client.ConnectorExpanded{}
		}
		return a.writeStructured(all)
	}
	names := slices.Sorted(maps.Keys(all))
	rows := make([][]string, 0, len(names))
	// EXACTLY-ONCE: whether the cluster runs source connectors exactly
	// once, and whether the connector requires it.
	eos := "-"
	if cfg := sourceConfig(all); cfg != nil {
		if enabled, known := exactlyOnceSources(ctx, c, cfg); known {
			eos = map[bool]string{true: "yes", false: "no"}[enabled]
		}
	}
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
			if running < len(s.Tasks) && slices.ContainsFunc(s.Tasks, func(t client.TaskState) bool { return t.State == client.StateFailed }) {
				tasks += " (failed)"
			}
		}
		once := "-"
		if typ == "source" {
			once = eos
			if e.Info != nil && strings.EqualFold(e.Info.Config["exactly.once.support"], "required") {
				once += " (required)"
			}
		}
		rows = append(rows, []string{n, state, tasks, typ, once})
	}
	return table(a.stdout, a.out(), []string{"NAME", "STATE", "TASKS", "TYPE", "EXACTLY-ONCE"}, rows, func(_, col int, cell string) string {
		switch col {
		case 1:
			return stateColor(cell)
		case 2:
			if strings.HasSuffix(cell, "(failed)") {
				return red
			}
		}
		return ""
	})
}

func (a *app) describeCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "describe NAME",
		Short:             "Show a connector's state, tasks, config and topics",
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.describe(cmd.Context(), args[0])
		},
	}
}

// describe shows one connector; with -o json|yaml it is
// {"status":...,"info":...}. A connector without a status yet is shown
// without one.
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
	if a.structured() {
		return a.writeStructured(client.ConnectorExpanded{Status: status, Info: info})
	}
	p := a.out()
	w := a.stdout
	typ, state, workerID := info.Type, "-", "-"
	if status != nil {
		state, workerID = status.Connector.State, status.Connector.WorkerID
		if status.Type != "" {
			typ = status.Type
		}
	}
	fmt.Fprintf(w, "Name:     %s\n", info.Name)
	fmt.Fprintf(w, "Type:     %s\n", typ)
	fmt.Fprintf(w, "Class:    %s\n", info.Config["connector.class"])
	fmt.Fprintf(w, "State:    %s\n", p.paint(stateColor(state), state))
	fmt.Fprintf(w, "Worker:   %s\n", workerID)
	if status != nil && status.Connector.Trace != "" {
		fmt.Fprintf(w, "Trace:\n%s\n", indent(status.Connector.Trace, "  "))
	}
	if topics, err := c.Topics(ctx, name); err == nil && len(topics) > 0 {
		fmt.Fprintf(w, "Topics:   %s\n", strings.Join(topics, ", "))
	}
	fmt.Fprintln(w, "\nConfig:")
	keys := slices.Sorted(maps.Keys(info.Config))
	rows := make([][]string, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, []string{"  " + k, info.Config[k]})
	}
	if err := table(w, p, []string{"  KEY", "VALUE"}, rows, nil); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nTasks:")
	var trows [][]string
	var traces []string
	if status != nil {
		for _, t := range status.Tasks {
			trows = append(trows, []string{"  " + strconv.Itoa(t.ID), t.State, t.WorkerID})
			if t.Trace != "" {
				traces = append(traces, fmt.Sprintf("Task %d trace:\n%s", t.ID, indent(t.Trace, "  ")))
			}
		}
	} else {
		for _, t := range info.Tasks {
			trows = append(trows, []string{"  " + strconv.Itoa(t.Task), "-", "-"})
		}
	}
	if err := table(w, p, []string{"  ID", "STATE", "WORKER"}, trows, func(_, col int, cell string) string {
		if col == 1 {
			return stateColor(cell)
		}
		return ""
	}); err != nil {
		return err
	}
	for _, t := range traces {
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.TrimRight(t, "\n"))
	}
	return nil
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}

var lifecycleShort = map[string]string{
	"pause":  "Pause a connector and its tasks",
	"resume": "Resume a paused or stopped connector",
	"stop":   "Stop a connector and shut down its tasks (needed before changing offsets)",
}

func (a *app) lifecycleCmd(verb string) *cobra.Command {
	return &cobra.Command{
		Use:               verb + " NAME",
		Short:             lifecycleShort[verb],
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.lifecycle(cmd.Context(), verb, args[0])
		},
	}
}

var pastTense = map[string]string{"pause": "paused", "resume": "resumed", "stop": "stopped"}

// lifecycle pauses, resumes or stops a connector.
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
	default:
		err = fmt.Errorf("unknown action %q", verb)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "connector %s %s\n", name, pastTense[verb])
	return err
}

func (a *app) restartCmd() *cobra.Command {
	var includeTasks, onlyFailed bool
	cmd := &cobra.Command{
		Use:               "restart NAME",
		Short:             "Restart a connector, and with --include-tasks its tasks",
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.restart(cmd.Context(), args[0], includeTasks, onlyFailed)
		},
	}
	cmd.Flags().BoolVar(&includeTasks, "include-tasks", false, "restart the tasks too")
	cmd.Flags().BoolVar(&onlyFailed, "only-failed", false, "restart only the instances that failed")
	return cmd
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
	if a.structured() {
		if status == nil {
			return a.writeStructured(map[string]any{"name": name, "restarted": true})
		}
		return a.writeStructured(status)
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
	return table(a.stdout, a.out(), []string{"INSTANCE", "STATE", "WORKER"}, rows, func(_, col int, cell string) string {
		if col == 1 {
			return stateColor(cell)
		}
		return ""
	})
}

func (a *app) topicsCmd() *cobra.Command {
	var reset bool
	cmd := &cobra.Command{
		Use:               "topics NAME [--reset]",
		Short:             "List the topics a connector has used, or forget them with --reset",
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			name := args[0]
			if reset {
				if err := c.ResetTopics(cmd.Context(), name); err != nil {
					return err
				}
				_, err = fmt.Fprintf(a.stdout, "active topics of connector %s reset\n", name)
				return err
			}
			topics, err := c.Topics(cmd.Context(), name)
			if err != nil {
				return err
			}
			if topics == nil {
				topics = []string{}
			}
			if a.structured() {
				return a.writeStructured(map[string]any{name: map[string]any{"topics": topics}})
			}
			rows := make([][]string, 0, len(topics))
			for _, t := range topics {
				rows = append(rows, []string{t})
			}
			return table(a.stdout, a.out(), []string{"TOPIC"}, rows, nil)
		},
	}
	cmd.Flags().BoolVar(&reset, "reset", false, "clear the connector's set of active topics")
	return cmd
}

// loadConnectorFile reads a connector file the way connect-standalone
// does: a flat JSON config with "name", a POST /connectors body, or a
// .properties file. "-" is stdin.
func (a *app) loadConnectorFile(path string) (name string, config map[string]string, initialState string, err error) {
	if path == "-" {
		data, err := io.ReadAll(a.stdin)
		if err != nil {
			return "", nil, "", err
		}
		f, err := os.CreateTemp("", "connectctl-*.conf")
		if err != nil {
			return "", nil, "", err
		}
		defer os.Remove(f.Name())
		if _, err := f.Write(data); err != nil {
			f.Close()
			return "", nil, "", err
		}
		if err := f.Close(); err != nil {
			return "", nil, "", err
		}
		name, config, initialState, err = properties.LoadConnectorConfig(f.Name())
		if err != nil {
			err = errors.New(strings.ReplaceAll(err.Error(), f.Name(), "stdin"))
		}
		return name, config, initialState, err
	}
	return properties.LoadConnectorConfig(path)
}

// loadConfigOnly reads a connector config that need not name the
// connector, as for validation: a flat JSON object or a .properties file.
func (a *app) loadConfigOnly(path string) (map[string]string, error) {
	_, cfg, _, err := a.loadConnectorFile(path)
	if err == nil {
		return cfg, nil
	}
	if !strings.Contains(err.Error(), "missing the mandatory 'name'") || path == "-" {
		return nil, err
	}
	data, rerr := os.ReadFile(path)
	if rerr != nil {
		return nil, rerr
	}
	var flat map[string]any
	if json.Unmarshal(data, &flat) == nil {
		out := make(map[string]string, len(flat))
		for k, v := range flat {
			switch x := v.(type) {
			case string:
				out[k] = x
			case nil:
				return nil, fmt.Errorf("%s: the value of %q is null", path, k)
			default:
				out[k] = compactJSON(x)
			}
		}
		return out, nil
	}
	return properties.ParseFile(path)
}

func (a *app) applyCmd() *cobra.Command {
	var files []string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE...",
		Short: "Create connectors or change their config from JSON or .properties files",
		Long: `Create connectors, or replace their config, from files in any format
connect-standalone takes: a flat JSON config with "name", a POST /connectors
body ({"name":..,"config":{..},"initial_state":..}), or a .properties file
with name=... ("-" reads stdin). A connector that exists keeps its state; a
new one starts in initial_state when the file gives one.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return errors.New("apply needs at least one -f FILE")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			for _, f := range files {
				if err := a.apply(cmd.Context(), c, f, dryRun); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVarP(&files, "file", "f", nil, "connector file (JSON or .properties; - for stdin); repeatable")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "validate and show what would change, without changing anything")
	return cmd
}

// apply creates or updates one connector from a file.
func (a *app) apply(ctx context.Context, c *client.Client, path string, dryRun bool) error {
	name, cfg, initialState, err := a.loadConnectorFile(path)
	if err != nil {
		return err
	}
	a.target = name
	current, err := c.Config(ctx, name)
	if err != nil && !client.IsNotFound(err) {
		return err
	}
	exists := err == nil
	var changed []string
	if exists {
		for k := range cfg {
			if cur, ok := current[k]; !ok || cur != cfg[k] {
				changed = append(changed, k)
			}
		}
		for k := range current {
			if _, ok := cfg[k]; !ok {
				changed = append(changed, k)
			}
		}
		slices.Sort(changed)
		if len(changed) == 0 {
			_, err := fmt.Fprintf(a.stdout, "connector %s unchanged\n", name)
			return err
		}
	}
	if dryRun {
		class := cfg["connector.class"]
		if class == "" {
			return fmt.Errorf("%s: no connector.class", path)
		}
		res, err := c.Validate(ctx, class, cfg)
		if err != nil {
			return err
		}
		if res.ErrorCount > 0 {
			a.printValidation(res)
			return fmt.Errorf("connector %s: the config has %d error(s)", name, res.ErrorCount)
		}
		if exists {
			_, err = fmt.Fprintf(a.stdout, "connector %s would be configured (changed: %s) (dry run)\n", name, strings.Join(changed, ", "))
		} else {
			_, err = fmt.Fprintf(a.stdout, "connector %s would be created (dry run)\n", name)
		}
		return err
	}
	if !exists && initialState != "" {
		if _, err := c.CreateConnector(ctx, name, cfg, initialState, nil); err != nil {
			return err
		}
		_, err = fmt.Fprintf(a.stdout, "connector %s created (%s)\n", name, initialState)
		return err
	}
	_, created, err := c.PutConfig(ctx, name, cfg)
	if err != nil {
		return err
	}
	if created {
		_, err = fmt.Fprintf(a.stdout, "connector %s created\n", name)
	} else {
		_, err = fmt.Fprintf(a.stdout, "connector %s configured (changed: %s)\n", name, strings.Join(changed, ", "))
	}
	return err
}

func (a *app) patchCmd() *cobra.Command {
	patch := &cobra.Command{
		Use:   "patch config NAME --set KEY=VALUE... --unset KEY...",
		Short: "Change some keys of a connector's config (Kafka Connect 3.8+)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("patch needs a resource: config")
			}
			return fmt.Errorf("unknown resource %q: want config", args[0])
		},
	}
	var sets, unsets []string
	var body string
	cfg := &cobra.Command{
		Use:               "config NAME",
		Short:             "Change some keys of a connector's config: --set k=v, --unset k, or -p JSON",
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			p := map[string]*string{}
			if body != "" {
				var raw map[string]any
				if err := json.Unmarshal([]byte(body), &raw); err != nil {
					return fmt.Errorf(`-p: want a JSON object such as {"key":"value","old.key":null}: %v`, err)
				}
				for k, v := range raw {
					switch x := v.(type) {
					case nil:
						p[k] = nil
					case string:
						p[k] = &x
					default:
						s := compactJSON(x)
						p[k] = &s
					}
				}
			}
			for _, s := range sets {
				k, v, ok := strings.Cut(s, "=")
				if !ok || k == "" {
					return fmt.Errorf("--set %q: want KEY=VALUE", s)
				}
				p[k] = &v
			}
			for _, k := range unsets {
				p[k] = nil
			}
			if len(p) == 0 {
				return errors.New("patch config needs --set KEY=VALUE, --unset KEY or -p JSON")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			info, err := c.PatchConfig(cmd.Context(), args[0], p)
			if err != nil {
				return err
			}
			if a.structured() {
				return a.writeStructured(info)
			}
			_, err = fmt.Fprintf(a.stdout, "connector %s patched (%s)\n", args[0], strings.Join(slices.Sorted(maps.Keys(p)), ", "))
			return err
		},
	}
	cfg.Flags().StringArrayVar(&sets, "set", nil, "set KEY=VALUE; repeatable")
	cfg.Flags().StringArrayVar(&unsets, "unset", nil, "remove KEY; repeatable")
	cfg.Flags().StringVarP(&body, "patch", "p", "", `the patch as JSON: {"key":"value","removed.key":null}`)
	patch.AddCommand(cfg)
	return patch
}

// connectorsCmd groups the commands about whole connectors across
// clusters.
func (a *app) connectorsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "connectors",
		Short: "List, copy (with their offsets) or delete (with --reset-offsets, theirs too) connectors",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.copyCmd(), a.deleteCmd(), &cobra.Command{
		Use:   "list",
		Short: "List connectors with their state, tasks and type (as get connectors)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.getConnectors(cmd.Context()) },
	})
	return cmd
}
