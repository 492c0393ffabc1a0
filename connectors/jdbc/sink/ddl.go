package sink

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

// sinkSQL writes identifiers for one dialect, quoted or not as
// quote.sql.identifiers says.
type sinkSQL struct {
	d     *jdbcdb.Dialect
	quote bool
}

func (s sinkSQL) ident(name string) string {
	if s.quote {
		return s.d.Quote(name)
	}
	return name
}

func (s sinkSQL) table(id jdbcdb.TableID) string {
	if s.quote {
		return s.d.QuoteTable(id)
	}
	return id.String()
}

// postgresMaxIdentifier is PostgreSQL's NAMEDATALEN-1: longer table names
// are cut, as Confluent's dialect cuts them.
const postgresMaxIdentifier = 63

// parseSinkTableID reads a possibly qualified table name as Confluent's
// parseTableIdentifier: parts split on dots outside quotes, quotes
// removed. Two parts are schema.table (database.table for MySQL), three
// are catalog.schema.table.
func parseSinkTableID(d *jdbcdb.Dialect, name string, quote bool) jdbcdb.TableID {
	var parts []string
	var cur strings.Builder
	var inQuote rune
	for _, r := range name {
		switch {
		case inQuote != 0 && r == inQuote:
			inQuote = 0
		case inQuote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '`':
			inQuote = r
		case r == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteRune(r)
		}
	}
	parts = append(parts, cur.String())
	var id jdbcdb.TableID
	switch len(parts) {
	case 1:
		id.Table = parts[0]
	case 2:
		if d == jdbcdb.MySQL {
			id.Catalog, id.Table = parts[0], parts[1]
		} else {
			id.Schema, id.Table = parts[0], parts[1]
		}
	default:
		n := len(parts)
		id.Catalog, id.Schema, id.Table = strings.Join(parts[:n-2], "."), parts[n-2], parts[n-1]
	}
	if d == jdbcdb.PostgreSQL {
		if len(id.Table) > postgresMaxIdentifier {
			id.Table = id.Table[:postgresMaxIdentifier]
		}
		if !quote {
			id.Table = strings.ToLower(id.Table)
		}
	}
	return id
}

// sinkTableInfo is what the sink knows of an existing table: its columns.
type sinkTableInfo struct {
	columns []string
	exact   map[string]bool
	lower   map[string]bool
	// types holds PostgreSQL's type OID of each column.
	types map[string]uint32
	// kind is the table type: TABLE, PARTITIONED_TABLE or VIEW.
	kind string
}

func newSinkTableInfo(cols []string, types []uint32) *sinkTableInfo {
	ti := &sinkTableInfo{columns: cols, exact: map[string]bool{}, lower: map[string]bool{}, types: map[string]uint32{}}
	for i, c := range cols {
		ti.exact[c] = true
		ti.lower[strings.ToLower(c)] = true
		ti.types[c] = types[i]
	}
	return ti
}

// has reports whether the table has a column, matched exactly or, as
// Confluent falls back to, ignoring case.
func (ti *sinkTableInfo) has(name string) bool {
	return ti.exact[name] || ti.lower[strings.ToLower(name)]
}

type sinkQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// describeSinkTable returns the columns of a table, or nil when there is
// no table (or view, as table.types allows) of that name.
func describeSinkTable(ctx context.Context, q sinkQueryer, d *jdbcdb.Dialect, cfg *sinkConfig, id jdbcdb.TableID) (*sinkTableInfo, error) {
	var rows *sql.Rows
	var err error
	switch d {
	case jdbcdb.PostgreSQL:
		ref := jdbcdb.PostgreSQL.QuoteTable(jdbcdb.TableID{Schema: id.Schema, Table: id.Table})
		rows, err = q.QueryContext(ctx, `SELECT c.relkind::text, COALESCE(a.attname::text, ''), COALESCE(a.atttypid::int8, 0)
FROM pg_class c LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.oid = to_regclass($1) ORDER BY a.attnum`, ref)
	case jdbcdb.MySQL:
		var schema any
		if id.Catalog != "" {
			schema = id.Catalog
		} else if id.Schema != "" {
			schema = id.Schema
		}
		rows, err = q.QueryContext(ctx, `SELECT t.TABLE_TYPE, COALESCE(c.COLUMN_NAME, ''), 0
FROM information_schema.TABLES t LEFT JOIN information_schema.COLUMNS c
  ON c.TABLE_SCHEMA = t.TABLE_SCHEMA AND c.TABLE_NAME = t.TABLE_NAME
WHERE t.TABLE_SCHEMA = COALESCE(?, DATABASE()) AND t.TABLE_NAME = ? ORDER BY c.ORDINAL_POSITION`, schema, id.Table)
	default:
		schema := id.Schema
		if schema == "" {
			schema = "main"
		}
		rows, err = q.QueryContext(ctx, `SELECT l.type, COALESCE(i.name, ''), 0
FROM pragma_table_list(?1) l LEFT JOIN pragma_table_info(?1, ?2) i WHERE l.schema = ?2 ORDER BY i.cid`, id.Table, schema)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the definition of table %s: %w", id, err)
	}
	defer rows.Close()
	var cols []string
	var types []uint32
	found, kindFound := false, ""
	for rows.Next() {
		var kind, col string
		var typ int64
		if err := rows.Scan(&kind, &col, &typ); err != nil {
			return nil, err
		}
		if !cfg.tableTypeAllowed(sinkTableType(kind)) {
			continue
		}
		found, kindFound = true, sinkTableType(kind)
		if col != "" {
			cols = append(cols, col)
			types = append(types, uint32(typ))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the definition of table %s: %w", id, err)
	}
	if !found {
		return nil, nil
	}
	info := newSinkTableInfo(cols, types)
	info.kind = kindFound
	return info, nil
}

// sinkTableType maps a database's kind of relation to Confluent's
// TableType names.
func sinkTableType(kind string) string {
	switch strings.ToUpper(kind) {
	case "R", "BASE TABLE", "TABLE", "SYSTEM VERSIONED":
		return "TABLE"
	case "P":
		return "PARTITIONED_TABLE"
	case "V", "M", "VIEW":
		return "VIEW"
	}
	return kind
}

// sqlType is the column type auto.create and auto.evolve give a field:
// the PostgreSQL mapping of Confluent's dialect (spec §2.4), its MySQL
// mapping, and SQLite types whose affinity keeps the values we write.
func (s sinkSQL) sqlType(c *sinkColumn) string {
	sc := c.schema
	switch s.d {
	case jdbcdb.PostgreSQL:
		switch sc.Name {
		case connect.DecimalName:
			return "DECIMAL"
		case connect.DateName:
			return "DATE"
		case connect.TimeName:
			return "TIME"
		case connect.TimestampName:
			return "TIMESTAMP"
		}
		switch sc.Type {
		case connect.TypeInt8, connect.TypeInt16:
			return "SMALLINT"
		case connect.TypeInt32:
			return "INT"
		case connect.TypeInt64:
			return "BIGINT"
		case connect.TypeFloat32:
			return "REAL"
		case connect.TypeFloat64:
			return "DOUBLE PRECISION"
		case connect.TypeBoolean:
			return "BOOLEAN"
		case connect.TypeString:
			return "TEXT"
		case connect.TypeBytes:
			return "BYTEA"
		case connect.TypeArray:
			return s.sqlType(&sinkColumn{name: c.name, schema: sc.Value, key: c.key}) + "[]"
		}
	case jdbcdb.MySQL:
		switch sc.Name {
		case connect.DecimalName:
			// 65 is MySQL's largest precision.
			scale, _ := sc.Parameter(connect.DecimalScaleParameter)
			if scale == "" {
				scale = "0"
			}
			return "DECIMAL(65," + scale + ")"
		case connect.DateName:
			return "DATE"
		case connect.TimeName:
			return "TIME(3)"
		case connect.TimestampName:
			return "DATETIME(3)"
		}
		switch sc.Type {
		case connect.TypeInt8:
			return "TINYINT"
		case connect.TypeInt16:
			return "SMALLINT"
		case connect.TypeInt32:
			return "INT"
		case connect.TypeInt64:
			return "BIGINT"
		case connect.TypeFloat32:
			return "FLOAT"
		case connect.TypeFloat64:
			return "DOUBLE"
		case connect.TypeBoolean:
			return "TINYINT"
		case connect.TypeString:
			// MySQL keys need a bounded type.
			if c.key {
				return "VARCHAR(256)"
			}
			return "TEXT"
		case connect.TypeBytes:
			return "VARBINARY(1024)"
		}
	default:
		switch sc.Name {
		case connect.DecimalName:
			return "NUMERIC"
		case connect.DateName:
			return "DATE"
		case connect.TimeName:
			return "TIME"
		case connect.TimestampName:
			return "DATETIME"
		}
		switch sc.Type {
		case connect.TypeBoolean, connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
			return "INTEGER"
		case connect.TypeFloat32, connect.TypeFloat64:
			return "REAL"
		case connect.TypeString:
			return "TEXT"
		case connect.TypeBytes:
			return "BLOB"
		}
	}
	return "" // refused earlier by sinkKindOf
}

// columnSpec is Confluent's writeColumnSpec: name, type, and DEFAULT,
// NULL or NOT NULL.
func (s sinkSQL) columnSpec(c *sinkColumn, cfg *sinkConfig) string {
	spec := s.ident(c.name) + " " + s.sqlType(c)
	switch {
	case c.schema.Default != nil:
		spec += " DEFAULT " + s.literal(c.schema, c.schema.Default, cfg)
	case c.optional():
		spec += " NULL"
	default:
		spec += " NOT NULL"
	}
	return spec
}

// literal renders a schema default as SQL.
func (s sinkSQL) literal(sc *connect.Schema, v any, cfg *sinkConfig) string {
	switch x := v.(type) {
	case *connect.Decimal:
		return x.String()
	case time.Time:
		switch sc.Name {
		case connect.DateName:
			return s.quoteString(x.In(cfg.dateLoc).Format("2006-01-02"))
		case connect.TimeName:
			return s.quoteString(x.In(cfg.loc).Format("15:04:05.000"))
		}
		return s.quoteString(x.In(cfg.loc).Format("2006-01-02 15:04:05.000"))
	case bool:
		if s.d == jdbcdb.PostgreSQL {
			if x {
				return "TRUE"
			}
			return "FALSE"
		}
		if x {
			return "1"
		}
		return "0"
	case string:
		return s.quoteString(x)
	case []byte:
		if s.d == jdbcdb.PostgreSQL {
			return `'\x` + hex.EncodeToString(x) + `'::bytea`
		}
		return "X'" + hex.EncodeToString(x) + "'"
	case float32:
		return fmt.Sprint(float64(x))
	case *big.Int:
		return x.String()
	}
	return fmt.Sprint(v)
}

func (s sinkSQL) quoteString(v string) string {
	v = strings.ReplaceAll(v, "'", "''")
	if s.d == jdbcdb.MySQL {
		v = strings.ReplaceAll(v, `\`, `\\`)
	}
	return "'" + v + "'"
}

// createTableSQL is Confluent's buildCreateTableStatement.
func (s sinkSQL) createTableSQL(id jdbcdb.TableID, f *sinkFields, cfg *sinkConfig) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(s.table(id))
	b.WriteString(" (")
	for i, c := range f.all {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n")
		b.WriteString(s.columnSpec(c, cfg))
	}
	if len(f.keys) > 0 {
		b.WriteString(",\nPRIMARY KEY(")
		for i, c := range f.keys {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(s.ident(c.name))
		}
		b.WriteString(")")
	}
	b.WriteString(")")
	return b.String()
}

// alterTableSQL is Confluent's buildAlterTable: one ALTER TABLE adding
// every missing column, or one per column for SQLite, which adds only one
// at a time.
func (s sinkSQL) alterTableSQL(id jdbcdb.TableID, missing []*sinkColumn, cfg *sinkConfig) []string {
	if s.d == jdbcdb.SQLite {
		var out []string
		for _, c := range missing {
			out = append(out, "ALTER TABLE "+s.table(id)+" ADD "+s.columnSpec(c, cfg))
		}
		return out
	}
	adds := make([]string, len(missing))
	for i, c := range missing {
		adds[i] = "ADD " + s.columnSpec(c, cfg)
	}
	sep := ","
	if len(missing) > 1 {
		sep = ",\n"
		adds[0] = "\n" + adds[0]
	}
	return []string{"ALTER TABLE " + s.table(id) + " " + strings.Join(adds, sep)}
}
