package postgrescdc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/jackc/pgx/v5"
)

// Schemas of the source block and heartbeats, as Debezium 2.7 builds them.
var (
	snapshotEnumSchema = &connect.Schema{
		Type: connect.TypeString, Optional: true, Default: "false", Name: enumName, Version: 1,
		Parameters: []connect.Parameter{{Key: "allowed", Value: "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"}},
	}
	sourceSchema = connect.StructSchema("io.debezium.connector.postgresql.Source",
		connect.Field{Name: "version", Schema: connect.StringSchema},
		connect.Field{Name: "connector", Schema: connect.StringSchema},
		connect.Field{Name: "name", Schema: connect.StringSchema},
		connect.Field{Name: "ts_ms", Schema: connect.Int64Schema},
		connect.Field{Name: "snapshot", Schema: snapshotEnumSchema},
		connect.Field{Name: "db", Schema: connect.StringSchema},
		connect.Field{Name: "sequence", Schema: connect.OptionalStringSchema},
		connect.Field{Name: "ts_us", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "ts_ns", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "schema", Schema: connect.StringSchema},
		connect.Field{Name: "table", Schema: connect.StringSchema},
		connect.Field{Name: "txId", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "lsn", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "xmin", Schema: connect.OptionalInt64Schema},
	)
	transactionBlockSchema = func() *connect.Schema {
		s := connect.StructSchema("event.block",
			connect.Field{Name: "id", Schema: connect.StringSchema},
			connect.Field{Name: "total_order", Schema: connect.Int64Schema},
			connect.Field{Name: "data_collection_order", Schema: connect.Int64Schema},
		)
		s.Optional, s.Version = true, 1
		return s
	}()
	heartbeatKeySchema = func() *connect.Schema {
		s := connect.StructSchema("io.debezium.connector.common.ServerNameKey", connect.Field{Name: "serverName", Schema: connect.StringSchema})
		s.Version = 1
		return s
	}()
	heartbeatValueSchema = func() *connect.Schema {
		s := connect.StructSchema("io.debezium.connector.common.Heartbeat", connect.Field{Name: "ts_ms", Schema: connect.Int64Schema})
		s.Version = 1
		return s
	}()
)

// column is one captured column of a table.
type column struct {
	name     string
	mapper   *valueMapper
	conv     func(b []byte) (any, error) // mapper's, for this column's schema
	optional bool
	tupleIdx int // position in pgoutput's tuples and in the snapshot's SELECT
	// inValue is false for a column the column lists leave out of values;
	// it is read all the same, for a key that holds it.
	inValue     bool
	fieldSchema *connect.Schema
}

// tableInfo is what the connector needs to turn a table's rows into
// events.
type tableInfo struct {
	oid      uint32
	schema   string
	name     string
	captured bool
	topic    string
	cols     []column
	keyCols  []int    // indexes into cols, in the key's field order
	nTuple   int      // columns in the relation (pgoutput's tuples)
	allCols  []string // every column, in tuple order (the snapshot's SELECT list)

	keySchema      *connect.Schema // nil for a table without a primary key
	valueSchema    *connect.Schema
	envelopeSchema *connect.Schema
}

func (t *tableInfo) fqn() string { return t.schema + "." + t.name }

// sanitizeTopic replaces what Kafka does not allow in a topic name with
// '_', as Debezium's TopicNameSanitizer.
func sanitizeTopic(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !validTopicRune(rune(c)) {
			b[i] = '_'
		}
	}
	return string(b)
}

// catalogColumn is a column as the catalog describes it.
type catalogColumn struct {
	name    string
	typ     uint32
	typmod  int32
	notNull bool
}

// buildTable builds a table's schemas from its columns (in tuple order) and
// its primary key column names.
func buildTable(cfg *config, types *typeResolver, oid uint32, schema, name string, cols []catalogColumn, pk []string) (*tableInfo, error) {
	t := &tableInfo{oid: oid, schema: schema, name: name, nTuple: len(cols), captured: cfg.captured(schema, name)}
	for _, c := range cols {
		t.allCols = append(t.allCols, c.name)
	}
	d := cfg.topicDelimiter
	t.topic = sanitizeTopic(cfg.prefix + d + schema + d + name)
	if !t.captured {
		return t, nil
	}
	isKey := map[string]bool{}
	for _, k := range pk {
		isKey[k] = true
	}
	var valueFields []connect.Field
	for i, c := range cols {
		m, err := types.mapper(c.typ, c.typmod)
		if err != nil {
			return nil, fmt.Errorf("column %s of %s.%s: %w", c.name, schema, name, err)
		}
		if m == nil {
			continue // a type Debezium does not support: left out
		}
		col := column{name: c.name, mapper: m, optional: !c.notNull, tupleIdx: i, inValue: cfg.inValue(schema, name, c.name)}
		fs := m.schema
		if col.optional {
			fs = m.schema.AsOptional()
		}
		col.conv = m.convAs(fs)
		col.fieldSchema = fs
		t.cols = append(t.cols, col)
		if col.inValue {
			valueFields = append(valueFields, connect.Field{Name: c.name, Schema: fs})
		}
	}
	// The key: message.key.columns' columns when any matches (for each
	// expression in turn, the table's columns it matches, in column order,
	// as Debezium's CustomKeyMapper), else the primary key, whose fields
	// come in column order, as Debezium's TableSchemaBuilder adds them.
	var keyCols []int
	for _, re := range cfg.keyColumns {
		for i, c := range t.cols {
			// A column two expressions match is in the key once: a struct
			// cannot hold a field twice.
			if re.Matches(schema+"."+name+"."+c.name) && !slices.Contains(keyCols, i) {
				keyCols = append(keyCols, i)
			}
		}
	}
	if len(keyCols) == 0 {
		for i, c := range t.cols {
			if isKey[c.name] {
				keyCols = append(keyCols, i)
			}
		}
		if len(keyCols) != len(pk) {
			keyCols = nil // a key column of a type left out: no key
		}
	}
	prefix := t.topic
	if len(keyCols) > 0 {
		keyFields := make([]connect.Field, len(keyCols))
		for i, ci := range keyCols {
			keyFields[i] = connect.Field{Name: t.cols[ci].name, Schema: t.cols[ci].fieldSchema}
		}
		t.keyCols = keyCols
		t.keySchema = connect.StructSchema(prefix+".Key", keyFields...)
	}
	t.valueSchema = connect.StructSchema(prefix+".Value", valueFields...)
	t.valueSchema.Optional = true
	t.envelopeSchema = connect.StructSchema(prefix+".Envelope",
		connect.Field{Name: "before", Schema: t.valueSchema},
		connect.Field{Name: "after", Schema: t.valueSchema},
		connect.Field{Name: "source", Schema: sourceSchema},
		connect.Field{Name: "op", Schema: connect.StringSchema},
		connect.Field{Name: "ts_ms", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "ts_us", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "ts_ns", Schema: connect.OptionalInt64Schema},
		connect.Field{Name: "transaction", Schema: transactionBlockSchema},
	)
	t.envelopeSchema.Version = 2
	return t, nil
}

// row is one row's values, one per captured column (nil for NULL).
type row []any

func (t *tableInfo) valueStruct(r row) *connect.Struct {
	s := connect.NewStruct(t.valueSchema)
	for i := range t.cols {
		if !t.cols[i].inValue {
			continue
		}
		v := r[i]
		if v == nil && !t.cols[i].optional {
			v = t.cols[i].mapper.zero
		}
		s.Put(t.cols[i].name, v)
	}
	return s
}

func (t *tableInfo) keyStruct(r row) *connect.Struct {
	if t.keySchema == nil {
		return nil
	}
	s := connect.NewStruct(t.keySchema)
	for _, ci := range t.keyCols {
		v := r[ci]
		if v == nil && !t.cols[ci].optional {
			v = t.cols[ci].mapper.zero
		}
		s.Put(t.cols[ci].name, v)
	}
	return s
}

// sameKey says whether two rows have equal keys.
func (t *tableInfo) sameKey(a, b row) bool {
	for _, ci := range t.keyCols {
		if fmt.Sprint(a[ci]) != fmt.Sprint(b[ci]) {
			return false
		}
	}
	return true
}

// catalog reads table and type metadata with the connector's regular
// connection.
type catalog struct {
	conn *pgx.Conn
}

func (c *catalog) lookupType(ctx context.Context, oid uint32) (*pgType, error) {
	t := &pgType{oid: oid}
	var typtype, category string
	var labels string
	err := c.conn.QueryRow(ctx, `SELECT t.typname, n.nspname, t.typtype::text, t.typcategory::text, t.typelem, t.typbasetype, t.typtypmod,
	COALESCE((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_catalog.pg_enum e WHERE e.enumtypid = t.oid), '')
FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace WHERE t.oid = $1`, oid).
		Scan(&t.name, &t.schema, &typtype, &category, &t.elem, &t.base, &t.baseMod, &labels)
	if errors.Is(err, pgx.ErrNoRows) {
		// A type dropped since (old WAL): not one the connector knows.
		return &pgType{oid: oid, name: fmt.Sprint(oid), typtype: 'b'}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading type %d: %w", oid, err)
	}
	t.typtype, t.category = typtype[0], category[0]
	if labels != "" {
		t.labels = strings.Split(labels, ",")
	}
	return t, nil
}

// tableColumns reads a table's name, its columns in attribute order (no
// dropped or generated ones: pgoutput sends neither) and its primary key.
func (c *catalog) tableColumns(ctx context.Context, oid uint32) (schema, name string, cols []catalogColumn, pk []string, err error) {
	if err = c.conn.QueryRow(ctx, `SELECT n.nspname, c.relname FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1`, oid).Scan(&schema, &name); err != nil {
		return "", "", nil, nil, fmt.Errorf("reading table %d: %w", oid, err)
	}
	rows, err := c.conn.Query(ctx, `SELECT a.attname, a.atttypid, a.atttypmod, a.attnotnull FROM pg_catalog.pg_attribute a
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' ORDER BY a.attnum`, oid)
	if err != nil {
		return "", "", nil, nil, err
	}
	for rows.Next() {
		var cc catalogColumn
		if err = rows.Scan(&cc.name, &cc.typ, &cc.typmod, &cc.notNull); err != nil {
			rows.Close()
			return "", "", nil, nil, err
		}
		cols = append(cols, cc)
	}
	rows.Close()
	if err = rows.Err(); err != nil {
		return "", "", nil, nil, err
	}
	pk, err = c.primaryKey(ctx, oid)
	return schema, name, cols, pk, err
}

func (c *catalog) primaryKey(ctx context.Context, oid uint32) ([]string, error) {
	rows, err := c.conn.Query(ctx, `SELECT a.attname FROM pg_catalog.pg_index i
CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indrelid = $1 AND i.indisprimary ORDER BY k.ord`, oid)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// nullability reads which columns of a table are NOT NULL.
func (c *catalog) notNull(ctx context.Context, oid uint32) (map[string]bool, error) {
	rows, err := c.conn.Query(ctx, `SELECT a.attname, a.attnotnull FROM pg_catalog.pg_attribute a
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped`, oid)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for rows.Next() {
		var n string
		var nn bool
		if err := rows.Scan(&n, &nn); err != nil {
			rows.Close()
			return nil, err
		}
		out[n] = nn
	}
	rows.Close()
	return out, rows.Err()
}

// tableRef names a table.
type tableRef struct {
	oid          uint32
	schema, name string
}

// listTables lists the ordinary and partitioned tables of the database
// outside the system schemas, by schema then name.
func (c *catalog) listTables(ctx context.Context) ([]tableRef, error) {
	rows, err := c.conn.Query(ctx, `SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%'
ORDER BY n.nspname, c.relname`)
	if err != nil {
		return nil, err
	}
	var out []tableRef
	for rows.Next() {
		var t tableRef
		if err := rows.Scan(&t.oid, &t.schema, &t.name); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, t)
	}
	rows.Close()
	return out, rows.Err()
}

// quoteIdent quotes an SQL identifier.
func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func quoteLiteral(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
