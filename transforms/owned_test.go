package transforms

import (
	"fmt"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/owned"
)

// ownedTransformation is what a worker's chain calls of a built-in
// transformation (internal/owned).
type ownedTransformation interface {
	connect.Transformation
	ApplyOwned(r *connect.Record, st *owned.State[connect.Struct]) (*connect.Record, error)
}

// Told that the record owns its struct, InsertField and ReplaceField
// build in it when it has room, and make of it what Apply makes of a
// struct the record does not own, which Apply leaves as it was. What
// they return is the record's own either way.
func TestApplyOwned(t *testing.T) {
	withDefault := &connect.Schema{Type: connect.TypeString, Optional: true, Default: "default"}
	row := connect.StructSchema("row",
		connect.Field{Name: "id", Schema: connect.Int64Schema},
		connect.Field{Name: "note", Schema: withDefault},
		connect.Field{Name: "name", Schema: connect.StringSchema})
	// A struct of three fields has room for four; note is null.
	fill := func() *connect.Struct { return connect.NewStruct(row).Put("id", int64(7)).Put("name", "x") }
	for _, c := range []struct {
		name    string
		part    Part
		xf      ownedTransformation
		config  map[string]string
		own     owned.Parts // what the record owns
		inPlace bool
	}{
		{"InsertField, a fourth field", Value, &InsertField{part: Value}, map[string]string{"static.field": "source", "static.value": "bench"}, owned.Value, true},
		{"InsertField, without the default", Value, &InsertField{part: Value}, map[string]string{"static.field": "source", "static.value": "bench", "replace.null.with.default": "false"}, owned.Value, true},
		{"InsertField, no room for five", Value, &InsertField{part: Value}, map[string]string{"topic.field": "t", "partition.field": "p"}, owned.Value, false},
		{"InsertField, the key not owned", Key, &InsertField{part: Key}, map[string]string{"static.field": "source", "static.value": "bench"}, owned.Value, false},
		{"InsertField, the key owned", Key, &InsertField{part: Key}, map[string]string{"static.field": "source", "static.value": "bench"}, owned.Key, true},
		{"ReplaceField, renames", Value, &ReplaceField{part: Value}, map[string]string{"renames": "id:key,name:label"}, owned.Value, true},
		{"ReplaceField, renames without the default", Value, &ReplaceField{part: Value}, map[string]string{"renames": "id:key", "replace.null.with.default": "false"}, owned.Value, true},
		{"ReplaceField, a field dropped", Value, &ReplaceField{part: Value}, map[string]string{"exclude": "note"}, owned.Value, false},
		{"ReplaceField, not owned", Value, &ReplaceField{part: Value}, map[string]string{"renames": "id:key"}, owned.Key, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			part := c.part
			xf := shapeConfigured(t, c.xf, c.config)
			record := func(s *connect.Struct) *connect.Record {
				r := &connect.Record{Topic: "t", Partition: shapeInt32(3)}
				part.Set(r, row, s)
				return r
			}
			shared := fill()
			copied := shapeApply(t, xf, record(shared))
			if shared.Schema() != row || shared.String() != fill().String() {
				t.Fatalf("Apply changed its input: %v", shared)
			}
			mine := fill()
			st := owned.State[connect.Struct]{Parts: c.own}
			out, err := xf.ApplyOwned(record(mine), &st)
			if err != nil {
				t.Fatal(err)
			}
			if st.Parts != c.own|part.owned() {
				t.Errorf("returned as owned %b, want %b", st.Parts, c.own|part.owned())
			}
			wantSchema, want := part.Get(copied)
			gotSchema, got := part.Get(out)
			if gotSchema != wantSchema || got.(*connect.Struct).String() != want.(*connect.Struct).String() {
				t.Fatalf("ApplyOwned made %v, Apply %v", got, want)
			}
			if inPlace := got == mine; inPlace != c.inPlace {
				t.Errorf("built in the record's struct: %v, want %v", inPlace, c.inPlace)
			}
		})
	}
}

// HoistField's struct is the record's own; routers leave the record's
// parts as they were.
func TestApplyOwnedHands(t *testing.T) {
	for _, c := range []struct {
		name     string
		xf       ownedTransformation
		config   map[string]string
		own, out owned.Parts
	}{
		{"HoistField$Value", &HoistField{part: Value}, map[string]string{"field": "line"}, 0, owned.Value},
		{"HoistField$Key", &HoistField{part: Key}, map[string]string{"field": "line"}, owned.Value, owned.Key | owned.Value},
		{"RegexRouter", &RegexRouter{}, map[string]string{"regex": "(.*)", "replacement": "$1-x"}, owned.Value, owned.Value},
		{"TimestampRouter", &TimestampRouter{}, map[string]string{}, owned.Key, owned.Key},
	} {
		t.Run(c.name, func(t *testing.T) {
			xf := shapeConfigured(t, c.xf, c.config)
			r := &connect.Record{Topic: "t", Timestamp: time.UnixMilli(1700000000123), KeySchema: connect.StringSchema, Key: "k", ValueSchema: connect.StringSchema, Value: "v"}
			st := owned.State[connect.Struct]{Parts: c.own}
			if _, err := xf.ApplyOwned(r, &st); err != nil || st.Parts != c.out {
				t.Fatalf("owned %b, %v; want %b", st.Parts, err, c.out)
			}
		})
	}
}

// HoistField makes its struct of the spare one, whatever that held, and
// of a new one when there is none.
func TestHoistFieldTakesTheSpare(t *testing.T) {
	xf := shapeConfigured(t, &HoistField{part: Value}, map[string]string{"field": "line"})
	old := connect.StructSchema("old", connect.Field{Name: "a", Schema: connect.StringSchema}, connect.Field{Name: "b", Schema: connect.OptionalStringSchema})
	wide := connect.StructSchema("wide")
	for i := range 9 {
		wide.Fields = append(wide.Fields, connect.Field{Name: fmt.Sprint("f", i), Schema: connect.OptionalStringSchema, Index: i})
	}
	for _, c := range []struct {
		name  string
		spare *connect.Struct
		taken bool
	}{
		{"a struct with room", connect.NewStruct(old).Put("a", "x").Put("b", "y"), true},
		{"a wider struct", connect.NewStruct(wide).Put("f0", "x"), true},
		{"none", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := owned.State[connect.Struct]{Spare: c.spare}
			out, err := xf.ApplyOwned(&connect.Record{ValueSchema: connect.OptionalStringSchema, Value: nil}, &st)
			if err != nil {
				t.Fatal(err)
			}
			v := out.Value.(*connect.Struct)
			if got := v.String(); got != "Struct{}" || len(v.Schema().Fields) != 1 || v.Schema().Fields[0].Name != "line" {
				t.Fatalf("hoisted a null into %s of %+v", got, v.Schema())
			}
			if taken := c.spare != nil && v == c.spare; taken != c.taken || st.Spare != nil {
				t.Fatalf("spare taken %v, want %v; left %v", taken, c.taken, st.Spare)
			}
		})
	}
}
