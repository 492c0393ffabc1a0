// Command connectctl manages connectors on a Kafka Connect worker
// (connectd or Apache Kafka Connect 3.6+) over its REST API, and moves
// their offsets safely: it stops a connector before changing them, shows
// the change, verifies it, resumes, and keeps the previous offsets so that
// `connectctl offsets undo` restores them.
//
//	connectctl get connectors
//	connectctl describe NAME
//	connectctl apply -f connector.json
//	connectctl patch config NAME --set key=value
//	connectctl pause|resume|stop|delete NAME
//	connectctl restart NAME [--include-tasks] [--only-failed]
//	connectctl offsets get|set|reset|undo|history|export|import ...
//	connectctl connectors copy NAME --from URL --to URL [--resume]
//	connectctl plugins [list|describe|validate]
//	connectctl topics NAME [--reset]
//	connectctl loggers get|set
//	connectctl config use-context|set-context|get-contexts
//
// The worker is --url, else the context named by --context, else
// $CONNECT_URL, else the current context of the config file
// (~/.config/connectctl/config.yaml), else http://localhost:8083. Errors
// are printed as "Error: <message>" on stderr, often followed by a
// "hint:" line, and exit with status 1.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/connectd/connectd/client"
)

const defaultURL = "http://localhost:8083"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// env is what one invocation sees of the outside world. Tests build it
// directly to pretend to be on a terminal.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string

	stdinTTY, stdoutTTY, stderrTTY bool

	// now is the clock, for history file names.
	now func() time.Time
}

// isTerminal reports whether s is a character device (a terminal), without
// any dependency: good enough to decide on colours, prompts and progress.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// run executes connectctl with args and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return execute(ctx, args, env{
		stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv,
		stdinTTY: isTerminal(stdin), stdoutTTY: isTerminal(stdout), stderrTTY: isTerminal(stderr),
		now: time.Now,
	})
}

func execute(ctx context.Context, args []string, e env) int {
	if e.now == nil {
		e.now = time.Now
	}
	if e.getenv == nil {
		e.getenv = func(string) string { return "" }
	}
	a := &app{env: e}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		a.printError(err)
		return 1
	}
	return 0
}

// app holds the global flags and the streams of one invocation.
type app struct {
	env

	url         string
	contextName string
	configPath  string
	user        string
	password    string
	caFile      string
	certFile    string
	keyFile     string
	insecure    bool
	output      string
	timeout     time.Duration
	noColor     bool

	root *cobra.Command

	// target is the connector the failing command was about, for hints.
	target string
	// conn is the resolved connection, once a command asked for it.
	conn *connection

	// stdinReader reads answers to questions; stdinUsed says stdin held
	// data instead.
	stdinReader *bufio.Reader
	stdinUsed   bool
	// bar is the progress bar being drawn, if any.
	bar *progress
}

// connection is where and how to reach a worker, after flags, the
// environment and the config file have been applied.
type connection struct {
	url      string
	user     string
	password string
	hasAuth  bool
	caFile   string
	certFile string
	keyFile  string
	insecure bool
	context  string // the context it came from, if any

	// Defaults for the commands that talk to Kafka itself.
	bootstrap    string
	offsetsTopic string
	statusTopic  string
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "connectctl",
		Short: "Manage connectors and their offsets on a Kafka Connect worker",
		Long: `connectctl manages connectors on a Kafka Connect worker (connectd or Apache
Kafka Connect 3.6+) over its REST API, and changes their offsets safely: it
stops a connector first, shows the change as a diff, verifies it, resumes,
and keeps the previous offsets so that "connectctl offsets undo" restores them.

The worker is --url, else the context named by --context, else $CONNECT_URL,
else the current context of the config file, else http://localhost:8083.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return a.checkOutput()
		},
	}
	a.root = root
	pf := root.PersistentFlags()
	pf.StringVar(&a.url, "url", "", "worker REST URL (default: --context, $CONNECT_URL, the current context, "+defaultURL+")")
	pf.StringVar(&a.contextName, "context", "", "use this context of the config file")
	pf.StringVar(&a.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/connectctl/config.yaml or ~/.config/connectctl/config.yaml)")
	pf.StringVar(&a.user, "user", "", "user for HTTP basic authentication ($CONNECT_USER)")
	pf.StringVar(&a.password, "password", "", "password for HTTP basic authentication ($CONNECT_PASSWORD)")
	pf.StringVar(&a.caFile, "ca-file", "", "PEM file of the CA certificates that sign the worker's certificate")
	pf.StringVar(&a.certFile, "cert-file", "", "PEM file of connectctl's client certificate, for a worker with ssl.client.auth=required (with --key-file)")
	pf.StringVar(&a.keyFile, "key-file", "", "PEM file of the private key of --cert-file")
	pf.BoolVar(&a.insecure, "insecure-skip-tls-verify", false, "do not check the worker's TLS certificate (test clusters only)")
	pf.StringVarP(&a.output, "output", "o", "table", "output format where it applies: table, json or yaml")
	pf.DurationVar(&a.timeout, "timeout", 100*time.Second, "timeout of each request")
	pf.BoolVar(&a.noColor, "no-color", false, "no colours, even on a terminal ($NO_COLOR does the same)")

	root.AddGroup(&cobra.Group{ID: "conn", Title: "Connectors:"},
		&cobra.Group{ID: "offsets", Title: "Offsets:"},
		&cobra.Group{ID: "worker", Title: "Worker:"},
		&cobra.Group{ID: "setup", Title: "Setup:"})
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("conn", a.getCmd(), a.describeCmd(), a.applyCmd(), a.patchCmd(), a.restartCmd(), a.topicsCmd(), a.connectorsCmd())
	for _, verb := range []string{"pause", "resume", "stop"} {
		add("conn", a.lifecycleCmd(verb))
	}
	add("conn", a.deleteCmd())
	add("offsets", a.offsetsCmd(), a.groupsCmd(), a.pipelineCmd(), a.consoleCmd())
	add("worker", a.pluginsCmd(), a.loggersCmd())
	add("setup", a.configCmd())
	root.SetHelpCommandGroupID("setup")
	root.SetCompletionCommandGroupID("setup")
	return root
}

// checkOutput validates -o.
func (a *app) checkOutput() error {
	switch a.output {
	case "table", "json", "yaml":
		return nil
	}
	return fmt.Errorf("invalid output format %q: want table, json or yaml", a.output)
}

// structured reports whether -o asks for JSON or YAML.
func (a *app) structured() bool { return a.output == "json" || a.output == "yaml" }

// resolve works out the connection from the flags, the environment and the
// config file, once.
func (a *app) resolve() (*connection, error) {
	if a.conn != nil {
		return a.conn, nil
	}
	flags := a.root.PersistentFlags()
	c := &connection{}
	var ctxEntry *contextEntry
	name := a.contextName
	if name != "" || a.url == "" {
		cfg, _, err := a.loadConfig()
		if err != nil {
			return nil, err
		}
		switch {
		case name != "":
			ctxEntry = cfg.find(name)
			if ctxEntry == nil {
				return nil, withHint(fmt.Errorf("no context %q in the config file", name), "list them with: connectctl config get-contexts")
			}
		case a.getenv("CONNECT_URL") == "" && cfg.CurrentContext != "":
			ctxEntry = cfg.find(cfg.CurrentContext)
			if ctxEntry == nil {
				return nil, withHint(fmt.Errorf("the current context %q is not in the config file", cfg.CurrentContext),
					"pick one with: connectctl config use-context NAME")
			}
		}
	}
	switch {
	case a.url != "":
		c.url = a.url
	case ctxEntry != nil:
		c.url = ctxEntry.URL
	case a.getenv("CONNECT_URL") != "":
		c.url = a.getenv("CONNECT_URL")
	default:
		c.url = defaultURL
	}
	if ctxEntry != nil {
		c.context = ctxEntry.Name
		c.user, c.password, c.hasAuth = ctxEntry.User, ctxEntry.Password, ctxEntry.User != ""
		c.caFile, c.insecure = ctxEntry.CAFile, ctxEntry.InsecureSkipTLSVerify
		c.certFile, c.keyFile = ctxEntry.CertFile, ctxEntry.KeyFile
		c.bootstrap, c.offsetsTopic, c.statusTopic = ctxEntry.BootstrapServer, ctxEntry.OffsetsTopic, ctxEntry.StatusTopic
	}
	if u := a.getenv("CONNECT_USER"); u != "" {
		c.user, c.hasAuth = u, true
	}
	if p := a.getenv("CONNECT_PASSWORD"); p != "" {
		c.password = p
	}
	if flags.Changed("user") {
		c.user, c.hasAuth = a.user, true
	}
	if flags.Changed("password") {
		c.password = a.password
		c.hasAuth = c.hasAuth || c.user != ""
	}
	if flags.Changed("ca-file") {
		c.caFile = a.caFile
	}
	if flags.Changed("cert-file") {
		c.certFile = a.certFile
	}
	if flags.Changed("key-file") {
		c.keyFile = a.keyFile
	}
	if flags.Changed("insecure-skip-tls-verify") {
		c.insecure = a.insecure
	}
	a.conn = c
	return c, nil
}

// client builds the REST client of the resolved connection.
func (a *app) client() (*client.Client, error) {
	c, err := a.resolve()
	if err != nil {
		return nil, err
	}
	return a.clientOf(c)
}

// clientOf builds a REST client for a connection.
func (a *app) clientOf(c *connection) (*client.Client, error) {
	opts := []client.Option{client.WithTimeout(a.timeout)}
	if c.hasAuth {
		opts = append(opts, client.WithBasicAuth(c.user, c.password))
	}
	if (c.certFile == "") != (c.keyFile == "") {
		return nil, errors.New("--cert-file and --key-file go together: the client certificate and its key")
	}
	if c.caFile != "" || c.insecure || c.certFile != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: c.insecure} //nolint:gosec // asked for by the user
		if c.caFile != "" {
			pem, err := os.ReadFile(c.caFile)
			if err != nil {
				return nil, fmt.Errorf("reading the CA file: %w", err)
			}
			pool, err := x509.SystemCertPool()
			if err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%s holds no PEM certificate", c.caFile)
			}
			cfg.RootCAs = pool
		}
		if c.certFile != "" {
			cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
			if err != nil {
				return nil, fmt.Errorf("the client certificate (--cert-file, --key-file): %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opts = append(opts, client.WithTLSConfig(cfg))
	}
	return client.New(c.url, opts...)
}

// clientFor is a client for --from/--to style arguments: a URL
// (scheme://...) or the name of a context. Basic auth and TLS flags given
// on the command line apply to a URL.
func (a *app) clientFor(spec string) (*client.Client, error) {
	if strings.Contains(spec, "://") {
		c := &connection{url: spec}
		flags := a.root.PersistentFlags()
		if flags.Changed("user") {
			c.user, c.hasAuth = a.user, true
		}
		if flags.Changed("password") {
			c.password = a.password
		}
		c.caFile, c.insecure, c.certFile, c.keyFile = a.caFile, a.insecure, a.certFile, a.keyFile
		return a.clientOf(c)
	}
	cfg, _, err := a.loadConfig()
	if err != nil {
		return nil, err
	}
	e := cfg.find(spec)
	if e == nil {
		return nil, withHint(fmt.Errorf("%q is neither a URL nor a context of the config file", spec),
			"give a URL such as http://host:8083, or list the contexts with: connectctl config get-contexts")
	}
	return a.clientOf(&connection{url: e.URL, user: e.User, password: e.Password, hasAuth: e.User != "",
		caFile: e.CAFile, insecure: e.InsecureSkipTLSVerify, certFile: e.CertFile, keyFile: e.KeyFile, context: e.Name})
}

// nameArg requires exactly one connector name and remembers it.
func (a *app) nameArg(cmd *cobra.Command, args []string) error {
	if len(args) != 1 || args[0] == "" {
		return fmt.Errorf("%s needs exactly one connector name", cmd.CommandPath())
	}
	a.target = args[0]
	return nil
}

// completeConnectors offers the worker's connector names for shell
// completion.
func (a *app) completeConnectors(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 && cmd.Args != nil {
		if err := cmd.Args(cmd, append(args, "x")); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	}
	c, err := a.client()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
	defer cancel()
	names, err := c.Connectors(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// hintError is an error that comes with advice for the user.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

func withHint(err error, hint string) error { return &hintError{err: err, hint: hint} }

func (a *app) printError(err error) {
	msg := err.Error()
	p := a.painter(a.stderrTTY)
	fmt.Fprintf(a.stderr, "%s %s\n", p.paint(red, "Error:"), msg)
	if h := a.hintFor(err); h != "" {
		fmt.Fprintf(a.stderr, "%s %s\n", p.paint(yellow, "hint:"), h)
	}
}

// hintFor suggests what to do about err, or "".
func (a *app) hintFor(err error) string {
	var he *hintError
	if errors.As(err, &he) {
		return he.hint
	}
	name := a.target
	if name == "" {
		name = "NAME"
	}
	var cerr *client.Error
	if errors.As(err, &cerr) {
		m := cerr.Message
		switch {
		case cerr.StatusCode == 400 && strings.Contains(m, "must be in the STOPPED state"):
			return "stop the connector first: connectctl stop " + name +
				" (connectctl offsets set/reset stop and resume it for you)"
		case strings.Contains(m, "haven't stopped completely yet"):
			return "the connector's tasks are still shutting down: try again in a few seconds"
		case cerr.StatusCode == 404 && strings.HasPrefix(m, "Unknown plugin"):
			return "list the installed plugins with: connectctl plugins"
		case cerr.StatusCode == 404 && m == "HTTP 404 Not Found":
			return "the worker has no such endpoint: it may be older than the Kafka Connect version this needs, or the URL may point elsewhere"
		case cerr.StatusCode == 404 && strings.HasPrefix(m, "Logger "):
			return "list the loggers with: connectctl loggers get"
		case cerr.StatusCode == 404 && (strings.Contains(m, "not found") || strings.Contains(m, "Unknown connector")):
			return "list the connectors with: connectctl get connectors"
		case cerr.StatusCode == 405:
			return "the worker does not support this method here: PATCH of a config needs Kafka Connect 3.8+ (use connectctl apply -f instead)"
		case cerr.StatusCode == 409 && strings.Contains(m, "already exists"):
			return "change an existing connector with: connectctl apply -f FILE"
		case cerr.StatusCode == 409:
			return "the cluster is rebalancing: try again in a few seconds"
		case cerr.StatusCode == 401 || cerr.StatusCode == 403 && !strings.Contains(m, "Topic tracking"):
			return "check the credentials: --user and --password, or connectctl config set-context NAME --user U --password P"
		case strings.Contains(m, "No connector `") && strings.Contains(m, "configured"):
			return "list the connectors with: connectctl get connectors"
		}
		return ""
	}
	url := defaultURL
	if a.conn != nil {
		url = a.conn.url
	}
	var uerr x509.UnknownAuthorityError
	var herr x509.HostnameError
	var opErr *net.OpError
	switch {
	case errors.As(err, &uerr) || errors.As(err, &herr) || strings.Contains(err.Error(), "x509:"):
		return "the worker's TLS certificate is not trusted: pass --ca-file FILE (or --insecure-skip-tls-verify for a test cluster)"
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return "the worker speaks plain HTTP: use an http:// URL"
	case errors.Is(err, context.DeadlineExceeded):
		return "the worker did not answer in time: raise --timeout, or check " + url
	case errors.As(err, &opErr) || errors.Is(err, syscall.ECONNREFUSED):
		return "is a worker listening at " + url + "? Pick another with --url, or with: connectctl config use-context NAME"
	case errors.Is(err, http.ErrSchemeMismatch):
		return "the worker speaks plain HTTP: use an http:// URL"
	}
	return ""
}
