package storage

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/connectd/connectd/internal/javajson"
)

const (
	connectorsFormat = "connectd.connectors"
	connectorsFile   = "connectors file"
	// Connector configs routinely hold credentials.
	connectorsPerm os.FileMode = 0o600
)

// Target states a stored connector may have (spec §2.2).
const (
	TargetStateStarted = "STARTED"
	TargetStatePaused  = "PAUSED"
	TargetStateStopped = "STOPPED"
)

// StoredConnector is a connector as the standalone worker persists it.
type StoredConnector struct {
	Name        string
	Config      map[string]string
	TargetState string // TargetStateStarted, TargetStatePaused or TargetStateStopped
}

// ConfigFileStore persists connectors created or changed through the REST
// API in standalone mode, so that they survive a restart (Apache Kafka's
// standalone worker keeps them in memory only and loses them). Every change
// rewrites the file atomically before returning. It is safe for concurrent
// use.
type ConfigFileStore struct {
	path string

	mu         sync.Mutex
	connectors map[string]StoredConnector // Config maps are never modified once stored
}

// OpenConfigFileStore loads the connectors file at path. A missing file
// gives an empty store; a file that exists but cannot be used is an error
// naming it, since starting with no connectors would quietly stop every
// pipeline the operator had configured.
func OpenConfigFileStore(path string) (*ConfigFileStore, error) {
	s := &ConfigFileStore{path: path, connectors: map[string]StoredConnector{}}
	if err := loadFile(path, connectorsFile, s.load); err != nil {
		return nil, err
	}
	return s, nil
}

// Path returns the file the store persists to.
func (s *ConfigFileStore) Path() string { return s.path }

func (s *ConfigFileStore) load(data []byte) error {
	items, err := decodeEnvelope(data, connectorsFormat, "connectors")
	if err != nil {
		return err
	}
	for i, item := range items {
		c, err := decodeStoredConnector(item)
		if err != nil {
			return fmt.Errorf("connectors entry %d: %v", i, err)
		}
		if _, dup := s.connectors[c.Name]; dup {
			return fmt.Errorf("connectors entry %d: duplicate connector %q", i, c.Name)
		}
		s.connectors[c.Name] = c
	}
	return nil
}

func decodeStoredConnector(item any) (StoredConnector, error) {
	obj, ok := item.(map[string]any)
	if !ok {
		return StoredConnector{}, fmt.Errorf("is %s, want an object", jsonKind(item))
	}
	if err := checkFields(obj, "name", "config", "target_state"); err != nil {
		return StoredConnector{}, err
	}
	name, ok := obj["name"].(string)
	if !ok {
		return StoredConnector{}, fmt.Errorf("name is %s, want a string", jsonKind(obj["name"]))
	}
	rawConfig, ok := obj["config"].(map[string]any)
	if !ok {
		return StoredConnector{}, fmt.Errorf("config of connector %q is %s, want an object", name, jsonKind(obj["config"]))
	}
	config := make(map[string]string, len(rawConfig))
	for k, v := range rawConfig {
		sv, ok := v.(string)
		if !ok {
			return StoredConnector{}, fmt.Errorf("config key %q of connector %q is %s, want a string", k, name, jsonKind(v))
		}
		config[k] = sv
	}
	state, ok := obj["target_state"].(string)
	if !ok {
		return StoredConnector{}, fmt.Errorf("target_state of connector %q is %s, want a string", name, jsonKind(obj["target_state"]))
	}
	c := StoredConnector{Name: name, Config: config, TargetState: state}
	if err := validateStoredConnector(c); err != nil {
		return StoredConnector{}, err
	}
	return c, nil
}

func validateStoredConnector(c StoredConnector) error {
	if c.Name == "" {
		return errors.New("connector name is empty")
	}
	switch c.TargetState {
	case TargetStateStarted, TargetStatePaused, TargetStateStopped:
	default:
		return fmt.Errorf("connector %q has invalid target state %q (want STARTED, PAUSED or STOPPED)", c.Name, c.TargetState)
	}
	// Kafka Connect insists the two agree (spec §1.4.4, §5.1); a mismatch
	// here means a caller bug or a hand-edited file, either way not
	// something to persist or start.
	if n, ok := c.Config["name"]; ok && n != c.Name {
		return fmt.Errorf("connector %q has config name %q", c.Name, n)
	}
	// JSON cannot carry invalid UTF-8: it would be written as U+FFFD and
	// come back different after a restart, so refuse it up front.
	if !utf8.ValidString(c.Name) {
		return fmt.Errorf("connector name %q is not valid UTF-8", c.Name)
	}
	for k, v := range c.Config {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("connector %q: config entry %q is not valid UTF-8", c.Name, k)
		}
	}
	return nil
}

// List returns every stored connector, sorted by name, as copies.
func (s *ConfigFileStore) List() []StoredConnector {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]StoredConnector, 0, len(s.connectors))
	for _, name := range slices.Sorted(maps.Keys(s.connectors)) {
		out = append(out, copyConnector(s.connectors[name]))
	}
	return out
}

// Get returns a copy of one stored connector.
func (s *ConfigFileStore) Get(name string) (StoredConnector, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.connectors[name]
	if !ok {
		return StoredConnector{}, false
	}
	return copyConnector(c), true
}

// Put creates or replaces a connector and persists the file before
// returning. On a write failure the previous state is restored in memory.
func (s *ConfigFileStore) Put(c StoredConnector) error {
	if err := validateStoredConnector(c); err != nil {
		return err
	}
	c = copyConnector(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, existed := s.connectors[c.Name]
	s.connectors[c.Name] = c
	if err := s.saveLocked(); err != nil {
		if existed {
			s.connectors[c.Name] = prev
		} else {
			delete(s.connectors, c.Name)
		}
		return err
	}
	return nil
}

// Delete removes a connector and persists the file before returning.
// Deleting a connector that is not stored is a no-op, so a caller retrying
// after a failure does not have to special-case it.
func (s *ConfigFileStore) Delete(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, existed := s.connectors[name]
	if !existed {
		return nil
	}
	delete(s.connectors, name)
	if err := s.saveLocked(); err != nil {
		s.connectors[name] = prev
		return err
	}
	return nil
}

func copyConnector(c StoredConnector) StoredConnector {
	c.Config = maps.Clone(c.Config)
	if c.Config == nil {
		c.Config = map[string]string{}
	}
	return c
}

func (s *ConfigFileStore) saveLocked() error {
	return WriteFileAtomic(s.path, s.encodeLocked(), connectorsPerm)
}

// encodeLocked sorts connectors by name and config keys alphabetically so
// the file is deterministic and diffs stay readable.
func (s *ConfigFileStore) encodeLocked() []byte {
	b := fmt.Appendf(nil, `{"format":"%s","version":%d,"connectors":[`, connectorsFormat, fileVersion)
	for i, name := range slices.Sorted(maps.Keys(s.connectors)) {
		c := s.connectors[name]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = javajson.AppendString(b, c.Name)
		b = append(b, `,"config":{`...)
		for j, k := range slices.Sorted(maps.Keys(c.Config)) {
			if j > 0 {
				b = append(b, ',')
			}
			b = javajson.AppendString(b, k)
			b = append(b, ':')
			b = javajson.AppendString(b, c.Config[k])
		}
		b = append(b, `},"target_state":`...)
		b = javajson.AppendString(b, c.TargetState)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	out, err := indentJSON(b)
	if err != nil {
		// Only strings are written, through javajson, so the text is
		// always valid JSON.
		panic("storage: connectors file encoding produced invalid JSON: " + err.Error())
	}
	return out
}
