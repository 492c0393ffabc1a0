package source

import (
	"fmt"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
	"math"
	"strings"
	"time"
)

// srcOffset is a table's position, as Confluent's TimestampIncrementingOffset:
// the last incrementing value and/or the last timestamp read.
type srcOffset struct {
	inc    int64
	hasInc bool
	ts     time.Time
	hasTS  bool
}

// incOrDefault is the incrementing value to resume after; Confluent reads
// a missing one as -1.
func (o srcOffset) incOrDefault() int64 {
	if o.hasInc {
		return o.inc
	}
	return -1
}

// tsOrDefault is the timestamp to resume after; Confluent reads a missing
// one as the epoch.
func (o srcOffset) tsOrDefault() time.Time {
	if o.hasTS {
		return o.ts
	}
	return time.Unix(0, 0).UTC()
}

// toMap renders the offset with Confluent's keys and types: incrementing
// as a Long, timestamp as java.sql.Timestamp.getTime() (epoch ms) and
// timestamp_nanos as getNanos() (the whole fraction of the second in ns).
func (o srcOffset) toMap() map[string]any {
	m := make(map[string]any, 3)
	if o.hasInc {
		m[OffsetIncrementing] = o.inc
	}
	if o.hasTS {
		m[OffsetTimestamp] = o.ts.UnixMilli()
		m[OffsetTimestampNanos] = int64(o.ts.Nanosecond())
	}
	return m
}

// srcOffsetFromMap reads a stored offset as Confluent does: timestamp in
// ms, then its fraction of a second replaced by timestamp_nanos when
// present. Numbers must be integers (Confluent casts them to Long).
func srcOffsetFromMap(m map[string]any) (srcOffset, error) {
	var o srcOffset
	if len(m) == 0 {
		return o, nil
	}
	var err error
	if v, ok := m[OffsetIncrementing]; ok && v != nil {
		if o.inc, err = srcOffsetLong(OffsetIncrementing, v); err != nil {
			return o, err
		}
		o.hasInc = true
	}
	if v, ok := m[OffsetTimestamp]; ok && v != nil {
		ms, err := srcOffsetLong(OffsetTimestamp, v)
		if err != nil {
			return o, err
		}
		o.ts, o.hasTS = time.UnixMilli(ms).UTC(), true
		if v, ok := m[OffsetTimestampNanos]; ok && v != nil {
			nanos, err := srcOffsetLong(OffsetTimestampNanos, v)
			if err != nil {
				return o, err
			}
			if nanos < 0 || nanos > 999_999_999 {
				return o, fmt.Errorf("The value for the '%s' key in the offset must be between 0 and 999999999, got %d",
					OffsetTimestampNanos, nanos)
			}
			sec := ms / 1000
			if ms%1000 < 0 {
				sec--
			}
			o.ts = time.Unix(sec, nanos).UTC()
		}
	}
	return o, nil
}

// srcOffsetLong reads an offset number that Confluent casts to Long.
func srcOffsetLong(key string, v any) (int64, error) {
	switch n := v.(type) {
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case float64:
		if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
			return 0, fmt.Errorf("The value for the '%s' key in the offset is expected to be a Long value, got the "+
				"floating-point number %v: write it as an integer", key, n)
		}
	}
	what := fmt.Sprintf("%v (%T)", v, v)
	switch v.(type) {
	case string:
		what = fmt.Sprintf("the string %q: write it as a number", v)
	case bool:
		what = fmt.Sprintf("the boolean %v", v)
	case float64, float32:
		what = fmt.Sprintf("the number %v, which is not an integer", v)
	}
	return 0, fmt.Errorf("The value for the '%s' key in the offset is expected to be a Long value, got %s", key, what)
}

// srcTablePartition is the protocol-1 source partition of a table.
func srcTablePartition(id jdbcdb.TableID) map[string]any {
	return map[string]any{PartitionProtocolKey: PartitionProtocolV1, PartitionTableKey: id.String()}
}

// srcLegacyPartition is the protocol-0 partition of a table (and the
// partition of bulk mode): the unqualified table name.
func srcLegacyPartition(id jdbcdb.TableID) map[string]any {
	return map[string]any{PartitionTableKey: id.Table}
}

// srcQueryPartition is the one partition of query mode.
func srcQueryPartition() map[string]any {
	return map[string]any{PartitionQueryKey: PartitionQueryValue}
}

// srcStatement builds a querier's SQL as Confluent's TableQuerier and
// TimestampIncrementingCriteria do: the base statement, the mode's
// criteria and the suffix. table is nil in query mode, where columns are
// not qualified.
func srcStatement(d *jdbcdb.Dialect, table *jdbcdb.TableID, query, mode, incCol string, tsCols []string, suffix string) string {
	var b strings.Builder
	if table != nil {
		b.WriteString("SELECT * FROM ")
		b.WriteString(d.QuoteTable(*table))
	} else {
		b.WriteString(query)
	}
	col := func(name string) string {
		if table != nil {
			return d.QuoteTable(*table) + "." + d.Quote(name)
		}
		return d.Quote(name)
	}
	ts := ""
	if len(tsCols) > 0 {
		parts := make([]string, len(tsCols))
		for i, c := range tsCols {
			parts[i] = col(c)
			if d == jdbcdb.SQLite {
				// SQLite keeps timestamps as text: compare them in one
				// normal form, to the millisecond.
				parts[i] = "strftime('%Y-%m-%d %H:%M:%f', " + parts[i] + ")"
			}
		}
		ts = parts[0]
		if len(parts) > 1 {
			ts = "COALESCE(" + strings.Join(parts, ",") + ")"
		}
	}
	p := func(n int) string { return d.Placeholder(n) }
	switch mode {
	case srcModeIncrementing:
		inc := col(incCol)
		fmt.Fprintf(&b, " WHERE %s > %s ORDER BY %s ASC", inc, p(1), inc)
	case srcModeTimestamp:
		fmt.Fprintf(&b, " WHERE %s > %s AND %s < %s ORDER BY %s ASC", ts, p(1), ts, p(2), ts)
	case srcModeTimestampIncrementing:
		inc := col(incCol)
		fmt.Fprintf(&b, " WHERE %s < %s AND ((%s = %s AND %s > %s) OR %s > %s) ORDER BY %s,%s ASC",
			ts, p(1), ts, p(2), inc, p(3), ts, p(4), ts, inc)
	}
	if s := strings.TrimSpace(suffix); s != "" {
		b.WriteString(" ")
		b.WriteString(s)
	}
	return b.String()
}

// srcArgs are the statement's parameters for the mode, as Confluent binds
// them: incrementing (last id); timestamp (begin, end);
// timestamp+incrementing (end, begin, last id, begin).
func srcArgs(d *jdbcdb.Dialect, mode string, o srcOffset, end time.Time, loc *time.Location) []any {
	begin := srcBindTime(d, o.tsOrDefault(), loc)
	switch mode {
	case srcModeIncrementing:
		return []any{o.incOrDefault()}
	case srcModeTimestamp:
		return []any{begin, srcBindTime(d, end, loc)}
	case srcModeTimestampIncrementing:
		return []any{srcBindTime(d, end, loc), begin, o.incOrDefault(), begin}
	}
	return nil
}

// srcBindTime binds an instant as Confluent's setTimestamp with a
// db.timezone calendar does: a column without time zone is compared with
// the wall clock in db.timezone.
func srcBindTime(d *jdbcdb.Dialect, t time.Time, loc *time.Location) any {
	w := t.In(loc)
	switch d {
	case jdbcdb.PostgreSQL:
		// pgx sends a timestamp parameter as the wall clock of the
		// time's location, a timestamptz one as the instant.
		return w
	case jdbcdb.MySQL:
		// The driver sends the wall clock in UTC, its configured zone.
		return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	}
	return w.Format("2006-01-02 15:04:05.000")
}

// srcFormatTables renders tables as Confluent's task config "tables": the
// quoted fully-qualified names, comma-separated.
func srcFormatTables(d *jdbcdb.Dialect, ids []jdbcdb.TableID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = d.QuoteTable(id)
	}
	return strings.Join(parts, ",")
}

// srcParseTables reads a "tables" value back: names separated by commas,
// each of parts separated by dots, quoted or not (a doubled quote
// character is a quote in a quoted part).
func srcParseTables(d *jdbcdb.Dialect, s string) ([]jdbcdb.TableID, error) {
	var out []jdbcdb.TableID
	var parts []string
	var cur strings.Builder
	quote := d.QuoteChar()
	quoted, wasQuoted := false, false
	flushPart := func() {
		p := cur.String()
		if !wasQuoted {
			p = strings.TrimSpace(p)
		}
		parts = append(parts, p)
		cur.Reset()
		wasQuoted = false
	}
	flushTable := func() error {
		flushPart()
		if len(parts) == 1 && parts[0] == "" {
			parts = nil
			return nil
		}
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
		case 3:
			id.Catalog, id.Schema, id.Table = parts[0], parts[1], parts[2]
		default:
			return fmt.Errorf("invalid table name in %q: more than three parts", s)
		}
		if id.Table == "" {
			return fmt.Errorf("invalid table name in %q: empty table name", s)
		}
		out = append(out, id)
		parts = nil
		return nil
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quoted && ch == quote && i+1 < len(s) && s[i+1] == quote:
			cur.WriteByte(quote)
			i++
		case ch == quote:
			quoted = !quoted
			if quoted {
				cur.Reset()
			}
			wasQuoted = true
		case quoted:
			cur.WriteByte(ch)
		case ch == '.':
			flushPart()
		case ch == ',':
			if err := flushTable(); err != nil {
				return nil, err
			}
		case wasQuoted && (ch == ' ' || ch == '\t'):
		default:
			cur.WriteByte(ch)
		}
	}
	if quoted {
		return nil, fmt.Errorf("invalid table list %q: unterminated quote", s)
	}
	if err := flushTable(); err != nil {
		return nil, err
	}
	return out, nil
}

// srcTableMatches says whether a table list entry names t, as Confluent's
// TableMonitorThread matches table.whitelist and table.blacklist: the
// unquoted or quoted fully-qualified name, or the bare table name.
func srcTableMatches(d *jdbcdb.Dialect, entry string, t jdbcdb.TableID) bool {
	return entry == t.String() || entry == d.QuoteTable(t) || entry == t.Table
}

// srcSelectTables keeps the tables the whitelist/blacklist or include/
// exclude settings select.
func srcSelectTables(cfg *srcConfig, d *jdbcdb.Dialect, tables []srcTable) []jdbcdb.TableID {
	var out []jdbcdb.TableID
	for _, t := range tables {
		if srcSelected(cfg, d, t.id) {
			out = append(out, t.id)
		}
	}
	return out
}

func srcSelected(cfg *srcConfig, d *jdbcdb.Dialect, id jdbcdb.TableID) bool {
	anyEntry := func(list []string) bool {
		for _, e := range list {
			if srcTableMatches(d, e, id) {
				return true
			}
		}
		return false
	}
	switch {
	case len(cfg.whitelist) > 0:
		return anyEntry(cfg.whitelist)
	case len(cfg.blacklist) > 0:
		return !anyEntry(cfg.blacklist)
	case len(cfg.include) > 0:
		names := []string{id.String(), d.QuoteTable(id), id.Table}
		in := false
		for _, re := range cfg.include {
			for _, n := range names {
				if re.MatchString(n) {
					in = true
				}
			}
		}
		if !in {
			return false
		}
		for _, re := range cfg.exclude {
			for _, n := range names {
				if re.MatchString(n) {
					return false
				}
			}
		}
	}
	return true
}
