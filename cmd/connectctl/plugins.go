package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/connectd/connectd/client"
)

func (a *app) pluginsCmd() *cobra.Command {
	var all bool
	list := func(cmd *cobra.Command, _ []string) error { return a.plugins(cmd.Context(), all) }
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List, describe and validate against installed plugins",
		Args:  cobra.NoArgs,
		RunE:  list,
	}
	cmd.Flags().BoolVar(&all, "all", false, "include converters, transformations and predicates")
	ls := &cobra.Command{
		Use:   "list",
		Short: "List installed connector plugins",
		Args:  cobra.NoArgs,
		RunE:  list,
	}
	ls.Flags().BoolVar(&all, "all", false, "include converters, transformations and predicates")
	cmd.AddCommand(ls)
	cmd.AddCommand(&cobra.Command{
		Use:   "describe PLUGIN",
		Short: "Show a plugin's config keys (PLUGIN is a class name or alias)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.pluginDescribe(cmd.Context(), args[0])
		},
	})
	var file, plugin string
	validate := &cobra.Command{
		Use:   "validate -f FILE [--plugin PLUGIN]",
		Short: "Validate a connector config (JSON or .properties) without creating anything",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return errors.New(`plugins validate needs -f FILE`)
			}
			return a.pluginValidate(cmd.Context(), file, plugin)
		},
	}
	validate.Flags().StringVarP(&file, "file", "f", "", "connector config: JSON (flat or a POST /connectors body) or .properties; - for stdin")
	validate.Flags().StringVar(&plugin, "plugin", "", "plugin to validate against (default: the config's connector.class)")
	cmd.AddCommand(validate)
	return cmd
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
	if a.structured() {
		if ps == nil {
			ps = []client.PluginInfo{}
		}
		return a.writeStructured(ps)
	}
	rows := make([][]string, 0, len(ps))
	for _, p := range ps {
		v := p.Version
		if v == "" {
			v = "-"
		}
		rows = append(rows, []string{p.Class, p.Type, v})
	}
	return table(a.stdout, a.out(), []string{"CLASS", "TYPE", "VERSION"}, rows, nil)
}

// pluginDescribe lists a plugin's config keys.
func (a *app) pluginDescribe(ctx context.Context, plugin string) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	keys, err := c.PluginConfig(ctx, plugin)
	if err != nil {
		return err
	}
	if a.structured() {
		if keys == nil {
			keys = []client.ConfigKeyInfo{}
		}
		return a.writeStructured(keys)
	}
	rows := make([][]string, 0, len(keys))
	for _, k := range keys {
		def := "-"
		if k.DefaultValue != nil {
			def = strconv.Quote(*k.DefaultValue)
		}
		req := ""
		if k.Required {
			req = "yes"
		}
		doc := strings.Join(strings.Fields(k.Documentation), " ")
		rows = append(rows, []string{k.Name, k.Type, req, def, k.Importance, doc})
	}
	return table(a.stdout, a.out(), []string{"NAME", "TYPE", "REQUIRED", "DEFAULT", "IMPORTANCE", "DOCUMENTATION"}, rows, func(_, col int, cell string) string {
		if col == 2 && cell == "yes" {
			return yellow
		}
		return ""
	})
}

// pluginValidate validates a config and fails when it has errors.
func (a *app) pluginValidate(ctx context.Context, file, plugin string) error {
	cfg, err := a.loadConfigOnly(file)
	if err != nil {
		return err
	}
	if plugin == "" {
		plugin = cfg["connector.class"]
	}
	if plugin == "" {
		return withHint(fmt.Errorf("%s has no connector.class", file), "add connector.class, or name the plugin with --plugin")
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	res, err := c.Validate(ctx, plugin, cfg)
	if err != nil {
		return err
	}
	if a.structured() {
		if err := a.writeStructured(res); err != nil {
			return err
		}
	} else if res.ErrorCount > 0 {
		a.printValidation(res)
	} else {
		fmt.Fprintf(a.stdout, "config valid for %s (%d keys checked)\n", res.Name, len(res.Configs))
	}
	if res.ErrorCount > 0 {
		return fmt.Errorf("the config has %d error(s)", res.ErrorCount)
	}
	return nil
}

// printValidation lists a validation's errors: KEY ERROR.
func (a *app) printValidation(res *client.ConfigInfos) {
	errs := res.Errors()
	var rows [][]string
	for _, k := range slices.Sorted(maps.Keys(errs)) {
		for _, e := range errs[k] {
			rows = append(rows, []string{k, e})
		}
	}
	_ = table(a.stdout, a.out(), []string{"KEY", "ERROR"}, rows, func(_, col int, _ string) string {
		if col == 1 {
			return red
		}
		return ""
	})
}

func (a *app) loggersCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "loggers",
		Short: "Show or set the worker's log levels",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return a.loggersGet(cmd.Context(), "") },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "get [LOGGER]",
		Short: "List the loggers with a level set (and root), or show one logger's level",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			return a.loggersGet(cmd.Context(), name)
		},
	})
	var scope string
	set := &cobra.Command{
		Use:   "set LOGGER LEVEL [--scope worker|cluster]",
		Short: "Set the level of a logger and the loggers below it",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch scope {
			case "", client.ScopeWorker, client.ScopeCluster:
			default:
				return fmt.Errorf("invalid --scope %q: want worker or cluster", scope)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			level := strings.ToUpper(args[1])
			changed, err := c.SetLogger(cmd.Context(), args[0], level, scope)
			if err != nil {
				return err
			}
			if a.structured() {
				if changed == nil {
					changed = []string{}
				}
				return a.writeStructured(changed)
			}
			if scope == client.ScopeCluster {
				_, err = fmt.Fprintf(a.stdout, "level of %s set to %s on every worker of the cluster\n", args[0], level)
				return err
			}
			fmt.Fprintf(a.stdout, "level of %s set to %s (%d logger%s)\n", args[0], level, len(changed), plural(len(changed)))
			for _, l := range changed {
				fmt.Fprintln(a.stdout, "  "+l)
			}
			return nil
		},
	}
	set.Flags().StringVar(&scope, "scope", "", "worker (this worker only, the default) or cluster (every worker; Kafka 3.7+)")
	cmd.AddCommand(set)
	return cmd
}

func (a *app) loggersGet(ctx context.Context, name string) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	var levels map[string]client.LoggerLevel
	if name != "" {
		l, err := c.Logger(ctx, name)
		if err != nil {
			return err
		}
		levels = map[string]client.LoggerLevel{name: *l}
	} else if levels, err = c.Loggers(ctx); err != nil {
		return err
	}
	if a.structured() {
		if levels == nil {
			levels = map[string]client.LoggerLevel{}
		}
		return a.writeStructured(levels)
	}
	rows := make([][]string, 0, len(levels))
	for _, n := range slices.Sorted(maps.Keys(levels)) {
		l := levels[n]
		mod := "-"
		if l.LastModified != nil {
			mod = time.UnixMilli(*l.LastModified).UTC().Format(time.RFC3339)
		}
		rows = append(rows, []string{n, l.Level, mod})
	}
	return table(a.stdout, a.out(), []string{"LOGGER", "LEVEL", "LAST MODIFIED"}, rows, nil)
}
