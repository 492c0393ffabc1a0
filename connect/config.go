package connect

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ConfigType is the type of a config key, named as Kafka's ConfigDef.Type.
type ConfigType string

// The config key types.
const (
	ConfigBoolean  ConfigType = "BOOLEAN"
	ConfigString   ConfigType = "STRING"
	ConfigInt      ConfigType = "INT"
	ConfigShort    ConfigType = "SHORT"
	ConfigLong     ConfigType = "LONG"
	ConfigDouble   ConfigType = "DOUBLE"
	ConfigList     ConfigType = "LIST"
	ConfigClass    ConfigType = "CLASS"
	ConfigPassword ConfigType = "PASSWORD"
)

// Importance says how much a user should care about a key.
type Importance string

// The importance levels.
const (
	High   Importance = "HIGH"
	Medium Importance = "MEDIUM"
	Low    Importance = "LOW"
)

// Width is a display hint for UIs.
type Width string

// The display widths.
const (
	WidthNone   Width = "NONE"
	WidthShort  Width = "SHORT"
	WidthMedium Width = "MEDIUM"
	WidthLong   Width = "LONG"
)

// ConfigKey declares one config key. The same declaration drives parsing,
// validation, the validate endpoint and the plugin-config endpoint.
type ConfigKey struct {
	Name string
	Type ConfigType
	// Required marks a key without a default: leaving it out is an error.
	Required bool
	// Default is the value used when the key is absent, in its parsed
	// form (string, int32, int64, bool, float64, []string) or as the text
	// a user would write; nil is a null default.
	Default    any
	Validator  ConfigValidator
	Importance Importance
	Doc        string
	// Group, OrderInGroup, Width and DisplayName are display hints; a key
	// without a group shows order -1, width NONE and its name.
	Group        string
	OrderInGroup int
	Width        Width
	DisplayName  string
	Dependents   []string
	// Recommended lists suggested values for UIs.
	Recommended []string
}

// ConfigValidator checks a parsed value. Its error text is the reason in
// Kafka's message "Invalid value <v> for configuration <k>: <reason>".
type ConfigValidator func(value any) error

// ConfigDef is an ordered set of config key declarations.
type ConfigDef struct {
	keys []ConfigKey
}

// NewConfigDef returns an empty definition.
func NewConfigDef() *ConfigDef { return &ConfigDef{} }

// Define adds a key and returns d so calls chain. Defining a name twice
// panics: it is a programming error.
func (d *ConfigDef) Define(k ConfigKey) *ConfigDef {
	if d.Key(k.Name) != nil {
		panic("connect: config key " + k.Name + " defined twice")
	}
	if k.Group == "" {
		k.OrderInGroup = -1
	}
	if k.Width == "" {
		k.Width = WidthNone
	}
	if k.DisplayName == "" {
		k.DisplayName = k.Name
	}
	if k.Importance == "" {
		k.Importance = Medium
	}
	d.keys = append(d.keys, k)
	return d
}

// Keys returns the declarations in definition order.
func (d *ConfigDef) Keys() []ConfigKey {
	if d == nil {
		return nil
	}
	return slices.Clone(d.keys)
}

// Key returns the named declaration, or nil.
func (d *ConfigDef) Key(name string) *ConfigKey {
	if d == nil {
		return nil
	}
	for i := range d.keys {
		if d.keys[i].Name == name {
			return &d.keys[i]
		}
	}
	return nil
}

// Merge returns a definition with d's keys followed by those of other that
// d does not define.
func (d *ConfigDef) Merge(other *ConfigDef) *ConfigDef {
	out := &ConfigDef{keys: d.Keys()}
	for _, k := range other.Keys() {
		if out.Key(k.Name) == nil {
			out.keys = append(out.keys, k)
		}
	}
	return out
}

// ConfigValue is the outcome of validating one key.
type ConfigValue struct {
	Name string
	// Value is the parsed value, or the raw text when it did not parse.
	Value       any
	Recommended []string
	Errors      []string
	Visible     bool
}

// Validate checks props against every declared key and returns one
// ConfigValue per key, in definition order. It never fails: problems are in
// each value's Errors.
func (d *ConfigDef) Validate(props map[string]string) []ConfigValue {
	out := make([]ConfigValue, 0, len(d.keys))
	for _, k := range d.keys {
		cv := ConfigValue{Name: k.Name, Recommended: k.Recommended, Visible: true}
		v, err := k.parse(props)
		cv.Value = v
		if err != nil {
			cv.Errors = append(cv.Errors, err.Error())
		}
		out = append(out, cv)
	}
	return out
}

// Parse parses props and returns the values of every declared key, or the
// first error in Kafka's wording.
func (d *ConfigDef) Parse(props map[string]string) (*ParsedConfig, error) {
	pc := &ParsedConfig{values: make(map[string]any, len(d.keys)), originals: props}
	for _, k := range d.keys {
		v, err := k.parse(props)
		if err != nil {
			return nil, err
		}
		pc.values[k.Name] = v
	}
	return pc, nil
}

// ConfigError is a config problem, worded as Kafka's ConfigException.
type ConfigError struct {
	Name    string
	Message string
}

func (e *ConfigError) Error() string { return e.Message }

func invalid(name string, value any, reason string) *ConfigError {
	msg := fmt.Sprintf("Invalid value %s for configuration %s", javaString(value), name)
	if reason != "" {
		msg += ": " + reason
	}
	return &ConfigError{Name: name, Message: msg}
}

func (k *ConfigKey) parse(props map[string]string) (any, error) {
	raw, present := props[k.Name]
	if !present {
		if k.Required {
			return nil, &ConfigError{Name: k.Name, Message: fmt.Sprintf("Missing required configuration %q which has no default value.", k.Name)}
		}
		if k.Default == nil {
			return k.validate(nil)
		}
		if s, ok := k.Default.(string); ok && k.Type != ConfigString && k.Type != ConfigClass && k.Type != ConfigPassword {
			v, err := ParseValue(k.Name, k.Type, s)
			if err != nil {
				return nil, err
			}
			return k.validate(v)
		}
		return k.validate(k.Default)
	}
	v, err := ParseValue(k.Name, k.Type, raw)
	if err != nil {
		return raw, err
	}
	return k.validate(v)
}

func (k *ConfigKey) validate(v any) (any, error) {
	if k.Validator == nil {
		return v, nil
	}
	if err := k.Validator(v); err != nil {
		var ce *ConfigError
		if e, ok := err.(*ConfigError); ok {
			ce = e
		} else {
			ce = invalid(k.Name, v, err.Error())
		}
		return v, ce
	}
	return v, nil
}

var commaWithSpace = regexp.MustCompile(`\s*,\s*`)

// ParseValue parses the text of a config value as Kafka's ConfigDef does
// for its type: trimmed, but named as written in errors.
func ParseValue(name string, t ConfigType, raw string) (any, error) {
	s := strings.TrimSpace(raw)
	switch t {
	case ConfigBoolean:
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, invalid(name, raw, "Expected value to be either true or false")
	case ConfigString, ConfigClass:
		return s, nil
	case ConfigPassword:
		return Password(s), nil
	case ConfigInt:
		i, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, invalid(name, raw, "Not a number of type INT")
		}
		return int32(i), nil
	case ConfigShort:
		i, err := strconv.ParseInt(s, 10, 16)
		if err != nil {
			return nil, invalid(name, raw, "Not a number of type SHORT")
		}
		return int16(i), nil
	case ConfigLong:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, invalid(name, raw, "Not a number of type LONG")
		}
		return i, nil
	case ConfigDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return nil, invalid(name, raw, "Not a number of type DOUBLE")
		}
		return f, nil
	case ConfigList:
		if s == "" {
			return []string{}, nil
		}
		return commaWithSpace.Split(s, -1), nil
	}
	return nil, fmt.Errorf("unknown config type %s", t)
}

// Password is a secret config value; it prints as [hidden].
type Password string

func (Password) String() string { return "[hidden]" }

// FormatValue renders a parsed value as Kafka's ConfigDef.convertToString:
// lists comma-joined, passwords hidden, nil as nil.
func FormatValue(v any) *string {
	if v == nil {
		return nil
	}
	var s string
	switch x := v.(type) {
	case []string:
		s = strings.Join(x, ",")
	case Password:
		s = x.String()
	case float64:
		s = javaDouble(x)
	default:
		s = fmt.Sprint(x)
	}
	return &s
}

// javaString renders a value as Java's String.valueOf would, for messages.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case float64:
		return javaDouble(x)
	}
	return fmt.Sprint(v)
}

func javaDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eEIN") {
		s += ".0"
	}
	return s
}

// ParsedConfig holds parsed config values by key.
type ParsedConfig struct {
	values    map[string]any
	originals map[string]string
}

// Get returns the parsed value of a key.
func (c *ParsedConfig) Get(name string) any { return c.values[name] }

// String returns a STRING, CLASS or PASSWORD value, "" when null.
func (c *ParsedConfig) String(name string) string {
	switch v := c.values[name].(type) {
	case string:
		return v
	case Password:
		return string(v)
	}
	return ""
}

// Int returns an INT or SHORT value.
func (c *ParsedConfig) Int(name string) int {
	switch v := c.values[name].(type) {
	case int32:
		return int(v)
	case int16:
		return int(v)
	case int:
		return v
	}
	return 0
}

// Long returns a LONG value.
func (c *ParsedConfig) Long(name string) int64 {
	switch v := c.values[name].(type) {
	case int64:
		return v
	case int32:
		return int64(v)
	case int:
		return int64(v)
	}
	return 0
}

// Bool returns a BOOLEAN value.
func (c *ParsedConfig) Bool(name string) bool { b, _ := c.values[name].(bool); return b }

// Double returns a DOUBLE value.
func (c *ParsedConfig) Double(name string) float64 { f, _ := c.values[name].(float64); return f }

// List returns a LIST value.
func (c *ParsedConfig) List(name string) []string { l, _ := c.values[name].([]string); return l }

// Originals returns the props the config was parsed from.
func (c *ParsedConfig) Originals() map[string]string { return c.originals }

// Validators with Kafka's texts.

// AtLeast accepts numbers >= min (Kafka's Range.atLeast).
func AtLeast(min int64) ConfigValidator {
	return func(v any) error {
		if v == nil {
			return fmt.Errorf("Value must be non-null")
		}
		if n, ok := asInt64(v); ok && n < min {
			return fmt.Errorf("Value must be at least %d", min)
		}
		return nil
	}
}

// Between accepts numbers in [min, max] (Kafka's Range.between).
func Between(min, max int64) ConfigValidator {
	return func(v any) error {
		if v == nil {
			return fmt.Errorf("Value must be non-null")
		}
		n, ok := asInt64(v)
		if ok && n < min {
			return fmt.Errorf("Value must be at least %d", min)
		}
		if ok && n > max {
			return fmt.Errorf("Value must be no more than %d", max)
		}
		return nil
	}
}

func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

// NonEmptyString refuses an empty string (Kafka's NonEmptyString); null is
// allowed.
func NonEmptyString() ConfigValidator {
	return func(v any) error {
		if s, ok := v.(string); ok && s == "" {
			return fmt.Errorf("String must be non-empty")
		}
		return nil
	}
}

// NonEmptyStringWithoutControlChars is Kafka's validator for connector
// names.
func NonEmptyStringWithoutControlChars() ConfigValidator {
	return func(v any) error {
		s, _ := v.(string)
		if v == nil || s == "" {
			return fmt.Errorf("String may not be empty")
		}
		var bad []string
		for _, r := range s {
			if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
				bad = append(bad, strconv.Itoa(int(r)))
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("String may not contain control sequences but had the following ASCII chars: %s", strings.Join(bad, ", "))
		}
		return nil
	}
}

// OneOf accepts only the given strings (Kafka's ValidString).
func OneOf(values ...string) ConfigValidator {
	return func(v any) error {
		s, _ := v.(string)
		if !slices.Contains(values, s) {
			return fmt.Errorf("String must be one of: %s", strings.Join(values, ", "))
		}
		return nil
	}
}

// OneOfIgnoreCase accepts the given strings in any case (Kafka's
// CaseInsensitiveValidString).
func OneOfIgnoreCase(values ...string) ConfigValidator {
	return func(v any) error {
		s, _ := v.(string)
		for _, x := range values {
			if strings.EqualFold(x, s) {
				return nil
			}
		}
		return fmt.Errorf("String must be one of (case insensitive): %s", strings.Join(values, ", "))
	}
}
