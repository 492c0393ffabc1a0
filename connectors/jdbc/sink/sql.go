package sink

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

// Most bind parameters in one statement: PostgreSQL's and MySQL's
// protocols count them in 16 bits; SQLite allows 32766 since 3.32.
func sinkMaxParams(d *jdbcdb.Dialect) int {
	if d == jdbcdb.SQLite {
		return 32766
	}
	return 65535
}

// sinkStatements builds the DML of one table for one set of columns. The
// multi-row texts are kept by row count: a run of full batches reuses one
// text, which the drivers prepare once per connection.
type sinkStatements struct {
	s       sinkSQL
	table   string
	fields  *sinkFields
	mode    string
	insert  map[int]string
	deletes map[int]string
	update  string
}

func newSinkStatements(s sinkSQL, id jdbcdb.TableID, f *sinkFields, mode string) *sinkStatements {
	return &sinkStatements{s: s, table: s.table(id), fields: f, mode: mode, insert: map[int]string{}, deletes: map[int]string{}}
}

// writeColumns returns the columns of an INSERT or upsert: keys first, as
// Confluent binds them.
func (st *sinkStatements) writeColumns() []*sinkColumn {
	out := make([]*sinkColumn, 0, len(st.fields.keys)+len(st.fields.nonKeys))
	out = append(out, st.fields.keys...)
	return append(out, st.fields.nonKeys...)
}

func (st *sinkStatements) placeholder(b *strings.Builder, n int) {
	if st.s.d == jdbcdb.PostgreSQL {
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
	} else {
		b.WriteByte('?')
	}
}

// placeholderRows writes rows parenthesized tuples of width
// placeholders, numbered on from 1: (?,?),(?,?) or ($1,$2),($3,$4).
func (st *sinkStatements) placeholderRows(b *strings.Builder, rows, width int) {
	n := 1
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for i := range width {
			if i > 0 {
				b.WriteByte(',')
			}
			st.placeholder(b, n)
			n++
		}
		b.WriteByte(')')
	}
}

func (st *sinkStatements) columnList(b *strings.Builder, cols []*sinkColumn) {
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(st.s.ident(c.name))
	}
}

// insertSQL is the INSERT (or upsert) of rows rows: Confluent's statement
// with a VALUES list of many rows.
func (st *sinkStatements) insertSQL(rows int) string {
	if q, ok := st.insert[rows]; ok {
		return q
	}
	cols := st.writeColumns()
	var b strings.Builder
	b.Grow(64 + rows*len(cols)*7)
	b.WriteString("INSERT INTO ")
	b.WriteString(st.table)
	b.WriteString(" (")
	st.columnList(&b, cols)
	b.WriteString(") VALUES ")
	st.placeholderRows(&b, rows, len(cols))
	if st.mode == sinkModeUpsert {
		st.upsertClause(&b)
	}
	q := b.String()
	st.insert[rows] = q
	return q
}

// upsertClause is each database's own upsert: ON CONFLICT for PostgreSQL
// and SQLite (DO NOTHING when every column is a key), ON DUPLICATE KEY
// UPDATE for MySQL.
func (st *sinkStatements) upsertClause(b *strings.Builder) {
	keys, nonKeys := st.fields.keys, st.fields.nonKeys
	if st.s.d == jdbcdb.MySQL {
		b.WriteString(" ON DUPLICATE KEY UPDATE ")
		set := nonKeys
		if len(set) == 0 {
			set = keys
		}
		for i, c := range set {
			if i > 0 {
				b.WriteByte(',')
			}
			id := st.s.ident(c.name)
			b.WriteString(id + "=VALUES(" + id + ")")
		}
		return
	}
	excluded := "EXCLUDED."
	if st.s.d == jdbcdb.SQLite {
		excluded = "excluded."
	}
	b.WriteString(" ON CONFLICT (")
	st.columnList(b, keys)
	if len(nonKeys) == 0 {
		b.WriteString(") DO NOTHING")
		return
	}
	b.WriteString(") DO UPDATE SET ")
	for i, c := range nonKeys {
		if i > 0 {
			b.WriteByte(',')
		}
		id := st.s.ident(c.name)
		b.WriteString(id + "=" + excluded + id)
	}
}

// updateSQL is Confluent's UPDATE ... SET non-keys WHERE keys; its
// arguments are the non-key values, then the key values.
func (st *sinkStatements) updateSQL() string {
	if st.update != "" {
		return st.update
	}
	var b strings.Builder
	b.WriteString("UPDATE ")
	b.WriteString(st.table)
	b.WriteString(" SET ")
	n := 1
	for i, c := range st.fields.nonKeys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(st.s.ident(c.name) + " = ")
		st.placeholder(&b, n)
		n++
	}
	b.WriteString(" WHERE ")
	for i, c := range st.fields.keys {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString(st.s.ident(c.name) + " = ")
		st.placeholder(&b, n)
		n++
	}
	st.update = b.String()
	return st.update
}

// deleteSQL deletes rows rows by key: DELETE ... WHERE (k1,k2) IN
// ((?,?),...), the multi-row form of Confluent's DELETE ... WHERE k1=?
// AND k2=?.
func (st *sinkStatements) deleteSQL(rows int) string {
	if q, ok := st.deletes[rows]; ok {
		return q
	}
	keys := st.fields.keys
	var b strings.Builder
	b.WriteString("DELETE FROM ")
	b.WriteString(st.table)
	b.WriteString(" WHERE (")
	st.columnList(&b, keys)
	b.WriteString(") IN (")
	st.placeholderRows(&b, rows, len(keys))
	b.WriteByte(')')
	q := b.String()
	st.deletes[rows] = q
	return q
}

// sinkArg turns the Connect value of a column into what the database
// driver binds: integers as int64, Decimal as its text, Date and Time as
// text in the configured zones, Timestamp as a time in db.timezone (whose
// wall clock a TIMESTAMP column keeps), PostgreSQL arrays as typed slices.
func sinkArg(d *jdbcdb.Dialect, cfg *sinkConfig, c *sinkColumn, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() (any, error) {
		return nil, sinkDataErrorf("Field '%s' has schema %s but holds a %T value", c.name, sinkSchemaDesc(c.schema), v)
	}
	switch c.kind {
	case sinkKindInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case int32:
			return int64(x), nil
		case int16:
			return int64(x), nil
		case int8:
			return int64(x), nil
		case int:
			return int64(x), nil
		}
		return bad()
	case sinkKindFloat32:
		switch x := v.(type) {
		case float32:
			if d == jdbcdb.PostgreSQL {
				return x, nil
			}
			return float64(x), nil
		case float64:
			return x, nil
		}
		return bad()
	case sinkKindFloat64:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		}
		return bad()
	case sinkKindBool:
		if x, ok := v.(bool); ok {
			return x, nil
		}
		return bad()
	case sinkKindString:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		if d == jdbcdb.PostgreSQL && strings.IndexByte(x, 0) >= 0 {
			// PostgreSQL text cannot hold NUL; Confluent drops them.
			x = strings.ReplaceAll(x, "\x00", "")
		}
		return x, nil
	case sinkKindBytes:
		if x, ok := v.([]byte); ok {
			return x, nil
		}
		return bad()
	case sinkKindDecimal:
		if x, ok := v.(*connect.Decimal); ok && x.Unscaled != nil {
			return x.String(), nil
		}
		return bad()
	case sinkKindDate, sinkKindTime, sinkKindTimestamp:
		t, ok := v.(time.Time)
		if !ok {
			return bad()
		}
		switch c.kind {
		case sinkKindDate:
			return t.In(cfg.dateLoc).Format("2006-01-02"), nil
		case sinkKindTime:
			return t.In(cfg.loc).Format("15:04:05.000"), nil
		}
		t = t.In(cfg.loc)
		switch d {
		case jdbcdb.PostgreSQL:
			// pgx writes a TIMESTAMP column the wall clock of the time
			// in its location, and a TIMESTAMPTZ column the instant.
			return t, nil
		case jdbcdb.MySQL:
			// The driver renders times in UTC: hand it the wall clock
			// of db.timezone as a UTC time.
			return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), nil
		}
		return t.Format("2006-01-02 15:04:05.000"), nil
	case sinkKindArray:
		arr, ok := v.([]any)
		if !ok {
			return bad()
		}
		return sinkPostgresArray(c, arr)
	}
	return bad()
}

// sinkPostgresArray makes a typed slice pgx encodes as an array; nil
// elements are NULLs.
func sinkPostgresArray(c *sinkColumn, arr []any) (any, error) {
	elem := c.schema.Value
	fail := func(x any) (any, error) {
		return nil, sinkDataErrorf("Field '%s' has schema %s but holds a %T element", c.name, sinkSchemaDesc(c.schema), x)
	}
	switch elem.Type {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		out := make([]*int64, len(arr))
		for i, x := range arr {
			if x == nil {
				continue
			}
			var n int64
			switch y := x.(type) {
			case int8:
				n = int64(y)
			case int16:
				n = int64(y)
			case int32:
				n = int64(y)
			case int64:
				n = y
			default:
				return fail(x)
			}
			out[i] = &n
		}
		return out, nil
	case connect.TypeFloat32, connect.TypeFloat64:
		out := make([]*float64, len(arr))
		for i, x := range arr {
			if x == nil {
				continue
			}
			var f float64
			switch y := x.(type) {
			case float32:
				f = float64(y)
			case float64:
				f = y
			default:
				return fail(x)
			}
			out[i] = &f
		}
		return out, nil
	case connect.TypeBoolean:
		out := make([]*bool, len(arr))
		for i, x := range arr {
			if x == nil {
				continue
			}
			b, ok := x.(bool)
			if !ok {
				return fail(x)
			}
			out[i] = &b
		}
		return out, nil
	case connect.TypeString:
		out := make([]*string, len(arr))
		for i, x := range arr {
			if x == nil {
				continue
			}
			s, ok := x.(string)
			if !ok {
				return fail(x)
			}
			s = strings.ReplaceAll(s, "\x00", "")
			out[i] = &s
		}
		return out, nil
	case connect.TypeBytes:
		out := make([][]byte, len(arr))
		for i, x := range arr {
			if x == nil {
				continue
			}
			b, ok := x.([]byte)
			if !ok {
				return fail(x)
			}
			out[i] = b
		}
		return out, nil
	}
	return fail(arr)
}

// sinkKeyString appends a key value's identity, for dropping all but the
// last record of each key from an upsert batch.
func sinkKeyString(b []byte, a any) []byte {
	switch x := a.(type) {
	case int64:
		b = strconv.AppendInt(b, x, 10)
	case int32:
		b = strconv.AppendInt(b, int64(x), 10)
	case int16:
		b = strconv.AppendInt(b, int64(x), 10)
	case int8:
		b = strconv.AppendInt(b, int64(x), 10)
	case string:
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		b = append(b, x...)
	case []byte:
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, '#')
		b = append(b, x...)
	case float64:
		b = strconv.AppendUint(b, math.Float64bits(x), 16)
	case float32:
		b = strconv.AppendUint(b, uint64(math.Float32bits(x)), 16)
	case bool:
		b = strconv.AppendBool(b, x)
	case time.Time:
		b = strconv.AppendInt(b, x.UnixNano(), 10)
	case nil:
		b = append(b, '~')
	default:
		b = fmt.Appendf(b, "%T=%v", x, x)
	}
	return append(b, 0)
}
