// Package owned lets the built-in transformations of a chain build a
// record's struct in the one the transformation before them made, rather
// than each make a new one: at a million records a second, a struct per
// transformation was most of what a chain cost (bench/'s smt-file
// figure, where HoistField, InsertField and ReplaceField made three).
//
// A struct may change in place only while nothing else holds it, and
// only the chain can tell: what the connector (or the converter) made,
// and whatever a transformation other than these was given, never
// qualifies, since connect.Transformation lets a transformation keep what
// it is given. The chain starts each record with nothing owned and hands
// each stage what the stage before it reported.
package owned

// Parts says which of a record's key and value nothing else holds: the
// transformation that set it made it for this record and kept no
// reference to it.
type Parts uint8

// The parts of a record.
const (
	Key Parts = 1 << iota
	Value
)

// State is what a worker's chain hands each built-in stage for the record
// it transforms; S is connect.Struct, which this package cannot name.
type State[S any] struct {
	// Parts are the record's key and value that nothing else holds; a
	// stage leaves them right for the next.
	Parts Parts
	// Spare is a struct that nothing holds any more, or nil: a source
	// task's previous record's, once converted. A stage that makes a
	// struct takes it (leaving nil) rather than allocate one.
	Spare *S
}

// reshape is package connect's, a func(*connect.Struct, *connect.Schema)
// bool: this package cannot name connect's types, as connect imports it.
var reshape any

// SetReshape is called by package connect, once, as it initializes.
func SetReshape[S, T any](f func(s *S, schema *T) bool) { reshape = f }

// Reshape gives the connect.Struct s, which nothing else holds, the
// fields of the STRUCT schema in place: the values of its first fields
// stay where they are, the fields it did not have are null. It reports
// false, leaving s as it was, when s has no room for that many fields;
// the caller then makes a new struct.
func Reshape[S, T any](s *S, schema *T) bool {
	return reshape.(func(*S, *T) bool)(s, schema)
}
