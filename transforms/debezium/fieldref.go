package debezium

import (
	"fmt"

	"github.com/connectd/connectd/connect"
)

// fieldRef is one entry of add.fields or add.headers (Debezium's
// FieldReference): a field of the envelope, of its source block or of its
// transaction block, and the name it gets in the flattened row or the
// headers.
type fieldRef struct {
	// block is the envelope field that holds the field ("source",
	// "transaction"), or "" for one of the envelope's own (op, ts_ms, ...).
	block    string
	field    string
	newField string
}

// parseFieldRefs reads an add.fields or add.headers value as Debezium
// does: split on commas, each entry trimmed; "block.field" or "field"
// (whose block Debezium infers), optionally ":newName". A name is
// prefixed with prefix, and a qualified one without a new name becomes
// prefix + block + "_" + field. Beyond a block and a field, further dotted
// parts are ignored, as Debezium ignores them.
func parseFieldRefs(prefix, spec string) ([]fieldRef, error) {
	if spec == "" {
		return nil, nil
	}
	var refs []fieldRef
	for _, entry := range javaSplit(spec, ",") {
		entry = javaTrim(entry)
		parts := javaSplit(entry, ":")
		if len(parts) == 0 || len(parts) > 2 {
			return nil, fmt.Errorf("Unexpected field name: %s", entry)
		}
		splits := javaSplit(parts[0], ".")
		if len(splits) == 0 {
			return nil, fmt.Errorf("Unexpected field name: %s", entry)
		}
		r := fieldRef{field: splits[0]}
		if len(splits) > 1 {
			r.block, r.field = splits[0], splits[1]
		} else {
			r.block = blockOf(r.field)
		}
		switch {
		case len(parts) == 2:
			r.newField = prefix + parts[1]
		case len(splits) == 1:
			r.newField = prefix + r.field
		default:
			r.newField = prefix + r.block + "_" + r.field
		}
		refs = append(refs, r)
	}
	return refs, nil
}

// blockOf is the envelope field Debezium looks an unqualified name up in.
func blockOf(field string) string {
	switch field {
	case "id", "total_order", "data_collection_order":
		return "transaction"
	case "op", "ts_ms", "ts_us", "ts_ns":
		return ""
	case "updateDescription": // MongoDB's events
		return "updateDescription"
	}
	return "source"
}

// schemaIn returns the schema the reference's field gets in the output,
// an optional copy of its schema in the envelope, or nil when the
// envelope does not have the field. A field missing from its block is
// looked for among the envelope's own fields, where another transform may
// have put it.
func (r *fieldRef) schemaIn(envelope *connect.Schema) (*connect.Schema, error) {
	parent := envelope
	if r.block != "" {
		bf := envelope.Field(r.block)
		if bf == nil {
			return nil, dataError("The envelope %s has no field %s, which the field reference %s.%s names", envelope.Name, r.block, r.block, r.field)
		}
		parent = bf.Schema
		if parent.Type != connect.TypeStruct {
			return nil, dataError("Cannot look up fields on non-struct type")
		}
	}
	f := parent.Field(r.field)
	if f == nil {
		if f = envelope.Field(r.field); f == nil {
			return nil, nil
		}
	}
	return optionalCopy(f.Schema), nil
}

// valueIn returns the field's value in an envelope, as stored (without
// its schema's default); nil when its block is null, as the transaction
// block is during a snapshot.
func (r *fieldRef) valueIn(envelope *connect.Struct) (any, error) {
	parent := envelope
	if r.block != "" {
		v := envelope.GetWithoutDefault(r.block)
		if v == nil {
			return nil, nil
		}
		s, ok := v.(*connect.Struct)
		if !ok {
			return nil, dataError("The field %s of the envelope is not a struct", r.block)
		}
		parent = s
	}
	if parent.Schema().Field(r.field) != nil {
		return parent.GetWithoutDefault(r.field), nil
	}
	return envelope.GetWithoutDefault(r.field), nil
}
