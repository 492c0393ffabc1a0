package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/connectd/connectd/client"
)

// Kafka Connect keeps a deleted connector's offsets: a connector created
// again under the same name silently resumes from them, the most common
// offsets surprise in its issue trackers. `delete --reset-offsets` stops
// the connector, deletes its offsets and then the connector, keeping its
// config and offsets in the history so that `offsets undo` creates it
// again as it was. A plain delete says that the offsets stay.

func (a *app) deleteCmd() *cobra.Command {
	var reset, yes, dryRun bool
	cmd := &cobra.Command{
		Use:   "delete NAME [--reset-offsets]",
		Short: "Delete a connector; with --reset-offsets its offsets too (undo creates it again)",
		Long: `Delete a connector. Kafka Connect keeps a deleted connector's offsets, so a
connector created again under the same name resumes from them.

With --reset-offsets, connectctl stops the connector (asking first on a
terminal; --yes to skip the question), deletes its offsets (a source's
records in the offsets topic, a sink's consumer group offsets), reads them
back to check, and deletes the connector. Its config, state and offsets
are kept in the history first: "connectctl offsets undo NAME" creates it
again with them.`,
		Args:              a.nameArg,
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !reset {
				if yes || dryRun {
					return errors.New("--yes and --dry-run go with --reset-offsets")
				}
				return a.deleteKeepingOffsets(cmd.Context(), args[0])
			}
			return a.deleteWithOffsets(cmd.Context(), args[0], &changeFlags{yes: yes, dryRun: dryRun, wait: a.timeout})
		},
	}
	cmd.Flags().BoolVar(&reset, "reset-offsets", false, "delete the connector's offsets too (kept in the history for undo)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "with --reset-offsets, stop a running connector without asking")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "with --reset-offsets, show what would be deleted and change nothing")
	return cmd
}

// deleteKeepingOffsets deletes a connector, and warns that its offsets
// stay, saying how to remove them.
func (a *app) deleteKeepingOffsets(ctx context.Context, name string) error {
	c, err := a.client()
	if err != nil {
		return err
	}
	// Read before: afterwards the REST API no longer knows the connector.
	info, infoErr := c.Connector(ctx, name)
	offsets, offErr := c.Offsets(ctx, name)
	if err := c.Delete(ctx, name); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(a.stdout, "connector %s deleted\n", name); err != nil {
		return err
	}
	if infoErr != nil || offErr != nil || len(offsets) == 0 {
		return nil // nothing known to stay (a worker before 3.6 has no offsets API)
	}
	how := "connectctl offsets reset " + name + " --direct"
	if info.Type == client.TypeSink {
		group := info.Config["consumer.override.group.id"]
		if group == "" {
			group = "connect-" + name
		}
		how = "connectctl groups delete " + group
	}
	fmt.Fprintf(a.stderr, "warning: the offsets of %s stay (%d partition%s): a connector created again as %s resumes from them\n",
		name, len(offsets), plural(len(offsets)), name)
	fmt.Fprintf(a.stderr, "hint: remove them with: %s; next time, connectctl delete %s --reset-offsets deletes both\n", how, name)
	return nil
}

// deleteWithOffsets stops a connector, saves its config and offsets,
// deletes its offsets, verifies, and deletes it.
func (a *app) deleteWithOffsets(ctx context.Context, name string, cf *changeFlags) error {
	a.target = name
	c, err := a.client()
	if err != nil {
		return err
	}
	b, err := a.restBackend(ctx, c, name)
	if err != nil {
		return err
	}
	w := a.stdout
	state, err := b.state(ctx)
	if err != nil {
		return err
	}
	before, err := b.read(ctx)
	if err != nil {
		return err
	}
	changed, _ := offsetDiff(before, nil)
	if len(changed) > 0 {
		writeDiff(w, a.out(), "offsets of "+name, changed, 0)
	} else {
		fmt.Fprintf(w, "connector %s has no offsets\n", name)
	}
	if cf.dryRun {
		if state != client.StateStopped {
			fmt.Fprintf(w, "connector %s is %s: it would be stopped first\n", name, state)
		}
		fmt.Fprintf(w, "connector %s (%s) would be deleted, its config and offsets saved for connectctl offsets undo %s\n", name, b.typ, name)
		fmt.Fprintln(w, "dry run: nothing changed")
		return nil
	}
	if state != client.StateStopped {
		verb := "Stop it, delete its offsets and delete it?"
		if err := a.confirm(cf.yes, fmt.Sprintf("connector %s is %s; its offsets can only be deleted once it is stopped", name, state), verb,
			fmt.Sprintf("pass --yes to let connectctl stop it, or stop it first: connectctl stop %s", name)); err != nil {
			return err
		}
		if err := stopAndWait(ctx, c, name, cf.wait); err != nil {
			return err
		}
		fmt.Fprintf(w, "connector %s stopped\n", name)
		// What it committed until it stopped is what is deleted.
		if before, err = b.read(ctx); err != nil {
			return err
		}
	}
	if _, err := a.saveHistory(historyEntry{Connector: name, Cluster: b.cluster, Operation: "delete", Offsets: before,
		Config: b.config, State: state}); err != nil {
		return err
	}
	if len(before) > 0 {
		if _, err := b.write(ctx, nil, true, cf); err != nil {
			return withHint(err, fmt.Sprintf("connector %s was left STOPPED with its offsets", name))
		}
		if err := a.verify(ctx, b.read, nil, cf.wait); err != nil {
			return withHint(err, fmt.Sprintf("connector %s was left STOPPED; put the offsets back with: connectctl offsets undo %s", name, name))
		}
		fmt.Fprintf(w, "offsets of %s deleted (%d partition%s) and verified\n", name, len(before), plural(len(before)))
	}
	if err := c.Delete(ctx, name); err != nil {
		return withHint(err, fmt.Sprintf("connector %s was left STOPPED without offsets; connectctl offsets undo %s puts them back", name, name))
	}
	fmt.Fprintf(w, "connector %s deleted\n", name)
	fmt.Fprintf(w, "its config and offsets are saved; create it again as it was with: connectctl offsets undo %s\n", name)
	return nil
}

// recreate creates a connector deleted by `delete --reset-offsets` again,
// STOPPED, with the config the history kept; undo then gives it its
// offsets and its state.
func (a *app) recreate(ctx context.Context, c *client.Client, e *historyEntry) error {
	if e.Config == nil {
		return fmt.Errorf("the history entry %s holds no config to create connector %s again with", e.path, e.Connector)
	}
	if _, err := c.CreateConnector(ctx, e.Connector, e.Config, client.InitialStopped, nil); err != nil {
		return fmt.Errorf("creating connector %s again: %w", e.Connector, err)
	}
	fmt.Fprintf(a.stdout, "connector %s created again, STOPPED, with its saved config\n", e.Connector)
	return nil
}
