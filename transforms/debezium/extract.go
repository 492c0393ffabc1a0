package debezium

import (
	"slices"
	"strings"

	"github.com/connectd/connectd/connect"
)

// ExtractNewRecordState is io.debezium.transforms.ExtractNewRecordState:
// a change event's envelope becomes the row it carries (after, or before
// for a delete), with delete events and tombstones handled as
// delete.tombstone.handling.mode says, envelope fields copied into the row
// (add.fields) or the headers (add.headers), and the topic taken from a
// column (route.by.field). Records that are not change events (heartbeats,
// schema changes, schemaless values) pass unchanged; truncate events are
// dropped.
type ExtractNewRecordState struct {
	deletes        deleteHandling
	keepTombstones bool
	fields         []fieldRef
	headers        []fieldRef
	routeByField   string

	dropFieldsHeader         string
	dropFieldsFromKey        bool
	dropFieldsKeepCompatible bool
	replaceNullWithDefault   bool

	// Flattened schemas with the added fields, by row schema and op
	// (Debezium's cache of 64).
	added *lru[addedKey, *connect.Schema]
	// Row schemas with __deleted, and row schemas without dropped fields.
	deleted *lru[*connect.Schema, *connect.Schema]
	dropped *lru[droppedKey, *connect.Schema]
}

// deleteHandling is what becomes of a delete event.
type deleteHandling int

const (
	deleteDrop        deleteHandling = iota // dropped
	deleteNullValue                         // the row's schema with a null value, which sinks read as a delete
	deleteRewrite                           // the old row with __deleted=true (and others with __deleted=false)
	deleteToTombstone                       // a tombstone: no value schema, no value
)

type addedKey struct {
	row *connect.Schema
	op  string
}

type droppedKey struct {
	in      *connect.Schema
	exclude string
}

// The keys of ExtractNewRecordState.
const (
	keyDeleteTombstoneHandling = "delete.tombstone.handling.mode"
	keyDropTombstones          = "drop.tombstones"
	keyDeleteHandling          = "delete.handling.mode"
	keyRouteByField            = "route.by.field"
	keyAddFieldsPrefix         = "add.fields.prefix"
	keyAddFields               = "add.fields"
	keyAddHeadersPrefix        = "add.headers.prefix"
	keyAddHeaders              = "add.headers"
	keyReplaceNullWithDefault  = "replace.null.with.default"
	keyDropFieldsHeader        = "drop.fields.header.name"
	keyDropFieldsFromKey       = "drop.fields.from.key"
	keyDropFieldsKeepSchema    = "drop.fields.keep.schema.compatible"
)

var (
	deleteTombstoneModes = []string{"drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"}
	legacyDeleteModes    = []string{"drop", "rewrite", "none"}
)

// deletedField is the field the rewrite modes add.
const deletedField = "__deleted"

// NewExtractNewRecordState returns an unconfigured transform.
func NewExtractNewRecordState() *ExtractNewRecordState { return &ExtractNewRecordState{} }

func enumValidator(values []string) connect.ConfigValidator {
	return func(v any) error {
		s, _ := v.(string)
		if slices.Contains(values, strings.ToLower(strings.TrimSpace(s))) {
			return nil
		}
		return &enumError{values}
	}
}

type enumError struct{ values []string }

func (e *enumError) Error() string { return "Value must be one of " + enumLiterals(e.values...) }

// Config returns Debezium's keys, with the two that 3.2 removed
// (drop.tombstones, delete.handling.mode), which still configure the
// transform when delete.tombstone.handling.mode is not set.
func (t *ExtractNewRecordState) Config() *connect.ConfigDef {
	low := connect.Low
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: keyDeleteTombstoneHandling, Type: connect.ConfigString, Default: "tombstone", Importance: connect.Medium, Width: connect.WidthMedium,
			DisplayName: "Handle delete and tombstone records", Validator: enumValidator(deleteTombstoneModes), Recommended: strings.Split(enumLiterals(deleteTombstoneModes...), ", "),
			Doc: "How to handle delete records. Options are: " +
				"drop - Remove the delete event and tombstone from the stream." +
				"tombstone (default) - For each delete event, leave only a tombstone in the stream." +
				"rewrite - Remove tombstone from the record, and add a `__deleted` field with the value `true`." +
				"rewrite-with-tombstone - Retain tombstone in record and add a `__deleted` field with the value `true`." +
				"delete-to-tombstone - Convert delete events to tombstone events and drop tombstone events."}).
		Define(connect.ConfigKey{Name: keyRouteByField, Type: connect.ConfigString, Default: "", Importance: low, Width: connect.WidthLong,
			DisplayName: "Route by field name",
			Doc:         "The column which determines how the events will be routed, the value will replace the topic name."}).
		Define(connect.ConfigKey{Name: keyAddFieldsPrefix, Type: connect.ConfigString, Default: "__", Importance: low, Width: connect.WidthShort,
			DisplayName: "Field prefix to be added to each field.",
			Doc:         "Adds this prefix to each field listed."}).
		Define(connect.ConfigKey{Name: keyAddFields, Type: connect.ConfigList, Default: "", Importance: low, Width: connect.WidthLong,
			DisplayName: "Adds the specified field(s) to the message if they exist.",
			Doc: "Adds each field listed, prefixed with __ (or __<struct>_ if the struct is specified). " +
				"Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. " +
				"Optionally one can also map new field name like version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP." +
				"Please note that the new field name is case-sensitive."}).
		Define(connect.ConfigKey{Name: keyAddHeadersPrefix, Type: connect.ConfigString, Default: "__", Importance: low, Width: connect.WidthShort,
			DisplayName: "Header prefix to be added to each header.",
			Doc:         "Adds this prefix listed to each header."}).
		Define(connect.ConfigKey{Name: keyAddHeaders, Type: connect.ConfigList, Default: "", Importance: low, Width: connect.WidthLong,
			DisplayName: "Adds the specified fields to the header if they exist.",
			Doc: "Adds each field listed to the header,  __ (or __<struct>_ if the struct is specified). " +
				"Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. " +
				"Optionally one can also map new field name like version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP." +
				"Please note that the new field name is case-sensitive."}).
		Define(connect.ConfigKey{Name: keyDropFieldsHeader, Type: connect.ConfigString, Importance: low, Width: connect.WidthShort,
			DisplayName: "Specifies a header that contains a list of field names to be removed",
			Doc:         "Specifies the name of a header that contains a list of fields to be removed from the event value."}).
		Define(connect.ConfigKey{Name: keyDropFieldsFromKey, Type: connect.ConfigBoolean, Default: false, Importance: low, Width: connect.WidthShort,
			DisplayName: "Specifies whether the fields to be dropped should also be omitted from the key",
			Doc: "Specifies whether to apply the drop fields behavior to the event key as well as the value. " +
				"Default behavior is to only remove fields from the event value, not the key."}).
		Define(connect.ConfigKey{Name: keyDropFieldsKeepSchema, Type: connect.ConfigBoolean, Default: true, Importance: low, Width: connect.WidthShort,
			DisplayName: "Specifies if fields are dropped, will the event's schemas be compatible",
			Doc: "Controls the output event's schema compatibility when using the drop fields feature. " +
				"`true`: dropped fields are removed if the schema indicates its optional leaving the schemas unchanged, " +
				"`false`: dropped fields are removed from the key/value schemas, regardless of optionality."}).
		Define(connect.ConfigKey{Name: keyReplaceNullWithDefault, Type: connect.ConfigBoolean, Default: true, Importance: low, Width: connect.WidthShort,
			DisplayName: "replace null field value with default",
			Doc:         "When this option is enabled, null field values are replaced by source-defined defaults when rewriting the record."}).
		Define(connect.ConfigKey{Name: keyDropTombstones, Type: connect.ConfigBoolean, Default: true, Importance: low, Width: connect.WidthShort,
			DisplayName: "Drop tombstones",
			Doc: "Debezium by default generates a tombstone record to enable Kafka compaction after " +
				"a delete record was generated. This record is usually filtered out to avoid duplicates " +
				"as a delete record is converted to a tombstone record, too" +
				"Note: This option is scheduled for removal in a future release, use \"delete.tombstone.handling.mode\" instead"}).
		Define(connect.ConfigKey{Name: keyDeleteHandling, Type: connect.ConfigString, Default: "drop", Importance: connect.Medium, Width: connect.WidthMedium,
			DisplayName: "Handle delete records", Validator: enumValidator(legacyDeleteModes), Recommended: strings.Split(enumLiterals(legacyDeleteModes...), ", "),
			Doc: "How to handle delete records. Options are: " +
				"none - records are passed," +
				"drop - records are removed (the default)," +
				"rewrite - __deleted field is added to records." +
				"Note: This option is scheduled for removal in a future release, use \"delete.tombstone.handling.mode\" instead"})
}

// Configure reads the keys. delete.tombstone.handling.mode wins; without
// it, a config that sets drop.tombstones or delete.handling.mode gets
// their meaning (each with its own default: deletes dropped, tombstones
// dropped), as Debezium up to 3.1 gave it.
func (t *ExtractNewRecordState) Configure(config map[string]string) error {
	pc, err := t.Config().Parse(config)
	if err != nil {
		return err
	}
	_, hasDropTombstones := config[keyDropTombstones]
	_, hasDeleteHandling := config[keyDeleteHandling]
	if mode, ok := config[keyDeleteTombstoneHandling]; (ok && !isBlank(mode)) || !(hasDropTombstones || hasDeleteHandling) {
		switch strings.ToLower(strings.TrimSpace(pc.String(keyDeleteTombstoneHandling))) {
		case "drop":
			t.deletes = deleteDrop
		case "tombstone":
			t.deletes = deleteNullValue
		case "rewrite":
			t.deletes = deleteRewrite
		case "rewrite-with-tombstone":
			t.deletes, t.keepTombstones = deleteRewrite, true
		case "delete-to-tombstone":
			t.deletes = deleteToTombstone
		}
	} else {
		t.keepTombstones = !pc.Bool(keyDropTombstones)
		switch strings.ToLower(strings.TrimSpace(pc.String(keyDeleteHandling))) {
		case "drop":
			t.deletes = deleteDrop
		case "none":
			t.deletes = deleteNullValue
		case "rewrite":
			t.deletes = deleteRewrite
		}
	}
	if t.fields, err = parseFieldRefs(rawString(config, keyAddFieldsPrefix, "__"), rawString(config, keyAddFields, "")); err != nil {
		return configError(keyAddFields, config[keyAddFields], err.Error())
	}
	if t.headers, err = parseFieldRefs(rawString(config, keyAddHeadersPrefix, "__"), rawString(config, keyAddHeaders, "")); err != nil {
		return configError(keyAddHeaders, config[keyAddHeaders], err.Error())
	}
	t.routeByField = rawString(config, keyRouteByField, "")
	t.dropFieldsHeader = rawString(config, keyDropFieldsHeader, "")
	t.dropFieldsFromKey = pc.Bool(keyDropFieldsFromKey)
	t.dropFieldsKeepCompatible = pc.Bool(keyDropFieldsKeepSchema)
	t.replaceNullWithDefault = pc.Bool(keyReplaceNullWithDefault)
	t.added = newLRU[addedKey, *connect.Schema](64)
	t.deleted = newLRU[*connect.Schema, *connect.Schema](16)
	t.dropped = newLRU[droppedKey, *connect.Schema](16)
	return nil
}

// isEnvelope is Debezium's test for a change event: a value schema whose
// name ends in .Envelope.
func isEnvelope(r *connect.Record) bool {
	return r.ValueSchema != nil && strings.HasSuffix(r.ValueSchema.Name, ".Envelope")
}

// ValueFieldsRead names the envelope fields Apply reads of a change
// event (valuefields.Reader): the row (after, before), op, and what
// add.fields and add.headers name. Of any other value it may pass on
// every field.
func (t *ExtractNewRecordState) ValueFieldsRead(schema *connect.Schema) ([]string, bool) {
	if schema == nil || !strings.HasSuffix(schema.Name, ".Envelope") {
		return nil, true
	}
	fields := []string{"after", "before", "op"}
	for _, refs := range [][]fieldRef{t.fields, t.headers} {
		for _, r := range refs {
			// A reference to block.field falls back to the envelope's
			// own field of that name (fieldRef.valueIn).
			fields = append(fields, r.block, r.field)
		}
	}
	return fields, false
}

// Apply flattens one record.
func (t *ExtractNewRecordState) Apply(r *connect.Record) (*connect.Record, error) {
	tombstone := r.Value == nil
	envelope := isEnvelope(r)
	var env *connect.Struct
	if envelope && !tombstone {
		var err error
		if env, err = requireStruct(r.Value, "field extraction"); err != nil {
			return nil, err
		}
	}
	if (envelope || tombstone) && len(t.headers) > 0 {
		if err := t.addHeaders(r, env); err != nil {
			return nil, err
		}
	}
	if tombstone {
		if t.keepTombstones {
			return r, nil
		}
		return nil, nil
	}
	if !envelope {
		return r, nil
	}
	afterSchema, after, err := extractField(env, "after")
	if err != nil {
		return nil, err
	}
	if after == nil {
		beforeSchema, before, err := extractField(env, "before")
		if err != nil {
			return nil, err
		}
		if before == nil {
			return nil, nil // a truncate event
		}
		return t.deleteEvent(r, env, afterSchema, beforeSchema, before)
	}

	r.ValueSchema, r.Value = afterSchema, after
	if t.deletes == deleteRewrite {
		if err := t.insertDeleted(r, "false"); err != nil {
			return nil, err
		}
	}
	if t.routeByField != "" {
		row, err := requireStruct(r.Value, "Read record to set topic routing for CREATE / UPDATE")
		if err != nil {
			return nil, err
		}
		if err := t.route(r, row); err != nil {
			return nil, err
		}
	}
	if err := t.addFields(r, env); err != nil {
		return nil, err
	}
	if t.dropFieldsHeader != "" {
		if err := t.dropFields(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// deleteEvent handles a delete event: after is null, before is not.
func (t *ExtractNewRecordState) deleteEvent(r *connect.Record, env *connect.Struct, afterSchema, beforeSchema *connect.Schema, before any) (*connect.Record, error) {
	switch t.deletes {
	case deleteDrop:
		return nil, nil
	case deleteNullValue:
		// Not a tombstone (the schema stays): a flattened delete, as the
		// JDBC sinks read it.
		r.ValueSchema, r.Value = afterSchema, nil
	case deleteToTombstone:
		r.ValueSchema, r.Value = nil, nil
	case deleteRewrite:
		r.ValueSchema, r.Value = beforeSchema, before
		if _, ok := before.(*connect.Struct); ok {
			if err := t.insertDeleted(r, "true"); err != nil {
				return nil, err
			}
		}
	}
	if t.routeByField != "" {
		b, ok := env.Get("before").(*connect.Struct)
		if !ok {
			return nil, dataError("Read record to set topic routing for DELETE: the event's before is not a struct")
		}
		if err := t.route(r, b); err != nil {
			return nil, err
		}
	}
	if !isBlank(t.dropFieldsHeader) {
		if err := t.dropFields(r); err != nil {
			return nil, err
		}
	}
	if r.Value != nil {
		if err := t.addFields(r, env); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// extractField is Kafka's ExtractField$Value on an envelope: the field's
// schema and value (or default).
func extractField(env *connect.Struct, name string) (*connect.Schema, any, error) {
	f := env.Schema().Field(name)
	if f == nil {
		return nil, nil, dataError("Unknown field: %s", name)
	}
	return f.Schema, env.At(f.Index), nil
}

// route sets the topic to the row's routing column, unless it is null or
// blank.
func (t *ExtractNewRecordState) route(r *connect.Record, row *connect.Struct) error {
	topic, ok, err := getString(row, t.routeByField)
	if err != nil {
		return err
	}
	if ok && !isBlank(topic) {
		r.Topic = topic
	}
	return nil
}

// addHeaders appends the add.headers fields of the envelope (nil for a
// tombstone, which gets op=d only) to a new copy of the record's headers.
func (t *ExtractNewRecordState) addHeaders(r *connect.Record, env *connect.Struct) error {
	headers := slices.Clip(r.Headers)
	for i := range t.headers {
		ref := &t.headers[i]
		if env == nil {
			if ref.field == "op" {
				headers = append(headers, connect.Header{Key: ref.newField, Schema: connect.StringSchema, Value: "d"})
			}
			continue
		}
		schema, err := ref.schemaIn(env.Schema())
		if err != nil {
			return err
		}
		if schema == nil {
			continue
		}
		v, err := ref.valueIn(env)
		if err != nil {
			return err
		}
		headers = append(headers, connect.Header{Key: ref.newField, Schema: schema, Value: v})
	}
	r.Headers = headers
	return nil
}

// addFields rebuilds the flattened row with the add.fields fields of the
// envelope after its own. Debezium does this for every row, with or
// without such fields, so a flattened row's schema is required even where
// the envelope's row schema is optional.
func (t *ExtractNewRecordState) addFields(r *connect.Record, env *connect.Struct) error {
	row, err := requireStruct(r.Value, "source field insertion")
	if err != nil {
		return err
	}
	op, _, err := getString(env, "op")
	if err != nil {
		return err
	}
	key := addedKey{row: row.Schema(), op: op}
	schema, ok := t.added.get(key)
	if !ok {
		b := newStructLike(row.Schema())
		for _, f := range row.Schema().Fields {
			if err := b.field(f.Name, f.Schema); err != nil {
				return err
			}
		}
		for i := range t.fields {
			fs, err := t.fields[i].schemaIn(env.Schema())
			if err != nil {
				return err
			}
			if fs != nil {
				if err := b.field(t.fields[i].newField, fs); err != nil {
					return err
				}
			}
		}
		schema = b.s
		t.added.put(key, schema)
	}
	out := connect.NewStruct(schema)
	for i, f := range row.Schema().Fields {
		if copied(out, i, row, i) {
			continue
		}
		if err := put(out, f.Name, row.AtWithoutDefault(i)); err != nil {
			return err
		}
	}
	for i := range t.fields {
		ref := &t.fields[i]
		if schema.Field(ref.newField) == nil {
			continue
		}
		v, err := ref.valueIn(env)
		if err != nil {
			return err
		}
		if err := put(out, ref.newField, v); err != nil {
			return err
		}
	}
	r.ValueSchema, r.Value = schema, out
	return nil
}

// insertDeleted is Kafka's InsertField$Value with static.field=__deleted:
// the row with an optional string field __deleted after its own.
func (t *ExtractNewRecordState) insertDeleted(r *connect.Record, value string) error {
	row, err := requireStruct(r.Value, "field insertion")
	if err != nil {
		return err
	}
	schema, ok := t.deleted.get(row.Schema())
	if !ok {
		b := newStructLike(row.Schema())
		for _, f := range row.Schema().Fields {
			if err := b.field(f.Name, f.Schema); err != nil {
				return err
			}
		}
		if err := b.field(deletedField, connect.OptionalStringSchema); err != nil {
			return err
		}
		schema = b.s
		t.deleted.put(row.Schema(), schema)
	}
	out := connect.NewStruct(schema)
	for i, f := range row.Schema().Fields {
		if copied(out, i, row, i) {
			continue
		}
		v := row.AtWithoutDefault(i)
		if t.replaceNullWithDefault {
			v = row.At(i)
		}
		if err := put(out, f.Name, v); err != nil {
			return err
		}
	}
	if err := put(out, deletedField, value); err != nil {
		return err
	}
	r.ValueSchema, r.Value = schema, out
	return nil
}

// dropFields removes from the row (and with drop.fields.from.key from the
// key) the fields the drop.fields.header.name header lists, as
// ExtractChangedRecordState's headers name them: only the optional ones
// while drop.fields.keep.schema.compatible is set.
func (t *ExtractNewRecordState) dropFields(r *connect.Record) error {
	if isBlank(t.dropFieldsHeader) {
		return nil
	}
	var h *connect.Header
	for i := range r.Headers {
		if r.Headers[i].Key == t.dropFieldsHeader {
			h = &r.Headers[i]
			break
		}
	}
	if h == nil || h.Value == nil {
		return nil
	}
	var names []string
	switch v := h.Value.(type) {
	case []string:
		names = v
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return dataError("The header %s must hold a list of field names, found an element of type %T", t.dropFieldsHeader, e)
			}
			names = append(names, s)
		}
	default:
		return dataError("The header %s must hold a list of field names, found %T", t.dropFieldsHeader, h.Value)
	}
	if len(names) == 0 {
		return nil
	}
	if t.dropFieldsFromKey && r.Key != nil {
		schema, v, err := t.exclude(r.KeySchema, r.Key, names)
		if err != nil {
			return err
		}
		r.KeySchema, r.Key = schema, v
	}
	schema, v, err := t.exclude(r.ValueSchema, r.Value, names)
	if err != nil {
		return err
	}
	r.ValueSchema, r.Value = schema, v
	return nil
}

// exclude is Kafka's ReplaceField with exclude set to the names to drop
// from one side of the record.
func (t *ExtractNewRecordState) exclude(schema *connect.Schema, v any, names []string) (*connect.Schema, any, error) {
	if v == nil {
		return schema, v, nil
	}
	if schema == nil {
		if t.dropFieldsKeepCompatible {
			// Nothing says which fields are optional.
			return schema, v, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, nil, dataError("Only Map objects supported in absence of schema for [field replacement], found: %T", v)
		}
		out := make(map[string]any, len(m))
		for k, e := range m {
			if !slices.Contains(names, k) {
				out[k] = e
			}
		}
		return nil, out, nil
	}
	drop := names
	if t.dropFieldsKeepCompatible {
		drop = nil
		for _, f := range schema.Fields {
			if f.Schema.Optional && slices.Contains(names, f.Name) {
				drop = append(drop, f.Name)
			}
		}
	}
	if len(drop) == 0 {
		return schema, v, nil
	}
	s, err := requireStruct(v, "field replacement")
	if err != nil {
		return nil, nil, err
	}
	key := droppedKey{in: schema, exclude: strings.Join(drop, ",")}
	out, ok := t.dropped.get(key)
	if !ok {
		b := newStructLike(s.Schema())
		for _, f := range s.Schema().Fields {
			if !slices.Contains(drop, f.Name) {
				if err := b.field(f.Name, f.Schema); err != nil {
					return nil, nil, err
				}
			}
		}
		out = b.s
		t.dropped.put(key, out)
	}
	ns := connect.NewStruct(out)
	for _, f := range out.Fields {
		if err := put(ns, f.Name, s.Get(f.Name)); err != nil {
			return nil, nil, err
		}
	}
	return out, ns, nil
}
