package connectd

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/internal/worker"
	"github.com/spf13/cobra"
)

// configCmd lists the worker keys from the spec the workers parse them
// with, so that what it prints is what they read.
func configCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "List the worker keys: the mode each is for, its type, its default and what it does",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var b strings.Builder
			for _, k := range worker.Keys() {
				fmt.Fprintf(&b, "%s\n  mode: %s", k.Name, k.Modes)
				if k.Type != "" {
					fmt.Fprintf(&b, "; type: %s", k.Type)
				}
				switch {
				case k.Required:
					b.WriteString("; required")
				case k.Default != nil:
					fmt.Fprintf(&b, "; default: %q", *k.Default)
				case k.Type != "":
					b.WriteString("; default: none")
				}
				fmt.Fprintf(&b, "\n  %s\n\n", k.Doc)
			}
			_, err := fmt.Fprint(cmd.OutOrStdout(), b.String())
			return err
		},
	}
}
