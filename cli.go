package connectd

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/embedded"
	"github.com/connectd/connectd/internal/gcpace"
	"github.com/connectd/connectd/internal/logging"
	"github.com/connectd/connectd/internal/properties"
	"github.com/spf13/cobra"
)

// RunCLI runs the connectd command line on os.Args, as the connectd
// binary does, its workers running plugins. The error is the command's,
// which it has already printed.
func RunCLI(plugins []connect.Plugin) error {
	// Unless GOGC is set: 400 while the live heap is small, lower as it
	// grows (see gcpace).
	if _, set := os.LookupEnv("GOGC"); !set {
		gcpace.Start()
	}
	// The higher target lets the heap grow further; in a container with
	// a memory limit, the collector works harder near it rather than the
	// process being killed.
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		if limit, ok := cgroupMemoryLimit("/sys/fs/cgroup/memory.max"); ok {
			debug.SetMemoryLimit(limit / 10 * 9)
		}
	}
	cmd, stopProfile := Command(plugins)
	err := cmd.Execute()
	stopProfile()
	return err
}

// cgroupMemoryLimit reads a cgroup v2 memory.max file: a number of bytes,
// or "max" for no limit.
func cgroupMemoryLimit(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n > 0
}

// logStopping says, as Kafka's "Kafka Connect stopping" does, that the
// worker begins to stop and why (the signal), so that a stop is never
// silent in the log, however long the tasks take to stop.
func logStopping(ctx context.Context) {
	slog.Info("Kafka Connect stopping", "cause", context.Cause(ctx).Error())
}

// version is connectd's version as the build recorded it: the module
// version (or "(devel)" for a build from a checkout), the commit and
// whether the tree had changes, and the Go release.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev != "" {
		v += " " + rev[:min(len(rev), 12)] + modified
	}
	return v + " " + bi.GoVersion
}

// Command returns connectd's command line, its workers running plugins,
// and the function that ends the CPU profile --cpuprofile started, once
// the command has returned. A program may add its own subcommands.
func Command(plugins []connect.Plugin) (*cobra.Command, func()) {
	var profilePath string
	var profile *os.File
	cmd := &cobra.Command{
		Use:           "connectd",
		Short:         "A Kafka Connect-compatible worker",
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: false,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if profilePath == "" {
				return nil
			}
			f, err := os.Create(profilePath)
			if err != nil {
				return err
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				f.Close()
				return fmt.Errorf("--cpuprofile: %w", err)
			}
			profile = f
			return nil
		},
	}
	// The build's profile-guided optimization reads profiles written this
	// way (bench/pgo.sh makes cmd/connectd/default.pgo from them).
	cmd.PersistentFlags().StringVar(&profilePath, "cpuprofile", "",
		"write a CPU profile (pprof) of the whole run to this file")
	cmd.AddCommand(standaloneCmd(plugins), distributedCmd(plugins), kafkaCmd(), configCmd())
	return cmd, func() {
		if profile != nil {
			pprof.StopCPUProfile()
			profile.Close()
		}
	}
}

func standaloneCmd(plugins []connect.Plugin) *cobra.Command {
	return &cobra.Command{
		Use:   "standalone [worker.properties] [connector.properties|connector.json ...]",
		Short: "Run a standalone worker; without bootstrap.servers it runs its own embedded Kafka broker",
		RunE: func(cmd *cobra.Command, args []string) error {
			props := map[string]string{}
			if len(args) > 0 {
				var err error
				if props, err = properties.ParseConfigFile(args[0]); err != nil {
					return err
				}
				args = args[1:]
			}
			return runWorker(Config{Worker: props, ConnectorFiles: args, Plugins: plugins})
		},
	}
}

func distributedCmd(plugins []connect.Plugin) *cobra.Command {
	return &cobra.Command{
		Use:   "distributed worker.properties",
		Short: "Run a worker of a cluster: workers with the same group.id share connectors through Kafka",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			props, err := properties.ParseConfigFile(args[0])
			if err != nil {
				return err
			}
			return runWorker(Config{Worker: props, Distributed: true, Plugins: plugins})
		},
	}
}

// runWorker runs a worker until SIGINT or SIGTERM, or until it stops of
// itself.
func runWorker(cfg Config) error {
	loggers := logging.NewRegistry(os.Stderr)
	// Plugins log through slog's default logger; route it through the
	// registry so /admin/loggers governs them too.
	slog.SetDefault(slog.New(loggers.Handler()))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, err := start(ctx, cfg, loggers)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		logStopping(ctx)
	case <-w.Done():
	}
	w.Close()
	slog.Info("Kafka Connect stopped")
	return w.Err()
}

func kafkaCmd() *cobra.Command {
	var listen, dataDir string
	var partitions int
	cmd := &cobra.Command{
		Use:   "kafka",
		Short: "Run the embedded Kafka-protocol broker alone",
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := embedded.Start(embedded.Config{Listen: listen, DataDir: dataDir, Partitions: partitions})
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "Kafka broker listening on %s (data in %s)\n", b.Addr(), dataDir)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			<-ctx.Done()
			fmt.Fprintf(os.Stderr, "Kafka broker stopping: %v\n", context.Cause(ctx))
			b.Close()
			fmt.Fprintln(os.Stderr, "Kafka broker stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:9092", "host:port to listen on")
	cmd.Flags().StringVar(&dataDir, "data-dir", "connectd-data/kafka", "directory for the broker's data")
	cmd.Flags().IntVar(&partitions, "partitions", 1, "partitions of automatically created topics")
	return cmd
}
