package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/javajson"
	"github.com/connectd/connectd/internal/javaoffsets"
	"github.com/connectd/connectd/internal/storage"
)

// exportDoc is the file of `offsets export` and `offsets import -f`.
type exportDoc struct {
	// Cluster is the URL of the worker the connectors were read from.
	Cluster    string            `json:"cluster"`
	ExportedAt string            `json:"exported_at,omitempty"`
	Connectors []exportConnector `json:"connectors"`
}

type exportConnector struct {
	Name    string                   `json:"name"`
	Type    string                   `json:"type,omitempty"`
	State   string                   `json:"state,omitempty"`
	Config  map[string]string        `json:"config"`
	Offsets []client.ConnectorOffset `json:"offsets"`
}

func (a *app) offsetsExportCmd() *cobra.Command {
	var all bool
	var file string
	cmd := &cobra.Command{
		Use:   "export NAME...|--all [--to-file FILE]",
		Short: "Write connectors' config and offsets as JSON, for offsets import",
		Long: `Write connectors' config and offsets, with the URL of the cluster, as one JSON
document (stdout, or --to-file):

  {"cluster":"http://old:8083","exported_at":"...","connectors":[
    {"name":"orders-source","type":"source","state":"STOPPED","config":{...},
     "offsets":[{"partition":{...},"offset":{...}}]}]}

Stop the connectors first for an exact snapshot: a running connector's offsets
move on.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return errors.New("offsets export needs connector names, or --all")
			}
			return nil
		},
		ValidArgsFunction: a.completeConnectors,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			doc, err := a.export(cmd.Context(), c, args, all)
			if err != nil {
				return err
			}
			if file == "" {
				return writeJSON(a.stdout, doc)
			}
			var b bytes.Buffer
			if err := writeJSON(&b, doc); err != nil {
				return err
			}
			if err := os.WriteFile(file, b.Bytes(), 0o600); err != nil {
				return err
			}
			fmt.Fprintf(a.stderr, "exported %d connector%s to %s\n", len(doc.Connectors), plural(len(doc.Connectors)), file)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "export every connector")
	cmd.Flags().StringVar(&file, "to-file", "", "write the JSON here instead of stdout")
	return cmd
}

func (a *app) export(ctx context.Context, c *client.Client, names []string, all bool) (*exportDoc, error) {
	if all {
		var err error
		if names, err = c.Connectors(ctx); err != nil {
			return nil, err
		}
		slices.Sort(names)
	}
	doc := &exportDoc{Cluster: c.BaseURL(), ExportedAt: a.now().UTC().Format("2006-01-02T15:04:05.000Z07:00"), Connectors: []exportConnector{}}
	for _, n := range names {
		a.target = n
		info, err := c.Connector(ctx, n)
		if err != nil {
			return nil, err
		}
		e := exportConnector{Name: n, Type: info.Type, Config: info.Config}
		if st, err := c.Status(ctx, n); err == nil {
			e.State = st.Connector.State
		}
		if e.State != client.StateStopped && e.State != "" {
			fmt.Fprintf(a.stderr, "warning: connector %s is %s: its offsets keep moving after this export\n", n, e.State)
		}
		if e.Offsets, err = c.Offsets(ctx, n); err != nil {
			return nil, err
		}
		e.Offsets = nonNil(e.Offsets)
		doc.Connectors = append(doc.Connectors, e)
	}
	return doc, nil
}

func (a *app) offsetsImportCmd() *cobra.Command {
	var cf changeFlags
	var file, javaFile string
	var only []string
	cmd := &cobra.Command{
		Use:   "import (-f FILE | --java-standalone-file FILE) [--connector NAME]...",
		Short: "Write offsets from an export, or from Apache Kafka Connect's standalone offsets file",
		Long: `Write offsets into this cluster.

-f FILE takes a file of "connectctl offsets export". A connector missing here
is created STOPPED with the exported config and given the exported offsets
(then started with --resume); an existing one keeps its config and gets the
exported offsets exactly, by the usual safe change (diff, stop if it runs,
verify, resume, history).

--java-standalone-file FILE takes the offsets file of an Apache Kafka Connect
standalone worker (offset.storage.file.filename, a Java-serialized map), so
that its source connectors move over with their positions. The connectors
must exist here already (create them with connectctl apply -f); each one's
offsets for the partitions in the file are replaced by the file's, by the
usual safe change.

--connector limits the import to some connectors.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case (file == "") == (javaFile == ""):
				return errors.New("offsets import needs -f FILE or --java-standalone-file FILE")
			case javaFile != "":
				return a.importJava(cmd.Context(), javaFile, only, &cf)
			}
			return a.importExport(cmd.Context(), file, only, &cf)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", `a file of "connectctl offsets export" (- for stdin)`)
	cmd.Flags().StringVar(&javaFile, "java-standalone-file", "", "an Apache Kafka Connect standalone worker's offsets file")
	cmd.Flags().StringArrayVar(&only, "connector", nil, "import only this connector; repeatable")
	cf.add(cmd)
	return cmd
}

// readExport reads an export file ("-" is stdin).
func (a *app) readExport(path string) (*exportDoc, error) {
	data, err := a.readInput(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc exportDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf(`%s: want a file of "connectctl offsets export": %v`, path, err)
	}
	if doc.Connectors == nil {
		return nil, fmt.Errorf(`%s: no "connectors" list`, path)
	}
	for i, c := range doc.Connectors {
		if c.Name == "" {
			return nil, fmt.Errorf("%s: connectors[%d] has no name", path, i)
		}
	}
	return &doc, nil
}

func selected(only []string, name string) bool { return len(only) == 0 || slices.Contains(only, name) }

// importExport writes an export file's connectors and offsets.
func (a *app) importExport(ctx context.Context, path string, only []string, cf *changeFlags) error {
	doc, err := a.readExport(path)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	n := 0
	for _, e := range doc.Connectors {
		if !selected(only, e.Name) {
			continue
		}
		n++
		a.target = e.Name
		b, err := a.restBackend(ctx, c, e.Name)
		if client.IsNotFound(err) {
			if cf.dryRun {
				fmt.Fprintf(a.stdout, "connector %s would be created STOPPED with %d offset%s (dry run)\n", e.Name, len(e.Offsets), plural(len(e.Offsets)))
				continue
			}
			state, err := a.createWithOffsets(ctx, c, e.Name, e.Config, e.Offsets, cf.resume, cf.wait)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "connector %s created with %d offset%s: %s\n", e.Name, len(e.Offsets), plural(len(e.Offsets)), state)
			continue
		}
		if err != nil {
			return err
		}
		want := e.Offsets
		if b.typ == client.TypeSink {
			want = make([]client.ConnectorOffset, len(e.Offsets))
			for i, o := range e.Offsets {
				want[i] = sinkForm(o)
			}
		}
		if _, err := a.change(ctx, b, plan{name: e.Name, op: "import", target: func([]client.ConnectorOffset) ([]client.ConnectorOffset, error) {
			return want, nil
		}}, cf); err != nil {
			return err
		}
	}
	if n == 0 {
		return fmt.Errorf("%s holds none of the connectors asked for", path)
	}
	return nil
}

// importJava writes the offsets of an Apache Kafka Connect standalone
// offsets file into this cluster, connector by connector.
func (a *app) importJava(ctx context.Context, path string, only []string, cf *changeFlags) error {
	records, err := javaoffsets.ReadFile(path)
	if err != nil {
		return err
	}
	byConnector := map[string][]client.ConnectorOffset{}
	skipped := 0
	for _, r := range records {
		name, partition, err := storage.DecodeOffsetKey(r.Key)
		if errors.Is(err, storage.ErrNullPartition) {
			continue // Kafka skips these silently too
		}
		if err != nil {
			fmt.Fprintf(a.stderr, "warning: skipping the entry with key %q: %v\n", r.Key, err)
			skipped++
			continue
		}
		o := client.ConnectorOffset{Partition: partition}
		if r.Value != nil {
			v, err := javajson.Unmarshal(r.Value)
			m, ok := v.(map[string]any)
			if err != nil || !ok {
				fmt.Fprintf(a.stderr, "warning: skipping the offset of %s %s: not a JSON object: %q\n", name, mapText(partition), r.Value)
				skipped++
				continue
			}
			o.Offset = m
		}
		byConnector[name] = append(byConnector[name], o)
	}
	var names []string
	for n := range byConnector {
		if selected(only, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		if len(only) > 0 {
			return fmt.Errorf("%s holds no offsets of %s", path, strings.Join(only, ", "))
		}
		return fmt.Errorf("%s holds no offsets", path)
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	// Every connector must exist before anything changes.
	backends := map[string]*backend{}
	var missing []string
	for _, n := range names {
		b, err := a.restBackend(ctx, c, n)
		if client.IsNotFound(err) {
			missing = append(missing, n)
			continue
		}
		if err != nil {
			return err
		}
		backends[n] = b
	}
	if len(missing) > 0 {
		return withHint(fmt.Errorf("%s holds offsets of connectors that do not exist on %s: %s", path, c.BaseURL(), strings.Join(missing, ", ")),
			"create them first, stopped, from their Java config files: add initial_state STOPPED, or run connectctl apply -f FILE then connectctl stop NAME")
	}
	if !a.structured() {
		fmt.Fprintf(a.stdout, "%s: offsets of %d connector%s (%s)\n", path, len(names), plural(len(names)), strings.Join(names, ", "))
	}
	for _, n := range names {
		changes := byConnector[n]
		b := backends[n]
		if _, err := a.change(ctx, b, plan{name: n, op: "import", target: func(before []client.ConnectorOffset) ([]client.ConnectorOffset, error) {
			return merge(before, changes), nil
		}}, cf); err != nil {
			return err
		}
	}
	if skipped > 0 {
		fmt.Fprintf(a.stderr, "warning: %d entr%s of %s skipped\n", skipped, map[bool]string{true: "y", false: "ies"}[skipped == 1], path)
	}
	return nil
}
