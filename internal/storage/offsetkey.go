package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"github.com/connectd/connectd/internal/javajson"
)

// ErrNullPartition is returned by DecodeOffsetKey for a key of the form
// ["<connector>",null]. Kafka Connect skips such keys without a warning
// (OffsetUtils.processPartitionKey), so callers usually want to as well
// and need to tell this case apart from a malformed key.
var ErrNullPartition = errors.New("offset key has a null partition")

// PrimitiveError reports a partition or offset map holding a value that
// Kafka Connect refuses (OffsetUtils.validateFormat). Error returns the
// Java message verbatim because it reaches REST clients, which may match on
// it; Kind says which map was at fault since the Java text does not.
type PrimitiveError struct {
	Kind  string // "partition" or "offset", as passed to ValidatePrimitive
	Field string
	// Type is the Connect schema type ("MAP", "ARRAY") for a nested value,
	// or the Go type for a value that has no Connect equivalent.
	Type   string
	nested bool
}

func (e *PrimitiveError) Error() string {
	if e.nested {
		return "Offsets may only contain primitive types as values, but field " + e.Field + " contains " + e.Type
	}
	return "Offsets may only contain primitive types as values, but field " + e.Field + " has type " + e.Type
}

// ValidatePrimitive checks that every value in m is one Kafka Connect
// accepts in an offsets partition or offset map: nil, bool, string, an
// integer or a float. kind ("partition" or "offset") is recorded in the
// returned *PrimitiveError. The types accepted are exactly the primitives
// javajson can write, so a map that passes can always be encoded.
func ValidatePrimitive(kind string, m map[string]any) error {
	// Sorted so that the field reported is the same on every call.
	for _, k := range sortedKeys(m) {
		switch v := m[k].(type) {
		case nil, bool, string,
			int, int8, int16, int32, int64,
			uint8, uint16, uint32,
			float32, float64:
			continue
		default:
			e := &PrimitiveError{Kind: kind, Field: k, Type: fmt.Sprintf("%T", v)}
			switch reflect.TypeOf(v).Kind() {
			case reflect.Map:
				e.Type, e.nested = "MAP", true
			case reflect.Slice, reflect.Array:
				e.Type, e.nested = "ARRAY", true
			}
			return e
		}
	}
	return nil
}

// EncodeOffsetKey returns the offsets-topic key a Java worker writes for
// this connector and partition: compact Jackson JSON with the partition's
// fields in java.util.HashMap order, which is what the Java REST API and
// most connectors produce. A nil partition is written as {} (Go does not
// distinguish a nil map from an empty one in practice).
func EncodeOffsetKey(connector string, partition map[string]any) ([]byte, error) {
	if err := ValidatePrimitive("partition", partition); err != nil {
		return nil, err
	}
	if partition == nil {
		partition = map[string]any{}
	}
	return javajson.Marshal([]any{connector, partition})
}

// DecodeOffsetKey parses an offsets-topic key. It accepts the shapes Kafka
// Connect tracks ([string, object]) and rejects the ones it skips; a null
// partition yields ErrNullPartition together with the connector name.
// Partition values are not checked for being primitive, matching Java,
// which only checks on write. Unlike Jackson, text after the array is an
// error: no Java worker writes keys like that, so it means damage.
func DecodeOffsetKey(key []byte) (connector string, partition map[string]any, err error) {
	v, err := parseJSON(key)
	if err != nil {
		return "", nil, fmt.Errorf("offset key is not valid JSON: %w", err)
	}
	arr, ok := v.([]any)
	if !ok {
		return "", nil, fmt.Errorf("offset key is not a JSON array but %s", jsonKind(v))
	}
	if len(arr) != 2 {
		return "", nil, fmt.Errorf("offset key is an array of %d elements, want 2 ([connector, partition])", len(arr))
	}
	connector, ok = arr[0].(string)
	if !ok {
		return "", nil, fmt.Errorf("offset key's first element (the connector name) is %s, want a string", jsonKind(arr[0]))
	}
	if arr[1] == nil {
		return connector, nil, ErrNullPartition
	}
	partition, ok = arr[1].(map[string]any)
	if !ok {
		return "", nil, fmt.Errorf("offset key's second element (the partition) is %s, want an object", jsonKind(arr[1]))
	}
	return connector, partition, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case int64, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// CanonicalKey returns a string identifying (connector, partition) that
// does not depend on field order, so two keys Java would treat as different
// bytes but that mean the same partition find the same offset. It is a JSON
// array like the key itself but with object fields sorted and every number
// in javajson's form: integers plain, doubles always with a '.' or 'E', so
// int64 1 and float64 1.0 stay distinct, as they are distinct in Java.
// All integer kinds map to the same text, as do float32 and the float64
// Java would read back, because that is what a round trip produces.
func CanonicalKey(connector string, partition map[string]any) string {
	b := javajson.AppendString(append(make([]byte, 0, 64), '['), connector)
	b = append(b, ',')
	if partition == nil {
		b = append(b, "{}"...)
	} else {
		b = appendCanonical(b, partition)
	}
	return string(append(b, ']'))
}

func appendCanonical(dst []byte, v any) []byte {
	switch x := v.(type) {
	case map[string]any:
		dst = append(dst, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = javajson.AppendString(dst, k)
			dst = append(dst, ':')
			dst = appendCanonical(dst, x[k])
		}
		return append(dst, '}')
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonical(dst, e)
		}
		return append(dst, ']')
	}
	out, err := javajson.Append(dst, v)
	if err != nil {
		// Not representable in a key at all, so it can never match a
		// stored key; '!' keeps it from colliding with any JSON text.
		return fmt.Appendf(dst, "!%T(%v)", v, v)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Murmur2 is Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2),
// which the Java producer's default partitioner hashes keys with. It must
// match exactly or our records land in a different partition of the
// offsets topic than a Java worker's, and compaction never pairs them.
func Murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	length := len(data)
	h := seed ^ uint32(length)
	n := length / 4
	for i := 0; i < n; i++ {
		k := binary.LittleEndian.Uint32(data[i*4:])
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := data[n*4:]
	switch len(tail) {
	case 3:
		h ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(tail[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// PartitionFor is the Java default partitioner's choice for a keyed record
// without an explicit partition: (murmur2 & 0x7fffffff) % numPartitions.
// numPartitions must be positive.
func PartitionFor(key []byte, numPartitions int32) int32 {
	if numPartitions <= 0 {
		panic(fmt.Sprintf("storage.PartitionFor: numPartitions must be positive, got %d", numPartitions))
	}
	return (Murmur2(key) & 0x7fffffff) % numPartitions
}
