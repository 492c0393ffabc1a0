// Command connectctl manages connectors on a Kafka Connect worker
// (connectd or Apache Kafka Connect 3.6+) over its REST API.
//
//	connectctl get connectors
//	connectctl describe NAME
//	connectctl pause|resume|stop|delete NAME
//	connectctl restart NAME [--include-tasks] [--only-failed]
//	connectctl offsets get NAME
//	connectctl offsets set NAME -f FILE
//	connectctl offsets reset NAME
//	connectctl plugins [--all]
//
// The worker URL comes from --url, else $CONNECT_URL, else
// http://localhost:8083. Errors are printed as "Error: <message>" on
// stderr and exit with status 1.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/connectd/connectd/client"
)

const defaultURL = "http://localhost:8083"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// app holds the global flags and the streams of one invocation.
type app struct {
	url     string
	output  string
	timeout time.Duration

	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	// target is the connector the failing command was about, for hints.
	target string
}

// run executes connectctl with args and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr}
	root := a.rootCmd(getenv)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		a.printError(err)
		return 1
	}
	return 0
}

func (a *app) printError(err error) {
	fmt.Fprintf(a.stderr, "Error: %s\n", err)
	var cerr *client.Error
	if errors.As(err, &cerr) && cerr.StatusCode == 400 &&
		strings.Contains(cerr.Message, "must be in the STOPPED state") && a.target != "" {
		fmt.Fprintf(a.stderr, "hint: stop it first: connectctl stop %s\n", a.target)
	}
}

// client builds the REST client from the global flags.
func (a *app) client() (*client.Client, error) {
	return client.New(a.url, client.WithTimeout(a.timeout))
}

// checkOutput validates -o for the commands that use it.
func (a *app) checkOutput() error {
	switch a.output {
	case "table", "json":
		return nil
	}
	return fmt.Errorf("invalid output format %q: want json or table", a.output)
}

func (a *app) rootCmd(getenv func(string) string) *cobra.Command {
	url := getenv("CONNECT_URL")
	if url == "" {
		url = defaultURL
	}
	root := &cobra.Command{
		Use:           "connectctl",
		Short:         "Manage connectors on a Kafka Connect worker",
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return a.checkOutput()
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&a.url, "url", url, "worker REST URL ($CONNECT_URL if set)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format where it applies: table or json")
	pf.DurationVar(&a.timeout, "timeout", 100*time.Second, "timeout of each request")

	root.AddCommand(a.getCmd(), a.describeCmd(), a.restartCmd(), a.offsetsCmd(), a.pluginsCmd())
	for _, verb := range []string{"pause", "resume", "stop", "delete"} {
		root.AddCommand(a.lifecycleCmd(verb))
	}
	return root
}

// nameArg requires exactly one connector name and remembers it.
func (a *app) nameArg(cmd *cobra.Command, args []string) error {
	if len(args) != 1 || args[0] == "" {
		return fmt.Errorf("%s needs exactly one connector name", cmd.CommandPath())
	}
	a.target = args[0]
	return nil
}

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

func (a *app) describeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME",
		Short: "Show a connector's config, tasks and status as JSON",
		Args:  a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.describe(cmd.Context(), args[0])
		},
	}
}

var lifecycleShort = map[string]string{
	"pause":  "Pause a connector and its tasks",
	"resume": "Resume a paused or stopped connector",
	"stop":   "Stop a connector and shut down its tasks (needed before changing offsets)",
	"delete": "Delete a connector (its offsets are kept)",
}

func (a *app) lifecycleCmd(verb string) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: lifecycleShort[verb],
		Args:  a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.lifecycle(cmd.Context(), verb, args[0])
		},
	}
}

func (a *app) restartCmd() *cobra.Command {
	var includeTasks, onlyFailed bool
	cmd := &cobra.Command{
		Use:   "restart NAME",
		Short: "Restart a connector, and with --include-tasks its tasks",
		Args:  a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.restart(cmd.Context(), args[0], includeTasks, onlyFailed)
		},
	}
	cmd.Flags().BoolVar(&includeTasks, "include-tasks", false, "restart the tasks too")
	cmd.Flags().BoolVar(&onlyFailed, "only-failed", false, "restart only the instances that failed")
	return cmd
}

func (a *app) offsetsCmd() *cobra.Command {
	offsets := &cobra.Command{
		Use:   "offsets",
		Short: "Show, set or reset a connector's offsets",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("offsets needs a subcommand: get, set or reset")
			}
			return fmt.Errorf("unknown offsets subcommand %q: want get, set or reset", args[0])
		},
	}
	offsets.AddCommand(&cobra.Command{
		Use:   "get NAME",
		Short: "Show a connector's offsets",
		Args:  a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.offsetsGet(cmd.Context(), args[0])
		},
	})
	var file string
	set := &cobra.Command{
		Use:   "set NAME -f FILE",
		Short: "Alter a stopped connector's offsets from a JSON file ({\"offsets\":[...]}, - for stdin)",
		Args:  a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.offsetsSet(cmd.Context(), args[0], file)
		},
	}
	set.Flags().StringVarP(&file, "file", "f", "", `JSON body as for PATCH /connectors/NAME/offsets: {"offsets":[{"partition":{...},"offset":{...}}]}`)
	_ = set.MarkFlagRequired("file")
	offsets.AddCommand(set)
	offsets.AddCommand(&cobra.Command{
		Use:   "reset NAME",
		Short: "Reset all of a stopped connector's offsets",
		Args:  a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.offsetsReset(cmd.Context(), args[0])
		},
	})
	return offsets
}

func (a *app) pluginsCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List installed connector plugins",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.plugins(cmd.Context(), all)
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "include converters, transformations and predicates")
	return cmd
}
