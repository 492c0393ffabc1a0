package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/connectd/connectd/internal/console"
)

// `connectctl console` serves the web console that connectd serves at /ui,
// for any Kafka Connect worker (connectd, or Apache's): the page and its
// consumer groups endpoints locally, everything else passed to the worker
// with connectctl's credentials and TLS settings.

func (a *app) consoleCmd() *cobra.Command {
	var kf kafkaFlags
	var listen string
	cmd := &cobra.Command{
		Use:   "console [--listen 127.0.0.1:8084]",
		Short: "Serve the web console for the worker (any Kafka Connect worker) on a local address",
		Long: `Serve the web console for the worker connectctl talks to (--url, the context, ...),
connectd or Apache Kafka Connect, at http://ADDRESS/ui/: connectors, their
offsets changed through the safe flow, new connectors validated as they are
typed, and with Kafka's address (--bootstrap-server or the context's) the
consumer groups. Requests from other origins are refused, since the worker's
credentials go with every request. Ctrl-C stops it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			var admin func() (*kadm.Client, func(), error)
			if a.hasBootstrap(&kf) {
				admin = func() (*kadm.Client, func(), error) { return a.admin(&kf) }
			}
			ui := console.New(console.Options{Admin: admin, Target: c.BaseURL()})
			mux := http.NewServeMux()
			mux.Handle("/ui", ui)
			mux.Handle("/ui/", ui)
			mux.Handle("/", c.Proxy())
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			srv := &http.Server{Handler: sameOrigin(mux), ReadHeaderTimeout: 10 * time.Second}
			fmt.Fprintf(a.stdout, "the console of %s is at http://%s/ui/ (Ctrl-C stops it)\n", c.BaseURL(), ln.Addr())
			go func() {
				<-cmd.Context().Done()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(ctx)
			}()
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8084", "the address to serve the console on")
	kf.addConn(cmd)
	return cmd
}

// sameOrigin refuses what a page of another site could send: a request
// whose Origin is not this server, and a body that is not JSON (a form
// posts without asking). The worker's credentials go with what passes.
func sameOrigin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			if u, err := url.Parse(o); err != nil || u.Host != r.Host {
				refuse(w, http.StatusForbidden, "requests from another origin ("+o+") are refused")
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && r.ContentLength != 0 &&
			!strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			refuse(w, http.StatusUnsupportedMediaType, "request bodies must be JSON (Content-Type: application/json)")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, status int, msg string) {
	body, _ := json.Marshal(map[string]any{"error_code": status, "message": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
