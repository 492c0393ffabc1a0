package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/herder"
	"github.com/connectd/connectd/internal/javajson"
)

func errNoOffsets() error {
	return herder.BadRequest("Partitions / offsets need to be provided for an alter offsets request")
}

// ParseOffsetsRequest binds the body of PATCH /connectors/{c}/offsets:
// {"offsets":[{"partition":{...},"offset":{...}|null}, ...]}.
//
// The shape is checked strictly; partition and offset values must be JSON
// scalars. Numbers come back as Kafka's JsonConverter reads them: integers
// as int64, other numbers as float64. A null or missing partition or
// offset is a nil map; what a partition must contain is left to the
// herder, which knows whether the connector is a source or a sink.
//
// Every error is a *herder.Error with status 400. Kafka gives 400 only
// for the "need to be provided" case and 500 for the rest.
func ParseOffsetsRequest(body []byte) ([]client.ConnectorOffset, error) {
	raw, err := parseJSON(body)
	if err != nil {
		return nil, err
	}
	if isNull(raw) {
		return nil, errNoOffsets()
	}
	fields, err := objectFields(raw, "request body", "offsets")
	if err != nil {
		return nil, err
	}
	if isNull(fields["offsets"]) {
		return nil, errNoOffsets()
	}
	v, err := decodeValue(fields["offsets"])
	if err != nil {
		return nil, err
	}
	if list, ok := v.([]any); ok && len(list) == 0 {
		return nil, errNoOffsets()
	}
	return parseOffsetList(v, "offsets")
}

// parseOffsetList binds a decoded list of {"partition","offset"} objects;
// field names the list in messages.
func parseOffsetList(v any, field string) ([]client.ConnectorOffset, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, herder.BadRequest(`Invalid field %q: expected an array of objects with "partition" and "offset" fields, got %s`, field, kindOfValue(v))
	}
	if len(list) == 0 {
		return nil, nil
	}
	out := make([]client.ConnectorOffset, len(list))
	for i, e := range list {
		where := fmt.Sprintf("%s[%d]", field, i)
		m, ok := e.(map[string]any)
		if !ok {
			return nil, herder.BadRequest(`Invalid %s: expected an object with "partition" and "offset" fields, got %s`, where, kindOfValue(e))
		}
		if err := unknownField(m, where, []string{"partition", "offset"}); err != nil {
			return nil, err
		}
		var err error
		if out[i].Partition, err = offsetMap(m["partition"], where+".partition"); err != nil {
			return nil, err
		}
		if out[i].Offset, err = offsetMap(m["offset"], where+".offset"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// offsetMap checks a partition or offset: an object of scalars, or null.
// Nested values get Kafka's OffsetUtils.validateFormat text.
func offsetMap(v any, where string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, herder.BadRequest("Invalid %s: expected an object or null, got %s", where, kindOfValue(v))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch x := m[k].(type) {
		case map[string]any:
			return nil, herder.BadRequest("Offsets may only contain primitive types as values, but field %s contains MAP", k)
		case []any:
			return nil, herder.BadRequest("Offsets may only contain primitive types as values, but field %s contains ARRAY", k)
		case json.Number:
			n, err := javajson.Normalize(x)
			if errors.Is(err, javajson.ErrBigInteger) {
				return nil, herder.BadRequest("Offsets may only contain primitive types as values, but field %s contains class java.math.BigInteger", k)
			} else if err != nil {
				return nil, herder.BadRequest("Offsets may only contain finite numbers, but field %s contains %s", k, x)
			}
			m[k] = n
		}
	}
	return m, nil
}

// encodeOffsets writes the GET /connectors/{c}/offsets body with every
// partition and offset map in Java HashMap order, as Kafka writes them
// (a sink partition shows kafka_partition before kafka_topic).
func encodeOffsets(offsets *client.ConnectorOffsets) ([]byte, error) {
	var list []client.ConnectorOffset
	if offsets != nil {
		list = offsets.Offsets
	}
	// Sized by the first entries, with a quarter more for later ones that
	// are longer (larger numbers), so that a large list is not copied as
	// it grows.
	const sample = 64
	b := make([]byte, 0, 16+100*min(len(list), sample))
	b = append(b, `{"offsets":[`...)
	for i, o := range list {
		if i == sample {
			per := len(b) / sample
			grown := make([]byte, len(b), len(b)+(len(list)-sample)*(per+per/4)+2)
			b = grown[:copy(grown, b)]
		}
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		b = append(b, `{"partition":`...)
		if b, err = appendMap(b, o.Partition); err != nil {
			return nil, err
		}
		b = append(b, `,"offset":`...)
		if b, err = appendMap(b, o.Offset); err != nil {
			return nil, err
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

func appendMap(b []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(b, "null"...), nil
	}
	return javajson.Append(b, m)
}
