package source

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// srcConn is one connection of the source (connector or task) to its
// database. PostgreSQL is reached with pgx directly, for its result
// metadata (type modifiers, source columns) and its speed; MySQL, MariaDB
// and SQLite through database/sql.
type srcConn struct {
	d   *jdbcdb.Dialect
	pg  *pgx.Conn
	db  *sql.DB
	key string // URL and credentials, for srcIdle (connKey)

	// mappings caches, per SQL text, the struct mapping of its result.
	mappings map[string]*srcMapping
	// pgNotNull caches attnotnull by table OID and column number.
	pgNotNull map[[2]uint32]bool
}

// srcRows is a metadata query's result.
type srcRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

type srcSQLRows struct{ *sql.Rows }

func (r srcSQLRows) Close() { r.Rows.Close() }

// srcOpen connects once and checks that the database answers. Its error
// names the URL without password. A connection released a moment ago
// with the same URL and credentials is taken instead when it still
// answers.
func srcOpen(ctx context.Context, url, user, password string) (*srcConn, error) {
	d, dsn, err := jdbcdb.ParseURL(url, user, password)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	key := jdbcdb.ConnKey(url, user, password)
	for {
		c, ok := srcIdle.Take(key)
		if !ok {
			break
		}
		if c.ping(ctx) == nil {
			return c, nil
		}
		c.close()
	}
	fail := func(err error) error {
		return fmt.Errorf("Cannot connect to %s: %s", connect.RedactURL(url), jdbcdb.HideSecrets(err.Error(), url, password))
	}
	c := &srcConn{d: d, key: key, mappings: map[string]*srcMapping{}, pgNotNull: map[[2]uint32]bool{}}
	switch d {
	case jdbcdb.PostgreSQL:
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			return nil, fail(err)
		}
		bufferReads(&cfg.Config)
		c.pg, err = pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return nil, fail(err)
		}
		return c, nil
	case jdbcdb.SQLite:
		path := dsn
		if !strings.HasPrefix(path, "file:") && path != ":memory:" {
			if _, err := os.Stat(path); err != nil {
				return nil, fail(errors.New("no such database file"))
			}
		}
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		// Another process writes the file while the task reads it.
		dsn += sep + "_pragma=busy_timeout(10000)"
	}
	c.db, err = sql.Open(d.Driver, dsn)
	if err != nil {
		return nil, fail(err)
	}
	if err := c.db.PingContext(ctx); err != nil {
		c.db.Close()
		return nil, fail(err)
	}
	return c, nil
}

// srcConnect connects as Confluent's CachedConnectionProvider does: up to
// connection.attempts tries, connection.backoff.ms apart, logging each
// failed try to log.
func srcConnect(ctx context.Context, cfg *srcConfig, log *slog.Logger) (*srcConn, error) {
	var err error
	for attempt := 1; ; attempt++ {
		var c *srcConn
		c, err = srcOpen(ctx, cfg.url, cfg.user, cfg.password)
		if err == nil {
			return c, nil
		}
		if attempt >= max(cfg.attempts, 1) || ctx.Err() != nil {
			return nil, err
		}
		log.Info("JDBC source: unable to connect to the database; will try again",
			"attempt", attempt, "of", cfg.attempts, "backoff", cfg.backoff, "error", err)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(cfg.backoff):
		}
	}
}

func (c *srcConn) ping(ctx context.Context) error {
	if c.pg != nil {
		return c.pg.Ping(ctx)
	}
	return c.db.PingContext(ctx)
}

// release hands an idle connection to srcIdle, or closes it when it is
// not idle (a result open, a transaction begun, a broken connection).
// What it learnt of the database is forgotten: the next user may come
// after the tables changed.
func (c *srcConn) release() {
	if c == nil {
		return
	}
	if c.pg != nil && !jdbcdb.PGReadyToHandOn(c.pg) {
		c.close()
		return
	}
	clear(c.mappings)
	clear(c.pgNotNull)
	srcIdle.Put(c.key, c)
}

func (c *srcConn) close() {
	if c == nil {
		return
	}
	if c.pg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.pg.Close(ctx)
		cancel()
	}
	if c.db != nil {
		c.db.Close()
	}
}

// query runs a metadata query.
func (c *srcConn) query(ctx context.Context, q string, args ...any) (srcRows, error) {
	if c.pg != nil {
		return c.pg.Query(ctx, q, args...)
	}
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return srcSQLRows{rows}, nil
}

// open runs a data query and returns its result mapped to a struct named
// name. nullable says, when it knows, whether a column of the result may
// be null (SQLite does not report it). Columns left out of the struct are
// logged to log.
func (c *srcConn) open(ctx context.Context, q string, args []any, name string, cfg *srcConfig,
	nullable func(column string) *bool, log *slog.Logger) (srcResult, *srcMapping, error) {
	if c.pg != nil {
		return c.openPG(ctx, q, args, name, cfg, log)
	}
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	m := c.mappings[q]
	cts, err := rows.ColumnTypes()
	if err != nil {
		rows.Close()
		return nil, nil, err
	}
	if m == nil || !srcSameColumns(m, cts) {
		var fields []srcField
		for i, ct := range cts {
			var null *bool
			if c.d == jdbcdb.SQLite {
				if nullable != nil {
					null = nullable(ct.Name())
				}
			} else if n, ok := ct.Nullable(); ok {
				null = &n
			}
			f, ok := srcSQLField(c.d, ct, null, cfg.numericMapping)
			if !ok {
				srcWarnDropped(log, name, ct.Name(), ct.DatabaseTypeName())
				continue
			}
			f.col = i
			fields = append(fields, f)
		}
		m = newSrcMapping(name, fields)
		m.columns = make([]string, len(cts))
		for i, ct := range cts {
			m.columns[i] = ct.Name() + " " + ct.DatabaseTypeName()
		}
		c.mappings[q] = m
	}
	dests := make([]any, len(cts))
	for i := range dests {
		dests[i] = new(sql.RawBytes)
	}
	for i := range m.fields {
		f := &m.fields[i]
		dests[f.col] = srcSQLDest(c.d, f)
	}
	return &srcSQLResult{d: c.d, rows: rows, dests: dests, m: m, loc: cfg.loc}, m, nil
}

func srcSameColumns(m *srcMapping, cts []*sql.ColumnType) bool {
	if len(m.columns) != len(cts) {
		return false
	}
	for i, ct := range cts {
		if m.columns[i] != ct.Name()+" "+ct.DatabaseTypeName() {
			return false
		}
	}
	return true
}

func (c *srcConn) openPG(ctx context.Context, q string, args []any, name string, cfg *srcConfig, log *slog.Logger) (srcResult, *srcMapping, error) {
	// Preparing first gives the result's columns before the query runs,
	// while the connection is free to look up their nullability.
	sd, err := c.pg.Prepare(ctx, q, q)
	if err != nil {
		return nil, nil, err
	}
	m := c.mappings[q]
	if m == nil || !slices.Equal(m.pgFields, sd.Fields) {
		if err := c.lookupNotNull(ctx, sd.Fields); err != nil {
			return nil, nil, err
		}
		var fields []srcField
		for i, fd := range sd.Fields {
			// As pgjdbc: a column of a table is nullable unless declared
			// NOT NULL; an expression's nullability is unknown, hence
			// optional.
			optional := !c.pgNotNull[[2]uint32{fd.TableOID, uint32(fd.TableAttributeNumber)}]
			f, ok := srcPGField(fd, optional, cfg.numericMapping)
			if !ok {
				srcWarnDropped(log, name, fd.Name, c.pgTypeName(fd.DataTypeOID))
				continue
			}
			f.col = i
			fields = append(fields, f)
		}
		m = newSrcMapping(name, fields)
		m.pgFields = slices.Clone(sd.Fields)
		c.mappings[q] = m
	}
	rows, err := c.pg.Query(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	res := &srcPGResult{rows: rows, dests: make([]any, len(sd.Fields)), fast: make([]bool, len(m.fields)), m: m, loc: cfg.loc}
	fds := rows.FieldDescriptions()
	for i := range m.fields {
		f := &m.fields[i]
		if f.col < len(fds) && srcPGFast(f, fds[f.col].Format) {
			res.fast[i] = true
			if f.kind == srcString && f.strings == nil {
				f.strings = &srcInterner{}
			}
			continue
		}
		res.dests[f.col] = srcPGDest(f)
		res.scan = true
	}
	return res, m, nil
}

// srcStalePlan says whether err is PostgreSQL refusing to run a statement
// prepared before its table's columns changed.
func srcStalePlan(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "0A000" && strings.Contains(pe.Message, "cached plan must not change result type")
}

// unprepare forgets the statement prepared for q, so that the next open
// prepares it again.
func (c *srcConn) unprepare(ctx context.Context, q string) error {
	delete(c.mappings, q)
	if c.pg == nil {
		return nil
	}
	return c.pg.Deallocate(ctx, q)
}

func (c *srcConn) pgTypeName(oid uint32) string {
	if t, ok := c.pg.TypeMap().TypeForOID(oid); ok {
		return t.Name
	}
	return fmt.Sprintf("oid %d", oid)
}

// lookupNotNull reads attnotnull of the table columns among fields not
// looked up yet.
func (c *srcConn) lookupNotNull(ctx context.Context, fields []pgconn.FieldDescription) error {
	var rels []uint32
	for _, fd := range fields {
		if fd.TableOID == 0 {
			continue
		}
		if _, ok := c.pgNotNull[[2]uint32{fd.TableOID, uint32(fd.TableAttributeNumber)}]; !ok && !slices.Contains(rels, fd.TableOID) {
			rels = append(rels, fd.TableOID)
		}
	}
	if len(rels) == 0 {
		return nil
	}
	rows, err := c.pg.Query(ctx, "SELECT attrelid, attnum, attnotnull FROM pg_catalog.pg_attribute WHERE attrelid = ANY($1) AND attnum > 0", rels)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var rel uint32
		var num int16
		var notNull bool
		if err := rows.Scan(&rel, &num, &notNull); err != nil {
			return err
		}
		c.pgNotNull[[2]uint32{rel, uint32(num)}] = notNull
	}
	return rows.Err()
}

// now is the database's current time, as Confluent asks the database
// rather than the worker's clock.
func (c *srcConn) now(ctx context.Context) (time.Time, error) {
	switch c.d {
	case jdbcdb.PostgreSQL:
		var t time.Time
		err := c.pg.QueryRow(ctx, "SELECT CURRENT_TIMESTAMP").Scan(&t)
		return t.UTC(), err
	case jdbcdb.MySQL:
		var t time.Time
		err := c.db.QueryRowContext(ctx, "SELECT UTC_TIMESTAMP(6)").Scan(&t)
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), err
	}
	var s string
	if err := c.db.QueryRowContext(ctx, "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')").Scan(&s); err != nil {
		return time.Time{}, err
	}
	return time.Parse("2006-01-02 15:04:05.999", s)
}

// srcTable is a table found in the database metadata.
type srcTable struct {
	id  jdbcdb.TableID
	typ string // JDBC table type: TABLE, VIEW, SYSTEM TABLE, ...
}

// tables lists the tables of the database whose types are among types,
// narrowed by the catalog and schema patterns (SQL LIKE patterns; nil
// for any), as JDBC's DatabaseMetaData.getTables does, ordered by name.
func (c *srcConn) tables(ctx context.Context, catalogPattern, schemaPattern *string, types []string) ([]srcTable, error) {
	var (
		rows srcRows
		err  error
	)
	pattern := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	switch c.d {
	case jdbcdb.PostgreSQL:
		// The rows and types of information_schema.tables, read from
		// pg_catalog as pgjdbc does: planning that view takes a new
		// backend milliseconds. A partitioned table is "PARTITIONED
		// TABLE" for pgjdbc, not a TABLE (its partitions are).
		rows, err = c.query(ctx, `SELECT current_database()::text, n.nspname::text, c.relname::text,
CASE WHEN c.relkind = 'p' THEN 'PARTITIONED TABLE'
  WHEN n.oid = pg_catalog.pg_my_temp_schema() THEN 'LOCAL TEMPORARY'
  WHEN c.relkind = 'r' THEN 'BASE TABLE' WHEN c.relkind = 'v' THEN 'VIEW' ELSE 'FOREIGN' END
FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'v', 'f', 'p') AND NOT pg_catalog.pg_is_other_temp_schema(n.oid)
  AND (pg_catalog.pg_has_role(c.relowner, 'USAGE')
    OR pg_catalog.has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
    OR pg_catalog.has_any_column_privilege(c.oid, 'SELECT, INSERT, UPDATE, REFERENCES'))
  AND ($1::text IS NULL OR current_database() LIKE $1::text) AND ($2::text IS NULL OR n.nspname LIKE $2::text)`,
			pattern(catalogPattern), pattern(schemaPattern))
	case jdbcdb.MySQL:
		// With no catalog.pattern, the database the URL names, as MariaDB's
		// driver (and MySQL's before 8.0) list; all of them when it names
		// none.
		rows, err = c.query(ctx, `SELECT TABLE_SCHEMA, TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES
WHERE (? IS NULL AND TABLE_SCHEMA = COALESCE(DATABASE(), TABLE_SCHEMA)) OR TABLE_SCHEMA LIKE ?`,
			pattern(catalogPattern), pattern(catalogPattern))
	default:
		rows, err = c.query(ctx, `SELECT '', '', name, type FROM sqlite_master
WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []srcTable
	for rows.Next() {
		var catalog, schema, name, typ string
		if err := rows.Scan(&catalog, &schema, &name, &typ); err != nil {
			return nil, err
		}
		t := srcTable{typ: srcJDBCTableType(c.d, schema, typ)}
		switch c.d {
		case jdbcdb.PostgreSQL:
			t.id = jdbcdb.TableID{Schema: schema, Table: name}
		case jdbcdb.MySQL:
			t.id = jdbcdb.TableID{Catalog: catalog, Table: name}
		default:
			t.id = jdbcdb.TableID{Table: name}
		}
		if slices.ContainsFunc(types, func(s string) bool { return strings.EqualFold(strings.TrimSpace(s), t.typ) }) {
			out = append(out, t)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b srcTable) int { return strings.Compare(a.id.String(), b.id.String()) })
	return out, nil
}

// srcJDBCTableType names a table type as the JDBC drivers report them.
func srcJDBCTableType(d *jdbcdb.Dialect, schema, typ string) string {
	system := false
	switch d {
	case jdbcdb.PostgreSQL:
		system = schema == "pg_catalog" || schema == "information_schema" || strings.HasPrefix(schema, "pg_toast")
	case jdbcdb.MySQL:
		switch strings.ToLower(schema) {
		case "information_schema", "mysql", "performance_schema", "sys":
			system = true
		}
	}
	switch strings.ToUpper(typ) {
	case "BASE TABLE", "TABLE", "SYSTEM VERSIONED", "SEQUENCE":
		if system {
			return "SYSTEM TABLE"
		}
		if strings.EqualFold(typ, "SEQUENCE") {
			return "SEQUENCE"
		}
		return "TABLE"
	case "VIEW", "SYSTEM VIEW":
		if system || strings.EqualFold(typ, "SYSTEM VIEW") {
			return "SYSTEM VIEW"
		}
		return "VIEW"
	case "FOREIGN":
		return "FOREIGN TABLE"
	case "LOCAL TEMPORARY", "TEMPORARY":
		return "LOCAL TEMPORARY"
	case "PARTITIONED TABLE":
		if system {
			return "SYSTEM TABLE"
		}
		return "PARTITIONED TABLE"
	}
	return strings.ToUpper(typ)
}

// srcColumnInfo is what the database metadata says of a table column.
type srcColumnInfo struct {
	name     string
	nullable bool
	autoInc  bool
}

// columns describes a table's columns, in order; none when the table
// does not exist.
func (c *srcConn) columns(ctx context.Context, t jdbcdb.TableID) ([]srcColumnInfo, error) {
	var (
		rows srcRows
		err  error
	)
	switch c.d {
	case jdbcdb.PostgreSQL:
		// What information_schema.columns says, from pg_catalog (see
		// tables); a generated column's expression is never a nextval.
		rows, err = c.query(ctx, `SELECT a.attname::text, NOT (a.attnotnull OR (ty.typtype = 'd' AND ty.typnotnull)),
COALESCE(pg_catalog.pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%', false) OR a.attidentity IN ('a', 'd')
FROM pg_catalog.pg_attribute a
JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE c.relname = $2 AND (n.nspname = $1 OR ($1 = '' AND n.nspname = current_schema()))
  AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'v', 'f', 'p')
  AND NOT pg_catalog.pg_is_other_temp_schema(n.oid)
  AND (pg_catalog.pg_has_role(c.relowner, 'USAGE')
    OR pg_catalog.has_column_privilege(c.oid, a.attnum, 'SELECT, INSERT, UPDATE, REFERENCES'))
ORDER BY a.attnum`, t.Schema, t.Table)
	case jdbcdb.MySQL:
		rows, err = c.query(ctx, `SELECT COLUMN_NAME, IS_NULLABLE = 'YES', EXTRA LIKE '%auto_increment%'
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ?
ORDER BY ORDINAL_POSITION`, t.Catalog, t.Table)
	default:
		rows, err = c.query(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, t.Table)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []srcColumnInfo
	pks := 0
	intPK := -1
	for rows.Next() {
		var ci srcColumnInfo
		if c.d == jdbcdb.SQLite {
			var typ string
			var notNull, pk int64
			if err := rows.Scan(&ci.name, &typ, &notNull, &pk); err != nil {
				return nil, err
			}
			ci.nullable = notNull == 0
			if pk > 0 {
				pks++
				if strings.EqualFold(strings.TrimSpace(typ), "INTEGER") {
					intPK = len(out)
				}
			}
		} else if err := rows.Scan(&ci.name, &ci.nullable, &ci.autoInc); err != nil {
			return nil, err
		}
		out = append(out, ci)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if pks == 1 && intPK >= 0 {
		// INTEGER PRIMARY KEY is the rowid: assigned when not given,
		// never null.
		out[intPK].autoInc = true
		out[intPK].nullable = false
	}
	return out, nil
}

// srcIsDataError tells errors of the data (which fail the task) from
// those of the database or the connection (retried later).
func srcIsDataError(err error) bool {
	var ve *srcValueError
	return errors.As(err, &ve)
}

// srcIdle hands released source connections over (jdbcdb.HandOver).
var srcIdle = jdbcdb.NewHandOver(4, (*srcConn).close)
