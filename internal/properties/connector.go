package properties

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// nameConfig is the connector config key that names the connector.
const nameConfig = "name"

// LoadConnectorConfig reads a connector config file given to standalone
// mode, with the rules of Kafka's ConnectStandalone.parseConnectorConfigurationFile
// (3.6+). The formats are tried in order:
//
//  1. A JSON object of string to string: the flat connector config. It must
//     contain "name".
//  2. A JSON object shaped like the POST /connectors body:
//     {"name":..,"config":{..},"initial_state":..}. Unknown fields are
//     ignored. If config.name is present it must equal name; otherwise it
//     is filled in.
//  3. A Java .properties file. It must contain "name".
//
// As with Jackson, JSON numbers and booleans are accepted as config values
// and kept as their text, and anything after the first JSON value is
// ignored. A JSON document that fits neither shape (an array, a nested
// object in the flat form, an unknown initial_state, ...) falls through to
// the next format, as in Kafka.
//
// initialState is "" when the file does not set it, else RUNNING, PAUSED
// or STOPPED (upper case).
//
// Where Kafka would carry a JSON null on and fail later, this returns an
// error at once: a null or missing name is a missing name, a null config
// value is an error naming the key, and a POST-shaped body without a
// config object is an error.
func LoadConnectorConfig(path string) (name string, config map[string]string, initialState string, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil, "", err
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF")) // Jackson skips a BOM too
	missingName := fmt.Errorf("Connector configuration at '%s' is missing the mandatory '%s' configuration", path, nameConfig)

	// 1. Flat JSON map of string to string.
	if flat, ok := decodeFlat(data); ok {
		n, found := flat[nameConfig]
		if !found || n == nil {
			return "", nil, "", missingName
		}
		cfg, err := nonNullValues(flat, path)
		if err != nil {
			return "", nil, "", err
		}
		return *n, cfg, "", nil
	}

	// 2. A CreateConnectorRequest body, unknown fields ignored.
	if req, ok := decodeCreateRequest(data); ok {
		if req.config == nil {
			if req.name == nil {
				return "", nil, "", missingName
			}
			return "", nil, "", fmt.Errorf("Connector configuration at '%s' has no 'config' object", path)
		}
		cfgName, hasName := req.config[nameConfig]
		if hasName {
			if req.name == nil || cfgName == nil || *cfgName != *req.name {
				return "", nil, "", fmt.Errorf("Connector name configuration in 'config' doesn't match the one specified in 'name' at '%s'", path)
			}
		} else {
			if req.name == nil {
				return "", nil, "", missingName
			}
			req.config[nameConfig] = req.name
		}
		cfg, err := nonNullValues(req.config, path)
		if err != nil {
			return "", nil, "", err
		}
		return *req.name, cfg, req.initialState, nil
	}

	// 3. A .properties file.
	props, err := parseBytes(data, false)
	if err != nil {
		return "", nil, "", fmt.Errorf("%s: %w", path, err)
	}
	n, ok := props[nameConfig]
	if !ok {
		// Kafka reports only the missing name here, which for a JSON file
		// with a trailing comma or a missing quote hides the real mistake.
		if jerr := jsonSyntaxError(data); jerr != nil {
			return "", nil, "", fmt.Errorf("Connector configuration at '%s' is not valid JSON: %w", path, jerr)
		}
		return "", nil, "", missingName
	}
	return n, props, "", nil
}

// jsonSyntaxError returns where data, which looks like a JSON object,
// stops being JSON, as "line L, column C: ...", or nil if data does not
// start like an object or is valid JSON.
func jsonSyntaxError(data []byte) error {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil
	}
	var v any
	err := json.NewDecoder(bytes.NewReader(data)).Decode(&v)
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &syn):
		line, col := lineColumn(data, syn.Offset)
		return fmt.Errorf("line %d, column %d: %s", line, col, syn.Error())
	case errors.Is(err, io.ErrUnexpectedEOF):
		line, col := lineColumn(data, int64(len(data)))
		return fmt.Errorf("line %d, column %d: unexpected end of JSON input", line, col)
	}
	return nil
}

// lineColumn turns a byte offset into a 1-based line and column.
func lineColumn(data []byte, off int64) (line, col int) {
	before := data[:min(off, int64(len(data)))]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n') - 1
	return line, col
}

func nonNullValues(m map[string]*string, path string) (map[string]string, error) {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v == nil {
			return nil, fmt.Errorf("Connector configuration at '%s' has a null value for '%s'", path, k)
		}
		out[k] = *v
	}
	return out, nil
}

// jsonObject decodes the first JSON value of data, which must be an object,
// into its raw members. Like Jackson's ObjectMapper.readValue, trailing
// content after the value is ignored, and a duplicated key keeps its last
// value.
func jsonObject(data []byte) (map[string]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, false
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, false
	}
	return obj, true
}

// scalarText is Jackson's String coercion for a Map<String,String> value:
// strings as they are, numbers and booleans as their JSON text, null as
// nil. Objects and arrays do not bind.
func scalarText(raw json.RawMessage) (*string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false
		}
		return &s, true
	case c == 'n':
		return nil, true
	case c == 't', c == 'f', c == '-', '0' <= c && c <= '9':
		s := string(raw)
		return &s, true
	}
	return nil, false
}

// decodeFlat decodes a JSON object of scalar values (format 1).
func decodeFlat(data []byte) (map[string]*string, bool) {
	obj, ok := jsonObject(data)
	if !ok {
		return nil, false
	}
	return stringMap(obj)
}

func stringMap(obj map[string]json.RawMessage) (map[string]*string, bool) {
	m := make(map[string]*string, len(obj))
	for k, raw := range obj {
		v, ok := scalarText(raw)
		if !ok {
			return nil, false
		}
		m[k] = v
	}
	return m, true
}

type createRequest struct {
	name         *string
	config       map[string]*string
	initialState string
}

// decodeCreateRequest decodes a CreateConnectorRequest (format 2).
func decodeCreateRequest(data []byte) (createRequest, bool) {
	var req createRequest
	obj, ok := jsonObject(data)
	if !ok {
		return req, false
	}
	if raw, ok := obj["name"]; ok {
		v, ok := scalarText(raw)
		if !ok {
			return req, false
		}
		req.name = v
	}
	if raw, ok := obj["config"]; ok && !isNull(raw) {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return req, false
		}
		if req.config, ok = stringMap(members); !ok {
			return req, false
		}
	}
	if raw, ok := obj["initial_state"]; ok && !isNull(raw) {
		v, ok := scalarText(raw)
		if !ok || v == nil {
			return req, false
		}
		// InitialState.forValue: valueOf(value.toUpperCase(Locale.ROOT)).
		switch s := strings.ToUpper(*v); s {
		case "RUNNING", "PAUSED", "STOPPED":
			req.initialState = s
		default:
			return req, false
		}
	}
	return req, true
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
