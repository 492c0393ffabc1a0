package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"
)

// configFile is connectctl's config file: named contexts, as kubectl's
// kubeconfig and kcctl's .kcctl have, and the current one.
//
//	current-context: prod
//	contexts:
//	  - name: prod
//	    url: https://connect.example.com:8083
//	    user: admin
//	    password: secret
//	    ca-file: /etc/connect/ca.pem
//	    bootstrap-server: kafka-1:9092
//	    offsets-topic: connect-offsets
//	    status-topic: connect-status
type configFile struct {
	CurrentContext string         `yaml:"current-context,omitempty" json:"current-context,omitempty"`
	Contexts       []contextEntry `yaml:"contexts" json:"contexts"`
}

// contextEntry is one named connection. The Kafka settings are defaults
// for --bootstrap-server, --offsets-topic and --status-topic.
type contextEntry struct {
	Name                  string `yaml:"name" json:"name"`
	URL                   string `yaml:"url" json:"url"`
	User                  string `yaml:"user,omitempty" json:"user,omitempty"`
	Password              string `yaml:"password,omitempty" json:"password,omitempty"`
	InsecureSkipTLSVerify bool   `yaml:"insecure-skip-tls-verify,omitempty" json:"insecure-skip-tls-verify,omitempty"`
	CAFile                string `yaml:"ca-file,omitempty" json:"ca-file,omitempty"`
	CertFile              string `yaml:"cert-file,omitempty" json:"cert-file,omitempty"`
	KeyFile               string `yaml:"key-file,omitempty" json:"key-file,omitempty"`
	BootstrapServer       string `yaml:"bootstrap-server,omitempty" json:"bootstrap-server,omitempty"`
	OffsetsTopic          string `yaml:"offsets-topic,omitempty" json:"offsets-topic,omitempty"`
	StatusTopic           string `yaml:"status-topic,omitempty" json:"status-topic,omitempty"`
}

func (c *configFile) find(name string) *contextEntry {
	for i := range c.Contexts {
		if c.Contexts[i].Name == name {
			return &c.Contexts[i]
		}
	}
	return nil
}

// configFilePath is --config, else $XDG_CONFIG_HOME/connectctl/config.yaml,
// else ~/.config/connectctl/config.yaml; "" when there is no home.
func (a *app) configFilePath() string {
	if a.configPath != "" {
		return a.configPath
	}
	if x := a.getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "connectctl", "config.yaml")
	}
	if h := a.getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "connectctl", "config.yaml")
	}
	return ""
}

// loadConfig reads the config file. A missing file is an empty config
// (unless --config named it).
func (a *app) loadConfig() (*configFile, string, error) {
	path := a.configFilePath()
	cfg := &configFile{}
	if path == "" {
		return cfg, "", nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && a.configPath == "" {
		return cfg, path, nil
	}
	if err != nil {
		return nil, path, fmt.Errorf("reading the config file: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, path, fmt.Errorf("config file %s: %w", path, err)
	}
	return cfg, path, nil
}

// saveConfig writes the config file, readable by its owner only since it
// may hold passwords.
func (a *app) saveConfig(cfg *configFile, path string) error {
	if path == "" {
		return errors.New("no place for the config file: set $HOME or $XDG_CONFIG_HOME, or pass --config")
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(cfg); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Manage the named contexts (workers) of the config file",
		Long: `Manage the named contexts of the config file
($XDG_CONFIG_HOME/connectctl/config.yaml, ~/.config/connectctl/config.yaml, or
--config). A context is a worker URL with its credentials and TLS settings,
and defaults for the commands that talk to Kafka directly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "use-context NAME",
		Short: "Make a context the current one",
		Args:  cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return a.contextNames(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, path, err := a.loadConfig()
			if err != nil {
				return err
			}
			if cfg.find(args[0]) == nil {
				return withHint(fmt.Errorf("no context %q", args[0]), "create it with: connectctl config set-context "+args[0]+" --url URL")
			}
			cfg.CurrentContext = args[0]
			if err := a.saveConfig(cfg, path); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "switched to context %q\n", args[0])
			return nil
		},
	})

	var bootstrap, offsetsTopic, statusTopic string
	set := &cobra.Command{
		Use:   "set-context NAME --url URL [--user U --password P] [--insecure-skip-tls-verify] [--ca-file FILE] [--cert-file FILE --key-file FILE]",
		Short: "Create or change a context",
		Long: `Create a context, or change the settings given of an existing one. The first
context created becomes the current one. The file is written readable by its
owner only, as it may hold a password.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, path, err := a.loadConfig()
			if err != nil {
				return err
			}
			flags := cmd.Flags()
			e := cfg.find(args[0])
			created := e == nil
			if created {
				if !flags.Changed("url") {
					return fmt.Errorf("a new context needs --url")
				}
				cfg.Contexts = append(cfg.Contexts, contextEntry{Name: args[0]})
				e = &cfg.Contexts[len(cfg.Contexts)-1]
			}
			if flags.Changed("url") {
				if _, err := a.clientOf(&connection{url: a.url}); err != nil {
					return err
				}
				e.URL = a.url
			}
			if flags.Changed("user") {
				e.User = a.user
			}
			if flags.Changed("password") {
				e.Password = a.password
			}
			if flags.Changed("insecure-skip-tls-verify") {
				e.InsecureSkipTLSVerify = a.insecure
			}
			for _, f := range []struct {
				flag string
				dst  *string
				val  string
			}{{"ca-file", &e.CAFile, a.caFile}, {"cert-file", &e.CertFile, a.certFile}, {"key-file", &e.KeyFile, a.keyFile}} {
				if flags.Changed(f.flag) {
					*f.dst = f.val
					if f.val != "" {
						if abs, err := filepath.Abs(f.val); err == nil {
							*f.dst = abs
						}
					}
				}
			}
			if flags.Changed("bootstrap-server") {
				e.BootstrapServer = bootstrap
			}
			if flags.Changed("offsets-topic") {
				e.OffsetsTopic = offsetsTopic
			}
			if flags.Changed("status-topic") {
				e.StatusTopic = statusTopic
			}
			current := ""
			if cfg.CurrentContext == "" {
				cfg.CurrentContext = e.Name
				current = " (now the current context)"
			}
			if err := a.saveConfig(cfg, path); err != nil {
				return err
			}
			verb := "changed"
			if created {
				verb = "created"
			}
			fmt.Fprintf(a.stdout, "context %q %s%s\n", e.Name, verb, current)
			return nil
		},
	}
	set.Flags().StringVar(&bootstrap, "bootstrap-server", "", "Kafka bootstrap servers, the default of --bootstrap-server for this context")
	set.Flags().StringVar(&offsetsTopic, "offsets-topic", "", "the workers' offsets topic, the default of --offsets-topic for this context")
	set.Flags().StringVar(&statusTopic, "status-topic", "", "the workers' status topic, the default of --status-topic for this context")
	cmd.AddCommand(set)

	cmd.AddCommand(&cobra.Command{
		Use:     "get-contexts",
		Aliases: []string{"contexts"},
		Short:   "List the contexts; * marks the current one",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, _, err := a.loadConfig()
			if err != nil {
				return err
			}
			if a.structured() {
				out := *cfg
				out.Contexts = slices.Clone(cfg.Contexts)
				for i := range out.Contexts {
					if out.Contexts[i].Password != "" {
						out.Contexts[i].Password = "********"
					}
				}
				if out.Contexts == nil {
					out.Contexts = []contextEntry{}
				}
				return a.writeStructured(out)
			}
			rows := make([][]string, 0, len(cfg.Contexts))
			for _, e := range cfg.Contexts {
				mark := ""
				if e.Name == cfg.CurrentContext {
					mark = "*"
				}
				user := e.User
				if user == "" {
					user = "-"
				}
				rows = append(rows, []string{mark, e.Name, e.URL, user})
			}
			return table(a.stdout, a.out(), []string{"CURRENT", "NAME", "URL", "USER"}, rows, nil)
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "current-context",
		Short: "Print the name of the current context",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, _, err := a.loadConfig()
			if err != nil {
				return err
			}
			if cfg.CurrentContext == "" {
				return withHint(errors.New("no current context"), "set one with: connectctl config use-context NAME")
			}
			fmt.Fprintln(a.stdout, cfg.CurrentContext)
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "delete-context NAME",
		Short: "Delete a context",
		Args:  cobra.ExactArgs(1),
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return a.contextNames(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, path, err := a.loadConfig()
			if err != nil {
				return err
			}
			i := slices.IndexFunc(cfg.Contexts, func(e contextEntry) bool { return e.Name == args[0] })
			if i < 0 {
				return fmt.Errorf("no context %q", args[0])
			}
			cfg.Contexts = slices.Delete(cfg.Contexts, i, i+1)
			if cfg.CurrentContext == args[0] {
				cfg.CurrentContext = ""
			}
			if err := a.saveConfig(cfg, path); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "context %q deleted\n", args[0])
			return nil
		},
	})
	return cmd
}

func (a *app) contextNames() []string {
	cfg, _, err := a.loadConfig()
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range cfg.Contexts {
		out = append(out, e.Name)
	}
	return out
}
