package jdbcdb

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Unsupported is a key Confluent's connector defines that connectd does
// not implement, with Confluent's default.
type Unsupported struct {
	Name, Default string
}

// CredentialsProvider is Confluent's jdbc.credentials.provider.class,
// in source and sink alike: connectd takes the credentials of
// connection.user and connection.password only, as its default does.
var CredentialsProvider = Unsupported{"jdbc.credentials.provider.class", "io.confluent.connect.jdbc.util.DefaultJdbcCredentialsProvider"}

// DefineUnsupported defines each key in d, in group, so that a config
// setting it to anything but Confluent's default (compared without case
// and surrounding spaces) is refused with a message naming it, rather
// than run with the setting ignored.
func DefineUnsupported(d *connect.ConfigDef, group string, keys ...Unsupported) {
	for _, k := range keys {
		def := k.Default
		d.Define(connect.ConfigKey{Name: k.Name, Type: connect.ConfigString, Default: def, Importance: connect.Low, Group: group,
			Doc: fmt.Sprintf("A setting of Confluent's connector that connectd does not implement: a config that sets it to anything but its default (%s) is refused.", def),
			Validator: func(v any) error {
				if s, _ := v.(string); strings.EqualFold(strings.TrimSpace(s), def) {
					return nil
				}
				return fmt.Errorf("connectd does not implement this setting; only its default (%s) is accepted", def)
			}})
	}
}
