package sink

import (
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/jdbc/internal/jdbcdb"
)

// sinkDataError is a problem with the records or the config, not with the
// database: retrying cannot fix it, so the task fails at once.
type sinkDataError struct{ msg string }

func (e *sinkDataError) Error() string { return e.msg }

func sinkDataErrorf(format string, args ...any) error {
	return &sinkDataError{msg: fmt.Sprintf(format, args...)}
}

// Where a column's value comes from.
const (
	sinkSrcTopic = iota
	sinkSrcPartition
	sinkSrcOffset
	sinkSrcKey      // the whole (primitive) record key
	sinkSrcKeyField // a field of the key struct
	sinkSrcValue    // a field of the value struct
)

// sinkColumn is one column written for a record: Confluent's
// SinkRecordField plus where its value comes from.
type sinkColumn struct {
	name   string
	schema *connect.Schema
	key    bool
	source int
	index  int // field index in the key or value struct
	kind   sinkKind
}

// optional is SinkRecordField.isOptional: key columns never are.
func (c *sinkColumn) optional() bool { return !c.key && c.schema.Optional }

// String renders the column as Confluent's SinkRecordField.toString, for
// messages that name missing fields.
func (c *sinkColumn) String() string {
	s := "Schema{" + string(c.schema.Type) + "}"
	if c.schema.Name != "" {
		s = "Schema{" + c.schema.Name + ":" + string(c.schema.Type) + "}"
	}
	return fmt.Sprintf("SinkRecordField{schema=%s, name='%s', isPrimaryKey=%t}", s, c.name, c.key)
}

// sinkFields is Confluent's FieldsMetadata for one key and value schema:
// the key columns, the other columns, and every column in table order.
type sinkFields struct {
	keySchema, valueSchema *connect.Schema
	keys                   []*sinkColumn
	nonKeys                []*sinkColumn
	all                    []*sinkColumn
}

// extractSinkFields works out the columns of a table from the record
// schemas, as FieldsMetadata.extract does, and checks that every column
// has a type the database can hold.
func extractSinkFields(cfg *sinkConfig, d *jdbcdb.Dialect, table string, keySchema, valueSchema *connect.Schema) (*sinkFields, error) {
	if valueSchema != nil && valueSchema.Type != connect.TypeStruct {
		return nil, sinkDataErrorf("Value schema must be of type Struct")
	}
	f := &sinkFields{keySchema: keySchema, valueSchema: valueSchema}
	byName := map[string]*sinkColumn{}
	addKey := func(c *sinkColumn) {
		c.key = true
		f.keys = append(f.keys, c)
		byName[c.name] = c
	}
	switch cfg.pkMode {
	case sinkPKNone:
	case sinkPKKafka:
		names := sinkDefaultKafkaPKNames
		if len(cfg.pkFields) == 3 {
			names = cfg.pkFields
		} else if len(cfg.pkFields) != 0 {
			return nil, sinkDataErrorf("PK mode for table '%s' is KAFKA so there should either be no field names defined for defaults [%s] to be applicable, or exactly 3, defined fields are: [%s]",
				table, strings.Join(sinkDefaultKafkaPKNames, ", "), strings.Join(cfg.pkFields, ", "))
		}
		addKey(&sinkColumn{name: names[0], schema: connect.StringSchema, source: sinkSrcTopic})
		addKey(&sinkColumn{name: names[1], schema: connect.Int32Schema, source: sinkSrcPartition})
		addKey(&sinkColumn{name: names[2], schema: connect.Int64Schema, source: sinkSrcOffset})
	case sinkPKRecordKey:
		if keySchema == nil {
			return nil, sinkDataErrorf("PK mode for table '%s' is RECORD_KEY, but record key schema is missing", table)
		}
		switch {
		case keySchema.Type.IsPrimitive():
			if len(cfg.pkFields) != 1 {
				return nil, sinkDataErrorf("Need exactly one PK column defined since the key schema for records is a primitive type, defined columns are: [%s]",
					strings.Join(cfg.pkFields, ", "))
			}
			addKey(&sinkColumn{name: cfg.pkFields[0], schema: keySchema, source: sinkSrcKey})
		case keySchema.Type == connect.TypeStruct:
			names := cfg.pkFields
			if len(names) == 0 {
				for _, kf := range keySchema.Fields {
					names = append(names, kf.Name)
				}
			}
			for _, n := range names {
				kf := keySchema.Field(n)
				if kf == nil {
					return nil, sinkDataErrorf("PK mode for table '%s' is RECORD_KEY with configured PK fields [%s], but record key schema does not contain field: %s",
						table, strings.Join(cfg.pkFields, ", "), n)
				}
				addKey(&sinkColumn{name: n, schema: kf.Schema, source: sinkSrcKeyField, index: kf.Index})
			}
		default:
			return nil, sinkDataErrorf("Key schema must be primitive type or Struct, but is of type: %s", keySchema.Type)
		}
	case sinkPKRecordValue:
		if valueSchema == nil {
			return nil, sinkDataErrorf("PK mode for table '%s' is RECORD_VALUE, but record value schema is missing", table)
		}
		names := cfg.pkFields
		if len(names) == 0 {
			for _, vf := range valueSchema.Fields {
				names = append(names, vf.Name)
			}
		}
		for _, n := range names {
			vf := valueSchema.Field(n)
			if vf == nil {
				return nil, sinkDataErrorf("PK mode for table '%s' is RECORD_VALUE with configured PK fields [%s], but record value schema does not contain field: %s",
					table, strings.Join(cfg.pkFields, ", "), n)
			}
			addKey(&sinkColumn{name: n, schema: vf.Schema, source: sinkSrcValue, index: vf.Index})
		}
	}
	if valueSchema != nil {
		for _, vf := range valueSchema.Fields {
			if byName[vf.Name] != nil && byName[vf.Name].key {
				continue
			}
			if cfg.fieldsWhitelist != nil && !cfg.fieldsWhitelist[vf.Name] {
				continue
			}
			c := &sinkColumn{name: vf.Name, schema: vf.Schema, source: sinkSrcValue, index: vf.Index}
			f.nonKeys = append(f.nonKeys, c)
			byName[c.name] = c
		}
	}
	if len(byName) == 0 {
		return nil, sinkDataErrorf("No fields found using key and value schemas for table: %s", table)
	}
	// Table order: the Kafka coordinates, the value's fields in schema
	// order, then the rest (key fields) by name.
	seen := map[string]bool{}
	for _, n := range sinkDefaultKafkaPKNames {
		if c := byName[n]; c != nil {
			f.all = append(f.all, c)
			seen[n] = true
		}
	}
	if valueSchema != nil {
		for _, vf := range valueSchema.Fields {
			if c := byName[vf.Name]; c != nil && !seen[vf.Name] {
				f.all = append(f.all, c)
				seen[vf.Name] = true
			}
		}
	}
	var rest []string
	for n := range byName {
		if !seen[n] {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	for _, n := range rest {
		f.all = append(f.all, byName[n])
	}
	for _, c := range f.all {
		k, err := sinkKindOf(d, c.schema)
		if err != nil {
			return nil, sinkDataErrorf("Cannot write field '%s' to table %s: %v", c.name, table, err)
		}
		c.kind = k
	}
	return f, nil
}

// sinkKind is how a column's Connect value becomes a database value.
type sinkKind int

const (
	sinkKindInt sinkKind = iota
	sinkKindFloat32
	sinkKindFloat64
	sinkKindBool
	sinkKindString
	sinkKindBytes
	sinkKindDecimal
	sinkKindDate
	sinkKindTime
	sinkKindTimestamp
	sinkKindArray // PostgreSQL arrays of primitives
)

func sinkKindOf(d *jdbcdb.Dialect, s *connect.Schema) (sinkKind, error) {
	switch s.Name {
	case connect.DecimalName:
		return sinkKindDecimal, nil
	case connect.DateName:
		return sinkKindDate, nil
	case connect.TimeName:
		return sinkKindTime, nil
	case connect.TimestampName:
		return sinkKindTimestamp, nil
	}
	switch s.Type {
	case connect.TypeInt8, connect.TypeInt16, connect.TypeInt32, connect.TypeInt64:
		return sinkKindInt, nil
	case connect.TypeFloat32:
		return sinkKindFloat32, nil
	case connect.TypeFloat64:
		return sinkKindFloat64, nil
	case connect.TypeBoolean:
		return sinkKindBool, nil
	case connect.TypeString:
		return sinkKindString, nil
	case connect.TypeBytes:
		return sinkKindBytes, nil
	case connect.TypeArray:
		// Confluent's PostgreSQL dialect writes arrays of primitives
		// into array columns; no other dialect takes arrays.
		if d == jdbcdb.PostgreSQL && s.Value != nil && s.Value.Name == "" && s.Value.Type.IsPrimitive() {
			return sinkKindArray, nil
		}
	}
	return 0, fmt.Errorf("Unsupported source data type: %s", sinkSchemaDesc(s))
}

func sinkSchemaDesc(s *connect.Schema) string {
	if s.Type == connect.TypeArray && s.Value != nil {
		return "ARRAY of " + sinkSchemaDesc(s.Value)
	}
	if s.Name != "" {
		return string(s.Type) + " (" + s.Name + ")"
	}
	return string(s.Type)
}

// javaSimpleName names the Java class a Connect value would have, for
// Confluent's messages ("a HashMap value").
func javaSimpleName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any, []connect.MapEntry:
		return "HashMap"
	case []any:
		return "ArrayList"
	case string:
		return "String"
	case int8:
		return "Byte"
	case int16:
		return "Short"
	case int32:
		return "Integer"
	case int64, int:
		return "Long"
	case float32:
		return "Float"
	case float64:
		return "Double"
	case bool:
		return "Boolean"
	case []byte:
		return "byte[]"
	case *connect.Struct:
		return "Struct"
	case *connect.Decimal, *big.Float:
		return "BigDecimal"
	case time.Time:
		return "Date"
	}
	return fmt.Sprintf("%T", v)
}

// javaSchemaType is Confluent's StringUtils.schemaTypeOrNull.
func javaSchemaType(s *connect.Schema) string {
	if s == nil {
		return "null"
	}
	if s.Type == connect.TypeStruct {
		return "Struct"
	}
	return strings.ToLower(string(s.Type))
}

// checkSinkRecord is Confluent's RecordValidator: which keys and values
// the configured modes need. Records without a value schema (schemaless
// JSON, for one) are refused, as Confluent refuses them.
func checkSinkRecord(cfg *sinkConfig, r *connect.SinkRecord) error {
	where := func() string {
		ts := "null"
		if !r.Timestamp.IsZero() {
			ts = fmt.Sprint(r.Timestamp.UnixMilli())
		}
		return fmt.Sprintf("(topic='%s',partition=%d,offset=%d,timestamp=%s)", r.Topic, r.Partition, r.Offset, ts)
	}
	if r.Value != nil && r.ValueSchema != nil && r.ValueSchema.Type == connect.TypeStruct && cfg.pkMode != sinkPKRecordKey && !cfg.deleteEnabled {
		if _, ok := r.Value.(*connect.Struct); ok {
			return nil // the common case, without building messages
		}
	}
	if cfg.pkMode == sinkPKRecordKey || cfg.deleteEnabled {
		var what string
		_, isStruct := r.Key.(*connect.Struct)
		switch {
		case r.Key == nil:
			what = "non-null record keys"
		case r.KeySchema == nil:
			what = "non-null record keys with schemas"
		case r.KeySchema.Type != connect.TypeStruct && !r.KeySchema.Type.IsPrimitive(),
			(r.KeySchema.Type == connect.TypeStruct) != isStruct:
			what = "non-null record keys that are either structs or a single primitive value"
		}
		if what != "" {
			return sinkDataErrorf("%s%s, but found record at %s with a %s key and %s key schema.",
				sinkRequires(cfg), what, where(), javaSimpleName(r.Key), javaSchemaType(r.KeySchema))
		}
	}
	if r.Value == nil && cfg.allowsTombstones() {
		return nil
	}
	_, isStruct := r.Value.(*connect.Struct)
	if isStruct && r.ValueSchema != nil && r.ValueSchema.Type == connect.TypeStruct {
		return nil
	}
	prefix := sinkRequires(cfg)
	switch {
	case r.Value == nil || r.ValueSchema == nil:
		return sinkDataErrorf("%snon-null record values that are structs, but found record at %s with a %s value and %s value schema.",
			prefix, where(), javaSimpleName(r.Value), javaSchemaType(r.ValueSchema))
	case r.ValueSchema.Type != connect.TypeStruct || !isStruct:
		return sinkDataErrorf("%srecord values to be structs, but found record at %s with a %s value and %s value schema.",
			prefix, where(), javaSimpleName(r.Value), javaSchemaType(r.ValueSchema))
	}
	return nil
}

func sinkRequires(cfg *sinkConfig) string {
	return fmt.Sprintf("The JDBC sink connector '%s' is configured with 'delete.enabled=%t' and 'pk.mode=%s' and therefore requires ",
		sinkJavaNull(cfg.name), cfg.deleteEnabled, cfg.pkMode)
}

func sinkJavaNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// value returns the Connect value of a column for a record.
func (c *sinkColumn) value(f *sinkFields, r *connect.SinkRecord) any {
	switch c.source {
	case sinkSrcTopic:
		return r.Topic
	case sinkSrcPartition:
		return r.Partition
	case sinkSrcOffset:
		return r.Offset
	case sinkSrcKey:
		return r.Key
	case sinkSrcKeyField:
		return sinkStructField(r.Key, f.keySchema, c)
	}
	return sinkStructField(r.Value, f.valueSchema, c)
}

func sinkStructField(v any, schema *connect.Schema, c *sinkColumn) any {
	st, _ := v.(*connect.Struct)
	if st == nil {
		return nil
	}
	if st.Schema() == schema {
		return st.At(c.index)
	}
	return st.Get(c.name)
}

// sameSchema reports whether two schemas are equal, as Java's
// ConnectSchema.equals: same type, optionality, default, name, version,
// doc, parameters and children.
func sameSchema(a, b *connect.Schema) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	if a.Type != b.Type || a.Optional != b.Optional || a.Name != b.Name || a.Version != b.Version ||
		a.Doc != b.Doc || !slices.Equal(a.Parameters, b.Parameters) || !sinkSameDefault(a.Default, b.Default) ||
		len(a.Fields) != len(b.Fields) || !sameSchema(a.Key, b.Key) || !sameSchema(a.Value, b.Value) {
		return false
	}
	for i := range a.Fields {
		if a.Fields[i].Name != b.Fields[i].Name || !sameSchema(a.Fields[i].Schema, b.Fields[i].Schema) {
			return false
		}
	}
	return true
}

func sinkSameDefault(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return fmt.Sprintf("%T %v", a, a) == fmt.Sprintf("%T %v", b, b)
}
