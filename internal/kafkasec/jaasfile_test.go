package kafkasec

import (
	"strings"
	"testing"
)

// A JAAS file's sections as Java's ConfigFile reads them: the one named,
// among others, with comments and quoted braces.
func TestJAASSection(t *testing.T) {
	file := `/* Kafka's JAAS file */
KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required
    username="admin" password="a}b"; // a brace in a password
};
// the REST API's users
KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
    file="/etc/connect/credentials.properties";
};`
	entries, err := JAASSection([]byte(file), "KafkaConnect")
	if err != nil || len(entries) != 1 || entries[0].LoginModule != "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule" ||
		entries[0].Flag != "required" || entries[0].Options["file"] != "/etc/connect/credentials.properties" {
		t.Fatalf("KafkaConnect: %+v, %v", entries, err)
	}
	server, err := JAASSection([]byte(file), "KafkaServer")
	if err != nil || len(server) != 1 || server[0].Options["password"] != "a}b" {
		t.Errorf("KafkaServer: %+v, %v", server, err)
	}
	for name, content := range map[string]string{
		"No JAAS configuration section named 'KafkaConnect' was found": `KafkaServer { x required; };`,
		"no closing brace":             `KafkaConnect { org.x.M required file="f";`,
		"not terminated by semi-colon": `KafkaConnect { org.x.M required file="f" };`,
	} {
		if _, err := JAASSection([]byte(content), "KafkaConnect"); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%q: %v, want %q", content, err, name)
		}
	}
}

// FuzzJAASSection: whatever a JAAS file holds, reading a section returns
// entries or an error, never a panic; entries always have a module and a
// flag.
func FuzzJAASSection(f *testing.F) {
	f.Add(`KafkaConnect { a.B required file="x"; };`)
	f.Add(`/* c */ A { m required k="v}"; }; KafkaConnect { m optional; };`)
	f.Add(`KafkaConnect { // x` + "\n" + `m sufficient k='v'; };`)
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := JAASSection([]byte(s), "KafkaConnect")
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.LoginModule == "" || e.Flag == "" {
				t.Fatalf("%q: entry %+v", s, e)
			}
		}
	})
}
