// Package valuefields lets the first transform of a sink's chain tell the
// value converter which top-level fields of a struct value it reads, so
// that the converter checks the others as it would convert them but does
// not build them.
//
// Debezium's ExtractNewRecordState keeps a change event's row and reads
// its op: the envelope's source block, most of a Debezium record, is
// converted only to be dropped. Nothing here changes what a record
// becomes, or which records a converter refuses and with which message:
// a converter that cannot tell a field it skips is valid converts the
// whole value as usual.
package valuefields

import (
	"sync"
	"sync/atomic"

	"github.com/connectd/connectd/connect"
)

// Reader is a transformation that reads only some top-level fields of a
// struct value and passes on none of the others.
type Reader interface {
	// ValueFieldsRead names the top-level fields Apply reads of a value of
	// this schema; all is true when it may read or pass on any of them
	// (the value is not one it transforms, say).
	ValueFieldsRead(schema *connect.Schema) (fields []string, all bool)
}

// Converter converts a value building only the top-level struct fields
// that needs asks for; the others are null in the struct it returns.
// Its result is otherwise ToConnectData's, errors included.
type Converter interface {
	ToConnectDataFields(topic string, data []byte, needs *Needs) (*connect.Schema, any, error)
}

// Needs answers, per value schema, which top-level fields a Reader reads,
// remembering the answers. It is safe for concurrent use: a sink converts
// a large poll on several goroutines.
type Needs struct {
	r    Reader
	last atomic.Pointer[answer]
	mu   sync.Mutex
	m    map[*connect.Schema][]bool
}

type answer struct {
	schema *connect.Schema
	want   []bool
}

// maxSchemas bounds the answers kept: as many schemas as a JsonConverter
// caches by default.
const maxSchemas = 1000

// New returns the Needs of r.
func New(r Reader) *Needs { return &Needs{r: r, m: map[*connect.Schema][]bool{}} }

// Of returns, for each field of schema, whether the reader reads it; nil
// when every field must be built (the schema is not a struct's, or the
// reader may read any field).
func (n *Needs) Of(schema *connect.Schema) []bool {
	if a := n.last.Load(); a != nil && a.schema == schema {
		return a.want
	}
	n.mu.Lock()
	want, ok := n.m[schema]
	if !ok {
		want = n.compute(schema)
		if len(n.m) >= maxSchemas {
			clear(n.m)
		}
		n.m[schema] = want
	}
	n.mu.Unlock()
	n.last.Store(&answer{schema, want})
	return want
}

func (n *Needs) compute(schema *connect.Schema) []bool {
	if schema == nil || schema.Type != connect.TypeStruct {
		return nil
	}
	names, all := n.r.ValueFieldsRead(schema)
	if all {
		return nil
	}
	want := make([]bool, len(schema.Fields))
	skips := false
	for i, f := range schema.Fields {
		for _, name := range names {
			if f.Name == name {
				want[i] = true
			}
		}
		skips = skips || !want[i]
	}
	if !skips {
		return nil
	}
	return want
}
