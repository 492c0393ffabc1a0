package transforms

import (
	"github.com/connectd/connectd/connect"
)

// DropHeaders is Kafka's DropHeaders: it removes every header whose key
// is one of headers.
type DropHeaders struct {
	headers map[string]bool
}

var dropHeadersConfig = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: "headers", Type: connect.ConfigList, Required: true, Validator: nonEmptyList,
		Importance: connect.High, Doc: "The name of the headers to be removed."})

// Config returns DropHeaders' keys.
func (t *DropHeaders) Config() *connect.ConfigDef { return dropHeadersConfig }

// Configure reads headers.
func (t *DropHeaders) Configure(config map[string]string) error {
	pc, err := dropHeadersConfig.Parse(config)
	if err != nil {
		return err
	}
	t.headers = map[string]bool{}
	for _, h := range pc.List("headers") {
		t.headers[h] = true
	}
	return nil
}

// Apply gives the record a new header list without the dropped ones.
func (t *DropHeaders) Apply(r *connect.Record) (*connect.Record, error) {
	kept := make([]connect.Header, 0, len(r.Headers))
	for _, h := range r.Headers {
		if !t.headers[h.Key] {
			kept = append(kept, h)
		}
	}
	r.Headers = kept
	return r, nil
}
