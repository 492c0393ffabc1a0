package postgrescdc

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// Debezium's logical type names.
const (
	jsonName                 = "io.debezium.data.Json"
	xmlName                  = "io.debezium.data.Xml"
	uuidName                 = "io.debezium.data.Uuid"
	enumName                 = "io.debezium.data.Enum"
	bitsName                 = "io.debezium.data.Bits"
	ltreeName                = "io.debezium.data.Ltree"
	variableScaleDecimalName = "io.debezium.data.VariableScaleDecimal"
	dateName                 = "io.debezium.time.Date"
	timeName                 = "io.debezium.time.Time"
	microTimeName            = "io.debezium.time.MicroTime"
	timestampName            = "io.debezium.time.Timestamp"
	microTimestampName       = "io.debezium.time.MicroTimestamp"
	zonedTimestampName       = "io.debezium.time.ZonedTimestamp"
	zonedTimeName            = "io.debezium.time.ZonedTime"
	microDurationName        = "io.debezium.time.MicroDuration"
	intervalName             = "io.debezium.time.Interval"
	decimalPrecisionParam    = "connect.decimal.precision"
)

// pgType is what the connector knows of a PostgreSQL type.
type pgType struct {
	oid      uint32
	name     string // typname
	schema   string // nspname
	typtype  byte   // b base, d domain, e enum, ...
	category byte   // typcategory; 'A' for arrays
	elem     uint32 // element type of an array
	base     uint32 // base type of a domain
	baseMod  int32  // typmod of a domain
	labels   []string
}

// builtinTypes are the types whose OIDs are fixed, so that the common
// columns need no catalog lookup.
var builtinTypes = map[uint32]*pgType{}

func init() {
	for oid, name := range map[uint32]string{
		16: "bool", 17: "bytea", 18: "char", 19: "name", 20: "int8", 21: "int2", 23: "int4", 25: "text", 26: "oid",
		114: "json", 142: "xml", 650: "cidr", 700: "float4", 701: "float8", 774: "macaddr8", 790: "money", 829: "macaddr",
		869: "inet", 1042: "bpchar", 1043: "varchar", 1082: "date", 1083: "time", 1114: "timestamp", 1184: "timestamptz",
		1186: "interval", 1266: "timetz", 1560: "bit", 1562: "varbit", 1700: "numeric", 2950: "uuid", 3802: "jsonb",
	} {
		builtinTypes[oid] = &pgType{oid: oid, name: name, schema: "pg_catalog", typtype: 'b'}
	}
	for arr, elem := range map[uint32]uint32{
		1000: 16, 1001: 17, 1002: 18, 1003: 19, 1016: 20, 1005: 21, 1007: 23, 1009: 25, 1028: 26, 199: 114, 143: 142,
		651: 650, 1021: 700, 775: 774, 791: 790, 1040: 829, 1041: 869, 1014: 1042, 1015: 1043, 1182: 1082, 1183: 1083,
		1115: 1114, 1185: 1184, 1187: 1186, 1270: 1266, 1561: 1560, 1563: 1562, 1231: 1700, 2951: 2950, 3807: 3802,
	} {
		builtinTypes[arr] = &pgType{oid: arr, name: "_" + builtinTypes[elem].name, schema: "pg_catalog", typtype: 'b', category: 'A', elem: elem}
	}
}

// valueMapper turns the text form of one column's values into Connect
// values.
type valueMapper struct {
	schema *connect.Schema // required form; columns copy it as optional
	conv   func(b []byte) (any, error)
	// zero is the value of a NOT NULL column PostgreSQL sent no value for
	// (the non-key columns of an old key tuple), as Debezium's fallbacks.
	zero any
}

// typeResolver maps types to mappers, looking unknown types up with
// lookup.
type typeResolver struct {
	cfg    *config
	types  map[uint32]*pgType
	lookup func(oid uint32) (*pgType, error)
}

func (r *typeResolver) typeOf(oid uint32) (*pgType, error) {
	if t := builtinTypes[oid]; t != nil {
		return t, nil
	}
	if t := r.types[oid]; t != nil {
		return t, nil
	}
	if r.lookup == nil {
		return nil, fmt.Errorf("unknown type %d", oid)
	}
	t, err := r.lookup(oid)
	if err != nil {
		return nil, err
	}
	if r.types == nil {
		r.types = map[uint32]*pgType{}
	}
	r.types[oid] = t
	return t, nil
}

// mapper returns the mapper of a column of type oid with modifier typmod,
// or nil when the type is not supported and include.unknown.datatypes is
// off (Debezium then leaves the column out).
func (r *typeResolver) mapper(oid uint32, typmod int32) (*valueMapper, error) {
	t, err := r.typeOf(oid)
	if err != nil {
		return nil, err
	}
	for depth := 0; t.typtype == 'd' && depth < 10; depth++ {
		if typmod < 0 {
			typmod = t.baseMod
		}
		if t, err = r.typeOf(t.base); err != nil {
			return nil, err
		}
	}
	if t.category == 'A' && t.elem != 0 {
		em, err := r.mapper(t.elem, typmod)
		if err != nil || em == nil {
			return em, err
		}
		return arrayMapper(em), nil
	}
	if m := r.scalarMapper(t, typmod); m != nil {
		return m, nil
	}
	if r.cfg.includeUnknown {
		return &valueMapper{schema: connect.BytesSchema, conv: func(b []byte) (any, error) { return append([]byte(nil), b...), nil }, zero: []byte{}}, nil
	}
	return nil, nil
}

func logical(typ connect.Type, name string) *connect.Schema {
	return &connect.Schema{Type: typ, Name: name, Version: 1}
}

// timePrecision is the fractional second digits of a time type's values.
func timePrecision(typmod int32) int {
	if typmod < 0 || typmod > 6 {
		return 6
	}
	return int(typmod)
}

func (r *typeResolver) scalarMapper(t *pgType, typmod int32) *valueMapper {
	cfg := r.cfg
	if t.typtype == 'e' {
		s := logical(connect.TypeString, enumName)
		s.Parameters = []connect.Parameter{{Key: "allowed", Value: strings.Join(t.labels, ",")}}
		return &valueMapper{schema: s, conv: convString, zero: ""}
	}
	if t.schema != "pg_catalog" {
		switch t.name {
		case "citext":
			return &valueMapper{schema: connect.StringSchema, conv: convString, zero: ""}
		case "ltree":
			return &valueMapper{schema: logical(connect.TypeString, ltreeName), conv: convString, zero: ""}
		}
		return nil
	}
	switch t.name {
	case "bool":
		return &valueMapper{schema: connect.BooleanSchema, conv: convBool, zero: false}
	case "int2":
		return &valueMapper{schema: connect.Int16Schema, conv: func(b []byte) (any, error) {
			n, err := strconv.ParseInt(string(b), 10, 16)
			return int16(n), err
		}, zero: int16(0)}
	case "int4":
		return &valueMapper{schema: connect.Int32Schema, conv: func(b []byte) (any, error) {
			n, err := strconv.ParseInt(string(b), 10, 32)
			return int32(n), err
		}, zero: int32(0)}
	case "int8", "oid":
		return &valueMapper{schema: connect.Int64Schema, conv: func(b []byte) (any, error) {
			return strconv.ParseInt(string(b), 10, 64)
		}, zero: int64(0)}
	case "float4":
		return &valueMapper{schema: connect.Float32Schema, conv: func(b []byte) (any, error) {
			f, err := strconv.ParseFloat(string(b), 32)
			return float32(f), err
		}, zero: float32(0)}
	case "float8":
		return &valueMapper{schema: connect.Float64Schema, conv: func(b []byte) (any, error) {
			return strconv.ParseFloat(string(b), 64)
		}, zero: float64(0)}
	case "numeric":
		return numericMapper(cfg.decimalMode, typmod)
	case "money":
		return moneyMapper(cfg.decimalMode, cfg.moneyDigits)
	case "text", "varchar", "bpchar", "char", "name", "inet", "cidr", "macaddr", "macaddr8":
		return &valueMapper{schema: connect.StringSchema, conv: convString, zero: ""}
	case "json", "jsonb":
		return &valueMapper{schema: logical(connect.TypeString, jsonName), conv: convString, zero: "{}"}
	case "xml":
		return &valueMapper{schema: logical(connect.TypeString, xmlName), conv: convString, zero: ""}
	case "uuid":
		return &valueMapper{schema: logical(connect.TypeString, uuidName), conv: convString, zero: "00000000-0000-0000-0000-000000000000"}
	case "bytea":
		return &valueMapper{schema: connect.BytesSchema, conv: convBytea, zero: []byte{}}
	case "bit", "varbit":
		if t.name == "bit" && typmod == 1 {
			return &valueMapper{schema: connect.BooleanSchema, conv: func(b []byte) (any, error) { return string(b) == "1", nil }, zero: false}
		}
		n := int(typmod)
		if n < 1 {
			n = 64
		}
		s := logical(connect.TypeBytes, bitsName)
		s.Parameters = []connect.Parameter{{Key: "length", Value: strconv.Itoa(n)}}
		nBytes := (n + 7) / 8
		return &valueMapper{schema: s, conv: func(b []byte) (any, error) { return convBits(b, nBytes) }, zero: make([]byte, nBytes)}
	case "date":
		if cfg.timePrecision == "connect" {
			return &valueMapper{schema: connect.DateSchema(), conv: func(b []byte) (any, error) {
				days, err := parseDate(string(b))
				if err != nil {
					return nil, err
				}
				return connect.DaysToDate(int32(days)), nil
			}, zero: time.Unix(0, 0).UTC()}
		}
		return &valueMapper{schema: logical(connect.TypeInt32, dateName), conv: func(b []byte) (any, error) {
			days, err := parseDate(string(b))
			return int32(days), err
		}, zero: int32(0)}
	case "time":
		p := timePrecision(typmod)
		switch {
		case cfg.timePrecision == "connect":
			return &valueMapper{schema: connect.TimeSchema(), conv: func(b []byte) (any, error) {
				us, err := parseTimeOfDay(string(b))
				return time.UnixMicro(us).UTC().Truncate(time.Millisecond), err
			}, zero: time.Unix(0, 0).UTC()}
		case cfg.timePrecision == "adaptive" && p <= 3:
			return &valueMapper{schema: logical(connect.TypeInt32, timeName), conv: func(b []byte) (any, error) {
				us, err := parseTimeOfDay(string(b))
				return int32(us / 1000), err
			}, zero: int32(0)}
		}
		return &valueMapper{schema: logical(connect.TypeInt64, microTimeName), conv: func(b []byte) (any, error) {
			return parseTimeOfDay(string(b))
		}, zero: int64(0)}
	case "timetz":
		return &valueMapper{schema: logical(connect.TypeString, zonedTimeName), conv: convTimeTZ, zero: "00:00:00Z"}
	case "timestamp":
		p := timePrecision(typmod)
		switch {
		case cfg.timePrecision == "connect":
			return &valueMapper{schema: connect.TimestampSchema(), conv: func(b []byte) (any, error) {
				us, err := parseTimestamp(string(b), false)
				return time.UnixMicro(us).UTC().Truncate(time.Millisecond), err
			}, zero: time.Unix(0, 0).UTC()}
		case p <= 3:
			return &valueMapper{schema: logical(connect.TypeInt64, timestampName), conv: func(b []byte) (any, error) {
				us, err := parseTimestamp(string(b), false)
				return floorDiv(us, 1000), err
			}, zero: int64(0)}
		}
		return &valueMapper{schema: logical(connect.TypeInt64, microTimestampName), conv: func(b []byte) (any, error) {
			return parseTimestamp(string(b), false)
		}, zero: int64(0)}
	case "timestamptz":
		width := 0
		if typmod != 0 {
			width = timePrecision(typmod)
		}
		return &valueMapper{schema: logical(connect.TypeString, zonedTimestampName), conv: func(b []byte) (any, error) {
			us, err := parseTimestamp(string(b), true)
			if err != nil {
				return nil, err
			}
			return formatZonedTimestamp(us, width), nil
		}, zero: "1970-01-01T00:00:00Z"}
	case "interval":
		if cfg.intervalMode == "string" {
			return &valueMapper{schema: logical(connect.TypeString, intervalName), conv: convString, zero: "PT0S"}
		}
		return &valueMapper{schema: logical(connect.TypeInt64, microDurationName), conv: func(b []byte) (any, error) {
			return parseIntervalMicros(string(b))
		}, zero: int64(0)}
	}
	return nil
}

func convString(b []byte) (any, error) { return string(b), nil }

func convBool(b []byte) (any, error) {
	switch string(b) {
	case "t", "true":
		return true, nil
	case "f", "false":
		return false, nil
	}
	return nil, fmt.Errorf("invalid boolean %q", b)
}

func convBytea(b []byte) (any, error) {
	s := string(b)
	if strings.HasPrefix(s, `\x`) {
		return hex.DecodeString(s[2:])
	}
	return unescapeBytea(s)
}

// unescapeBytea reads bytea's "escape" output format.
func unescapeBytea(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			out = append(out, '\\')
			i++
			continue
		}
		if i+4 > len(s) {
			return nil, fmt.Errorf("invalid bytea escape in %q", s)
		}
		n, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
		if err != nil {
			return nil, fmt.Errorf("invalid bytea escape in %q", s)
		}
		out = append(out, byte(n))
		i += 3
	}
	return out, nil
}

// convBits converts a bit string as Debezium does: the bits read as a
// binary number, written as little-endian bytes, nBytes long.
func convBits(b []byte, nBytes int) (any, error) {
	n, ok := new(big.Int).SetString(string(b), 2)
	if !ok {
		if len(b) == 0 {
			return make([]byte, nBytes), nil
		}
		return nil, fmt.Errorf("invalid bit string %q", b)
	}
	be := n.Bytes()
	out := make([]byte, max(nBytes, len(be)))
	for i, c := range be {
		out[len(be)-1-i] = c
	}
	return out, nil
}

func numericScale(typmod int32) (precision, scale int32, ok bool) {
	if typmod < 4 {
		return 0, 0, false
	}
	t := typmod - 4
	return (t >> 16) & 0xffff, ((t & 0x7ff) ^ 1024) - 1024, true
}

func numericMapper(mode string, typmod int32) *valueMapper {
	switch mode {
	case "double":
		return &valueMapper{schema: connect.Float64Schema, conv: func(b []byte) (any, error) {
			return strconv.ParseFloat(string(b), 64)
		}, zero: float64(0)}
	case "string":
		return &valueMapper{schema: connect.StringSchema, conv: convString, zero: "0"}
	}
	precision, scale, fixed := numericScale(typmod)
	if !fixed {
		return &valueMapper{schema: variableScaleDecimalSchema, conv: func(b []byte) (any, error) {
			d, err := parseDecimal(string(b), -1)
			if err != nil || d == nil {
				return nil, err
			}
			return variableScaleDecimal(d), nil
		}, zero: variableScaleDecimal(&connect.Decimal{Unscaled: new(big.Int)})}
	}
	s := connect.DecimalSchema(scale)
	s.Parameters = append(s.Parameters, connect.Parameter{Key: decimalPrecisionParam, Value: strconv.Itoa(int(precision))})
	return &valueMapper{schema: s, conv: func(b []byte) (any, error) {
		d, err := parseDecimal(string(b), scale)
		if err != nil || d == nil {
			return nil, err
		}
		return d, nil
	}, zero: &connect.Decimal{Unscaled: new(big.Int), Scale: scale}}
}

func moneyMapper(mode string, digits int) *valueMapper {
	clean := func(b []byte) string {
		var sb strings.Builder
		for _, c := range string(b) {
			if c >= '0' && c <= '9' || c == '.' || c == '-' {
				sb.WriteRune(c)
			} else if c == '(' {
				sb.WriteByte('-')
			}
		}
		return sb.String()
	}
	switch mode {
	case "double":
		return &valueMapper{schema: connect.Float64Schema, conv: func(b []byte) (any, error) {
			return strconv.ParseFloat(clean(b), 64)
		}, zero: float64(0)}
	case "string":
		return &valueMapper{schema: connect.StringSchema, conv: func(b []byte) (any, error) { return clean(b), nil }, zero: "0"}
	}
	return &valueMapper{schema: connect.DecimalSchema(int32(digits)), conv: func(b []byte) (any, error) {
		return parseDecimal(clean(b), int32(digits))
	}, zero: &connect.Decimal{Unscaled: new(big.Int), Scale: int32(digits)}}
}

var variableScaleDecimalSchema = &connect.Schema{
	Type: connect.TypeStruct, Name: variableScaleDecimalName, Version: 1, Doc: "Variable scaled decimal",
	Fields: []connect.Field{
		{Name: "scale", Index: 0, Schema: connect.Int32Schema},
		{Name: "value", Index: 1, Schema: connect.BytesSchema},
	},
}

func variableScaleDecimal(d *connect.Decimal) *connect.Struct {
	s := connect.NewStruct(variableScaleDecimalSchema)
	s.Put("scale", d.Scale)
	s.Put("value", twosComplement(d.Unscaled))
	return s
}

// twosComplement is Java's BigInteger.toByteArray: the shortest big-endian
// two's-complement form.
func twosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n - 1, inverted.
	m := new(big.Int).Neg(n)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// parseDecimal parses a numeric's text. A scale >= 0 rescales the value to
// it; NaN and the infinities, which a Decimal cannot hold, give nil as
// Debezium does.
func parseDecimal(s string, scale int32) (*connect.Decimal, error) {
	switch s {
	case "NaN", "Infinity", "-Infinity":
		return nil, nil
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return nil, fmt.Errorf("invalid numeric %q", s)
		}
		exp, s = e, s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	digits := intPart + frac
	sc := int32(len(frac) - exp)
	n, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, fmt.Errorf("invalid numeric %q", s)
	}
	if neg {
		n.Neg(n)
	}
	if sc < 0 {
		n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-sc)), nil))
		sc = 0
	}
	if scale >= 0 && sc != scale {
		if sc < scale {
			n.Mul(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-sc)), nil))
		} else {
			n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(sc-scale)), nil))
		}
		sc = scale
	}
	return &connect.Decimal{Unscaled: n, Scale: sc}, nil
}

var errInfinity = errors.New("infinite date/time value")

// parseYMD reads "YYYY-MM-DD", with a " BC" suffix, into days since the
// epoch.
func parseYMD(s string) (int64, error) {
	s, bc := strings.CutSuffix(s, " BC")
	y, rest, ok := strings.Cut(s, "-")
	if !ok || len(rest) != 5 || rest[2] != '-' {
		return 0, fmt.Errorf("invalid date %q", s)
	}
	year, err1 := strconv.Atoi(y)
	month, err2 := strconv.Atoi(rest[:2])
	day, err3 := strconv.Atoi(rest[3:])
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, fmt.Errorf("invalid date %q", s)
	}
	if bc {
		year = 1 - year // 1 BC is year 0
	}
	return floorDiv(time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).Unix(), 86400), nil
}

// parseDate reads a date in DateStyle ISO into days since the epoch.
func parseDate(s string) (int64, error) {
	if s == "infinity" || s == "-infinity" {
		return 0, errInfinity
	}
	return parseYMD(s)
}

// parseTimeOfDay reads "HH:MM:SS[.ffffff]" into microseconds since
// midnight.
func parseTimeOfDay(s string) (int64, error) {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return 0, fmt.Errorf("invalid time %q", s)
	}
	h, err1 := strconv.Atoi(s[:2])
	m, err2 := strconv.Atoi(s[3:5])
	sec, err3 := strconv.Atoi(s[6:8])
	if err1 != nil || err2 != nil || err3 != nil {
		return 0, fmt.Errorf("invalid time %q", s)
	}
	us := (int64(h)*3600 + int64(m)*60 + int64(sec)) * 1_000_000
	if len(s) > 8 {
		if s[8] != '.' {
			return 0, fmt.Errorf("invalid time %q", s)
		}
		frac := s[9:]
		if len(frac) > 6 {
			frac = frac[:6]
		}
		f, err := strconv.Atoi(frac)
		if err != nil {
			return 0, fmt.Errorf("invalid time %q", s)
		}
		for i := len(frac); i < 6; i++ {
			f *= 10
		}
		us += int64(f)
	}
	return us, nil
}

// splitOffset separates a trailing UTC offset ("+02", "-05:30",
// "+01:02:03") from a time and returns it in seconds east of UTC.
func splitOffset(s string) (string, int64, error) {
	i := strings.LastIndexAny(s, "+-")
	if i < 8 {
		return "", 0, fmt.Errorf("no UTC offset in %q", s)
	}
	sign := int64(1)
	if s[i] == '-' {
		sign = -1
	}
	var secs int64
	for n, part := range strings.Split(s[i+1:], ":") {
		v, err := strconv.Atoi(part)
		if err != nil || n > 2 {
			return "", 0, fmt.Errorf("invalid UTC offset in %q", s)
		}
		secs += int64(v) * []int64{3600, 60, 1}[n]
	}
	return s[:i], sign * secs, nil
}

// parseTimestamp reads a timestamp in DateStyle ISO into microseconds since
// the epoch; with zone, the value carries a UTC offset.
func parseTimestamp(s string, zone bool) (int64, error) {
	if s == "infinity" || s == "-infinity" {
		return 0, errInfinity
	}
	s, bc := strings.CutSuffix(s, " BC")
	var off int64
	if zone {
		var err error
		if s, off, err = splitOffset(s); err != nil {
			return 0, err
		}
	}
	d, t, ok := strings.Cut(s, " ")
	if !ok {
		return 0, fmt.Errorf("invalid timestamp %q", s)
	}
	if bc {
		d += " BC"
	}
	days, err := parseYMD(d)
	if err != nil {
		return 0, err
	}
	us, err := parseTimeOfDay(t)
	if err != nil {
		return 0, err
	}
	return days*86_400_000_000 + us - off*1_000_000, nil
}

// formatZonedTimestamp writes an instant as Debezium's ZonedTimestamp: ISO
// 8601 in UTC, with exactly width fractional digits (a timestamptz
// column's precision), or the fewest needed when width is 0.
func formatZonedTimestamp(us int64, width int) string {
	t := time.UnixMicro(us).UTC()
	b := make([]byte, 0, 32)
	b = t.AppendFormat(b, "2006-01-02T15:04:05")
	b = appendFraction(b, t.Nanosecond()/1000, width)
	return string(append(b, 'Z'))
}

// appendFraction appends ".ffffff" cut to width digits, or with the
// trailing zeros removed (nothing for 0) when width is 0.
func appendFraction(b []byte, micros, width int) []byte {
	digits := fmt.Sprintf("%06d", micros)
	if width > 0 {
		for len(digits) < width {
			digits += "0"
		}
		return append(append(b, '.'), digits[:width]...)
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return b
	}
	return append(append(b, '.'), digits...)
}

// convTimeTZ converts a timetz to Debezium's ZonedTime: the time in UTC,
// ISO 8601.
func convTimeTZ(b []byte) (any, error) {
	s, off, err := splitOffset(string(b))
	if err != nil {
		return nil, err
	}
	us, err := parseTimeOfDay(s)
	if err != nil {
		return nil, err
	}
	us = ((us-off*1_000_000)%86_400_000_000 + 86_400_000_000) % 86_400_000_000
	secs := us / 1_000_000
	out := fmt.Appendf(nil, "%02d:%02d:%02d", secs/3600, secs/60%60, secs%60)
	out = appendFraction(out, int(us%1_000_000), 0)
	return string(append(out, 'Z')), nil
}

// daysPerMonthAvg is Debezium's MicroDuration.DAYS_PER_MONTH_AVG.
const daysPerMonthAvg = 365.25 / 12

// parseIntervalMicros reads an interval in IntervalStyle iso_8601
// ("P1Y2M3DT4H5M6.5S") into microseconds, as Debezium's
// MicroDuration.durationMicros does: a month is 30.4375 days.
func parseIntervalMicros(s string) (int64, error) {
	if !strings.HasPrefix(s, "P") {
		return 0, fmt.Errorf("invalid interval %q", s)
	}
	var months, days, micros int64
	inTime := false
	rest := s[1:]
	for rest != "" {
		if rest[0] == 'T' {
			inTime = true
			rest = rest[1:]
			continue
		}
		i := 0
		for i < len(rest) && (rest[i] == '-' || rest[i] == '+' || rest[i] == '.' || rest[i] >= '0' && rest[i] <= '9') {
			i++
		}
		if i == 0 || i == len(rest) {
			return 0, fmt.Errorf("invalid interval %q", s)
		}
		num, unit := rest[:i], rest[i]
		rest = rest[i+1:]
		if unit == 'S' && inTime {
			us, err := parseSecondsMicros(num)
			if err != nil {
				return 0, fmt.Errorf("invalid interval %q", s)
			}
			micros += us
			continue
		}
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid interval %q", s)
		}
		switch {
		case unit == 'Y' && !inTime:
			months += 12 * v
		case unit == 'M' && !inTime:
			months += v
		case unit == 'W' && !inTime:
			days += 7 * v
		case unit == 'D' && !inTime:
			days += v
		case unit == 'H' && inTime:
			micros += v * 3_600_000_000
		case unit == 'M' && inTime:
			micros += v * 60_000_000
		default:
			return 0, fmt.Errorf("invalid interval %q", s)
		}
	}
	// months × 30.4375 days is exact in a float64 (30.4375 = 487/16).
	monthMicros := int64(math.Round(float64(months) * daysPerMonthAvg * 86_400_000_000))
	return monthMicros + days*86_400_000_000 + micros, nil
}

// parseSecondsMicros reads "[-]S[.ffffff]" into microseconds.
func parseSecondsMicros(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	whole, frac, _ := strings.Cut(s, ".")
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, err
	}
	if len(frac) > 6 {
		frac = frac[:6]
	}
	var f int64
	if frac != "" {
		if f, err = strconv.ParseInt(frac, 10, 64); err != nil {
			return 0, err
		}
		for i := len(frac); i < 6; i++ {
			f *= 10
		}
	}
	us := w*1_000_000 + f
	if neg {
		us = -us
	}
	return us, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// convAs returns m's conversion for a column of schema s, a copy of
// m.schema that may be optional: a struct value must carry exactly its
// field's schema.
func (m *valueMapper) convAs(s *connect.Schema) func(b []byte) (any, error) {
	if m.schema.Type != connect.TypeStruct || s.Optional == m.schema.Optional {
		return m.conv
	}
	base := m.conv
	return func(b []byte) (any, error) {
		v, err := base(b)
		if st, ok := v.(*connect.Struct); ok && err == nil {
			out := connect.NewStruct(s)
			for _, f := range s.Fields {
				out.Put(f.Name, st.Get(f.Name))
			}
			v = out
		}
		return v, err
	}
}

// arrayMapper maps a one-dimensional array of elements em maps.
func arrayMapper(em *valueMapper) *valueMapper {
	elem := em.schema.AsOptional()
	conv := em.convAs(elem)
	return &valueMapper{schema: connect.ArrayOf(elem), conv: func(b []byte) (any, error) {
		items, err := parseArray(string(b))
		if err != nil {
			return nil, err
		}
		out := make([]any, len(items))
		for i, it := range items {
			if it == nil {
				continue
			}
			if out[i], err = conv([]byte(*it)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}, zero: []any{}}
}

// parseArray splits the text form of a one-dimensional array; nil items
// are NULLs.
func parseArray(s string) ([]*string, error) {
	if i := strings.IndexByte(s, '='); i >= 0 && strings.HasPrefix(s, "[") {
		s = s[i+1:] // explicit bounds "[0:1]={...}"
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("invalid array %q", s)
	}
	body := s[1 : len(s)-1]
	var out []*string
	if body == "" {
		return []*string{}, nil
	}
	for i := 0; i <= len(body); {
		if i < len(body) && body[i] == '{' {
			return nil, fmt.Errorf("multi-dimensional arrays are not supported: %q", s)
		}
		var item strings.Builder
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			i++
			for i < len(body) && body[i] != '"' {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				item.WriteByte(body[i])
				i++
			}
			i++ // closing quote
		} else {
			for i < len(body) && body[i] != ',' {
				item.WriteByte(body[i])
				i++
			}
		}
		v := item.String()
		if !quoted && strings.EqualFold(v, "NULL") {
			out = append(out, nil)
		} else {
			out = append(out, &v)
		}
		if i < len(body) && body[i] != ',' {
			return nil, fmt.Errorf("invalid array %q", s)
		}
		i++
	}
	return out, nil
}

// infinite values fit no Debezium time type; the column is then null (or
// its zero when NOT NULL).
func isInfinity(err error) bool { return errors.Is(err, errInfinity) }
