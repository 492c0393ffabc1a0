package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

// Connector is Confluent's JdbcSourceConnector: it lists the tables
// its settings select, splits them among its tasks, and lists them again
// every table.poll.interval.ms, asking for new task configs when the set
// changed. With "query" it makes one task running the query.
type Connector struct {
	mu     sync.Mutex
	props  map[string]string
	cfg    *srcConfig
	d      *jdbcdb.Dialect
	tables []jdbcdb.TableID

	log  *slog.Logger
	stop chan struct{}
	done chan struct{}
	// listings counts the monitor's listings of the tables.
	listings atomic.Int64
}

var (
	_ connect.SourceConnector     = (*Connector)(nil)
	_ connect.SourceOffsetAlterer = (*Connector)(nil)
	_ connect.Validator           = (*Connector)(nil)
)

// Version implements connect.Connector.
func (c *Connector) Version() string { return Version }

// Config implements connect.Connector.
func (c *Connector) Config() *connect.ConfigDef { return ConfigDef() }

// TaskClass implements connect.Connector.
func (c *Connector) TaskClass() string { return TaskClass }

// NewTask implements connect.SourceConnector.
func (c *Connector) NewTask() connect.SourceTask { return NewTask() }

// logger is the logger Start was given, or slog.Default() before Start.
func (c *Connector) logger() *slog.Logger {
	if c.log == nil {
		return slog.Default()
	}
	return c.log
}

// Start checks the config, connects, lists the tables and starts watching
// them.
func (c *Connector) Start(ctx connect.ConnectorContext, config map[string]string) error {
	c.log = ctx.Logger()
	cfg, err := parseSourceConfig(config)
	if err != nil {
		return fmt.Errorf("Couldn't start JdbcSourceConnector due to configuration error: %w", err)
	}
	d, _, err := jdbcdb.ParseURL(cfg.url, cfg.user, cfg.password)
	if err != nil {
		return err
	}
	conn, err := srcConnect(context.Background(), cfg, c.log)
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.props, c.cfg, c.d, c.tables = maps.Clone(config), cfg, d, nil
	c.mu.Unlock()
	if cfg.query != "" {
		conn.release()
		return nil
	}
	tables, err := c.listTables(conn)
	if err != nil {
		conn.close()
		return fmt.Errorf("listing the tables of %s: %w", connect.RedactURL(cfg.url), err)
	}
	// The tasks start next: this connection goes to one of them, and
	// the monitor opens its own at its first listing.
	conn.release()
	c.mu.Lock()
	c.tables = tables
	c.mu.Unlock()
	c.log.Info("JDBC source: tables to read", "tables", srcFormatTables(d, tables))
	c.stop, c.done = make(chan struct{}), make(chan struct{})
	go c.monitor(ctx, c.stop, c.done)
	return nil
}

func (c *Connector) listTables(conn *srcConn) ([]jdbcdb.TableID, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	all, err := conn.tables(ctx, c.cfg.catalogPattern, c.cfg.schemaPattern, c.cfg.tableTypes)
	if err != nil {
		return nil, err
	}
	return srcSelectTables(c.cfg, c.d, all), nil
}

// monitor lists the tables again every table.poll.interval.ms, as
// Confluent's TableMonitorThread, and asks for new task configs when they
// changed. A failed listing is logged and tried again at the next tick.
func (c *Connector) monitor(ctx connect.ConnectorContext, stop, done chan struct{}) {
	defer close(done)
	var conn *srcConn
	defer func() { conn.close() }()
	interval := c.cfg.tablePoll
	if interval <= 0 {
		interval = time.Second
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		if conn == nil {
			cctx, cancel := context.WithCancel(context.Background())
			go func() {
				select {
				case <-stop:
					cancel()
				case <-cctx.Done():
				}
			}()
			var err error
			conn, err = srcOpen(cctx, c.cfg.url, c.cfg.user, c.cfg.password)
			cancel()
			if err != nil {
				c.log.Error("JDBC source: unable to connect to list the tables; trying again at the next table poll", "error", err)
				conn = nil
				continue
			}
		}
		tables, err := c.listTables(conn)
		c.listings.Add(1)
		if err != nil {
			c.log.Error("JDBC source: error while trying to get updated table list, ignoring and waiting for next table poll interval", "error", err)
			conn.close()
			conn = nil
			continue
		}
		c.mu.Lock()
		changed := !slices.Equal(tables, c.tables)
		if changed {
			c.tables = tables
		}
		c.mu.Unlock()
		if changed {
			c.log.Info("JDBC source: the tables changed; reconfiguring the tasks", "tables", srcFormatTables(c.d, tables))
			if ctx != nil {
				ctx.RequestTaskReconfiguration()
			}
		}
	}
}

// TaskConfigs splits the tables among up to maxTasks tasks, as Confluent's
// ConnectorUtils.groupPartitions does (contiguous groups, the first ones
// one table larger); with a query, one task.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg == nil {
		return nil, errors.New("JdbcSourceConnector is not started")
	}
	task := func(tables string) map[string]string {
		p := maps.Clone(c.props)
		p[srcTablesConfig] = tables
		p[srcTablesFetched] = "true"
		return p
	}
	if c.cfg.query != "" {
		return []map[string]string{task("")}, nil
	}
	if err := srcDuplicateNames(c.cfg, c.tables); err != nil {
		return nil, err
	}
	if len(c.tables) == 0 {
		c.logger().Warn("JDBC source: no tables were found so there's no work to be done.")
		return []map[string]string{task("")}, nil
	}
	groups := min(len(c.tables), max(maxTasks, 1))
	out := make([]map[string]string, 0, groups)
	per, extra := len(c.tables)/groups, len(c.tables)%groups
	start := 0
	for g := range groups {
		n := per
		if g < extra {
			n++
		}
		out = append(out, task(srcFormatTables(c.d, c.tables[start:start+n])))
		start += n
	}
	return out, nil
}

// srcDuplicateNames refuses tables sharing an unqualified name: they would
// write to one topic (Confluent's check and message).
func srcDuplicateNames(cfg *srcConfig, tables []jdbcdb.TableID) error {
	byName := map[string][]string{}
	var dups []string
	for _, t := range tables {
		byName[t.Table] = append(byName[t.Table], t.String())
		if len(byName[t.Table]) == 2 {
			dups = append(dups, t.Table)
		}
	}
	if len(dups) == 0 {
		return nil
	}
	var key string
	switch {
	case len(cfg.whitelist) > 0:
		key = "'" + srcTableWhitelist + "'"
	case len(cfg.blacklist) > 0:
		key = "'" + srcTableBlacklist + "'"
	case len(cfg.include) > 0:
		key = "'" + srcTableIncludeList + "'"
	default:
		key = "'" + srcTableWhitelist + "' or '" + srcTableBlacklist + "'"
	}
	var groups []string
	for _, n := range dups {
		groups = append(groups, "["+strings.Join(byName[n], ", ")+"]")
	}
	return fmt.Errorf("The connector uses the unqualified table name as the topic name and has detected duplicate "+
		"unqualified table names. This could lead to mixed data types in the topic and downstream processing errors. "+
		"To prevent such processing errors, the JDBC Source connector fails to start when it detects duplicate table "+
		"name configurations. Update the connector's %s config to include exactly one table in each of the tables "+
		"listed below.\n\t%s", key, strings.Join(groups, ", "))
}

// Stop stops watching the tables.
func (c *Connector) Stop() error {
	if c.stop != nil {
		close(c.stop)
		<-c.done
		c.stop, c.done = nil, nil
	}
	return nil
}

// Validate checks what spans several keys or needs the database, as
// Confluent's JdbcSourceConnectorValidation: the mode's columns, the table
// settings, that the database answers, that the query is valid, and that
// the selected tables and their columns exist.
func (c *Connector) Validate(config map[string]string) map[string][]string {
	for _, v := range ConfigDef().Validate(config) {
		if len(v.Errors) > 0 {
			return nil // reported per key by the runtime
		}
	}
	cfg, err := parseSourceConfig(config)
	if err != nil {
		var ce *connect.ConfigError
		if errors.As(err, &ce) && cfg == nil {
			return map[string][]string{ce.Name: {ce.Message}}
		}
	}
	if cfg == nil {
		return nil
	}
	if errs := cfg.check(); len(errs) > 0 {
		return errs
	}
	errs := map[string][]string{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := srcOpen(ctx, cfg.url, cfg.user, cfg.password)
	if err != nil {
		errs[srcConnectionURL] = []string{"Could not connect to database. " + err.Error()}
		return errs
	}
	defer conn.release()
	if cfg.query != "" {
		if err := conn.prepare(ctx, cfg.query); err != nil {
			errs[srcQuery] = []string{"The configured query is not valid and has database/connection errors. Please " +
				"provide the correct query by validating the query syntax and the existing table/column names with the " +
				"database being connected: " + err.Error()}
		}
		return errs
	}
	all, err := conn.tables(ctx, cfg.catalogPattern, cfg.schemaPattern, cfg.tableTypes)
	if err != nil {
		errs[srcConnectionURL] = []string{"Could not list the tables of the database: " + err.Error()}
		return errs
	}
	d := conn.d
	ids := make([]jdbcdb.TableID, len(all))
	for i, t := range all {
		ids[i] = t.id
	}
	for _, e := range cfg.whitelist {
		if !slices.ContainsFunc(ids, func(id jdbcdb.TableID) bool { return srcTableMatches(d, e, id) }) {
			errs[srcTableWhitelist] = append(errs[srcTableWhitelist], fmt.Sprintf("Table %s was not found in the "+
				"database among the tables of types %s the connector can see", e, strings.Join(cfg.tableTypes, ", ")))
		}
	}
	for i, re := range cfg.include {
		if !slices.ContainsFunc(ids, func(id jdbcdb.TableID) bool {
			return re.MatchString(id.String()) || re.MatchString(d.QuoteTable(id)) || re.MatchString(id.Table)
		}) {
			entry := srcNonEmpty(strings.Split(config[srcTableIncludeList], ","))[i]
			errs[srcTableIncludeList] = append(errs[srcTableIncludeList], fmt.Sprintf("No table of the database "+
				"matches %s among the tables of types %s the connector can see", entry, strings.Join(cfg.tableTypes, ", ")))
		}
	}
	selected := srcSelectTables(cfg, d, all)
	if err := srcDuplicateNames(cfg, selected); err != nil {
		key := srcTableWhitelist
		switch {
		case len(cfg.blacklist) > 0:
			key = srcTableBlacklist
		case len(cfg.include) > 0:
			key = srcTableIncludeList
		}
		errs[key] = append(errs[key], err.Error())
	}
	if cfg.mode != srcModeBulk {
		seen := map[string]bool{}
		for _, t := range selected {
			cols, err := conn.columns(ctx, t)
			if err != nil {
				errs[srcConnectionURL] = append(errs[srcConnectionURL], fmt.Sprintf("Could not read the columns of table %s: %v", t, err))
				break
			}
			inc := cfg.incrementing
			for _, p := range srcCheckColumns(d, cfg, t.String(), cols, &inc) {
				if !seen[p.key+p.msg] {
					seen[p.key+p.msg] = true
					errs[p.key] = append(errs[p.key], p.msg)
				}
			}
		}
	}
	return errs
}

// prepare checks that the database accepts a query, without running it.
func (c *srcConn) prepare(ctx context.Context, q string) error {
	if c.pg != nil {
		_, err := c.pg.Prepare(ctx, "", q)
		return err
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	return st.Close()
}

// AlterOffsets checks offsets written through the REST API: partitions of
// Confluent's shapes, offsets with Confluent's keys holding integers (it
// casts them to Long), and in incrementing (timestamp) mode an incrementing
// (timestamp) value. A null offset (a reset) is always allowed.
func (c *Connector) AlterOffsets(config map[string]string, offsets []connect.SourceOffset) (bool, error) {
	mode := ""
	if pc, err := ConfigDef().Parse(config); err == nil {
		mode = pc.String(srcMode)
	}
	for _, o := range offsets {
		if o.Partition == nil {
			return false, errors.New("Partition objects cannot be null")
		}
		if err := srcCheckPartition(o.Partition); err != nil {
			return false, err
		}
		if o.Offset == nil {
			continue
		}
		if len(o.Offset) == 0 {
			return false, fmt.Errorf("Offset objects should either be null or contain at least one of the keys '%s', '%s' "+
				"(with '%s')", OffsetIncrementing, OffsetTimestamp, OffsetTimestampNanos)
		}
		for k := range o.Offset {
			switch k {
			case OffsetIncrementing, OffsetTimestamp, OffsetTimestampNanos:
			default:
				return false, fmt.Errorf("Unknown key '%s' in the offset of partition %v: the JDBC source's offsets have "+
					"the keys '%s', '%s' and '%s'", k, o.Partition, OffsetIncrementing, OffsetTimestamp,
					OffsetTimestampNanos)
			}
		}
		for _, k := range []string{OffsetIncrementing, OffsetTimestamp, OffsetTimestampNanos} {
			if v, ok := o.Offset[k]; ok {
				if v == nil {
					return false, fmt.Errorf("The value for the '%s' key in the offset is expected to be a Long value, got null", k)
				}
				if _, err := srcOffsetLong(k, v); err != nil {
					return false, err
				}
			}
		}
		if _, ok := o.Offset[OffsetTimestampNanos]; ok {
			if _, ok := o.Offset[OffsetTimestamp]; !ok {
				return false, fmt.Errorf("The offset has '%s' without '%s'", OffsetTimestampNanos, OffsetTimestamp)
			}
		}
		if _, err := srcOffsetFromMap(o.Offset); err != nil {
			return false, err
		}
		_, hasInc := o.Offset[OffsetIncrementing]
		_, hasTS := o.Offset[OffsetTimestamp]
		switch {
		case mode == srcModeIncrementing && !hasInc:
			return false, fmt.Errorf("The connector's mode is '%s': its offsets need the key '%s'", mode, OffsetIncrementing)
		case mode == srcModeTimestamp && !hasTS:
			return false, fmt.Errorf("The connector's mode is '%s': its offsets need the key '%s'", mode, OffsetTimestamp)
		case mode == srcModeBulk:
			return false, errors.New("The connector's mode is 'bulk', which reads whole tables and keeps no offsets: only " +
				"null offsets can be written")
		}
	}
	return true, nil
}

func srcCheckPartition(p map[string]any) error {
	if q, ok := p[PartitionQueryKey]; ok {
		if len(p) != 1 || q != PartitionQueryValue {
			return fmt.Errorf(`The partition of a query is {"%s":"%s"}; got %v`, PartitionQueryKey, PartitionQueryValue, p)
		}
		return nil
	}
	t, ok := p[PartitionTableKey].(string)
	if !ok || t == "" {
		return fmt.Errorf(`Partition objects should contain the key '%s' with a table name (as in {"%s":"%s","%s":"schema.table"}) `+
			`or be {"%s":"%s"}; got %v`, PartitionTableKey, PartitionProtocolKey, PartitionProtocolV1,
			PartitionTableKey, PartitionQueryKey, PartitionQueryValue, p)
	}
	for k, v := range p {
		switch k {
		case PartitionTableKey:
		case PartitionProtocolKey:
			if v != PartitionProtocolV1 {
				return fmt.Errorf(`The '%s' of a partition must be the string "%s"; got %v`, PartitionProtocolKey, PartitionProtocolV1, v)
			}
		default:
			return fmt.Errorf("Unknown key '%s' in partition %v", k, p)
		}
	}
	return nil
}

// ExactlyOnceSupport implements connect.ExactlyOnceSource: a query
// resumed from an incrementing column's offset (with or without a
// timestamp) reads each row once; a bulk query reads the whole table
// again on each pass, and a timestamp alone misses or repeats rows that
// share one, so exactly-once is refused for them (as Aiven's JDBC source
// supports it in the incrementing modes only).
func (c *Connector) ExactlyOnceSupport(config map[string]string) connect.ExactlyOnceSupport {
	cfg, err := parseSourceConfig(config)
	if err != nil {
		return connect.ExactlyOnceUnsupported
	}
	switch cfg.mode {
	case srcModeIncrementing, srcModeTimestampIncrementing:
		return connect.ExactlyOnceSupported
	}
	return connect.ExactlyOnceUnsupported
}

// CanDefineTransactionBoundaries implements connect.ExactlyOnceSource.
func (c *Connector) CanDefineTransactionBoundaries(map[string]string) bool { return false }
