package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/servertest"
)

// basicAuthProps writes a JAAS file and its credentials as a Java worker
// has them, points KAFKA_OPTS at the JAAS file, and returns the worker
// keys that turn Kafka's basic authentication on.
func basicAuthProps(t *testing.T) map[string]string {
	creds := servertest.WriteFile(t, "credentials.properties", []byte("alice=s3cret\nbob: other\n"))
	jaas := servertest.WriteFile(t, "connect_jaas.conf", []byte(`// the worker's login
KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required username="x" password="y"; };
KafkaConnect {
  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
    file="`+creds+`";
};
`))
	t.Setenv("KAFKA_OPTS", "-Xmx512m -Djava.security.auth.login.config="+jaas)
	return map[string]string{"rest.extension.classes": "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"}
}

// get asks path with credentials (none when user is "").
func get(t *testing.T, base, user, pass, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Kafka's basic authentication on a two-worker cluster: no or wrong
// credentials get Kafka's 401, right ones get in; a request to a follower
// is forwarded with them; the workers' own task configs go through
// without them.
func TestBasicAuthCluster(t *testing.T) {
	c := startCluster(t, 0, basicAuthProps(t))
	c.add()
	c.add()
	ctx := context.Background()
	var clients []*client.Client
	for i, d := range c.workers {
		base := "http://" + d.RESTAddr
		eventually(t, fmt.Sprintf("worker %d healthy", i), func() bool { code, _ := get(t, base, "alice", "s3cret", "/health"); return code == 200 })
		for _, cred := range [][2]string{{"", ""}, {"alice", "wrong"}, {"carol", "s3cret"}} {
			code, body := get(t, base, cred[0], cred[1], "/connectors")
			if code != 401 || body != "User cannot access the resource." {
				t.Errorf("worker %d, credentials %q: %d %q", i, cred, code, body)
			}
		}
		if code, _ := get(t, base, "bob", "other", "/connectors"); code != 200 {
			t.Errorf("worker %d, bob: %d", i, code)
		}
		cl, _ := client.New(base, client.WithBasicAuth("alice", "s3cret"))
		clients = append(clients, cl)
	}
	in := filepath.Join(t.TempDir(), "in.txt")
	writeLines(t, in, lines(1, 3)...)
	for i, cl := range clients {
		name := fmt.Sprintf("src-%d", i)
		if _, err := cl.CreateConnector(ctx, name, map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "auth", "tasks.max": "1"}, "", nil); err != nil {
			t.Fatalf("POST /connectors to worker %d: %v", i, err)
		}
	}
	for i := range clients {
		name := fmt.Sprintf("src-%d", i)
		eventually(t, name+" running with its task", func() bool {
			st, err := clients[1-i].Status(ctx, name)
			return err == nil && st.Connector.State == "RUNNING" && len(st.Tasks) == 1 && st.Tasks[0].State == "RUNNING"
		})
	}
	// The internal endpoint is not asked for credentials (its signature
	// is checked instead).
	req, _ := http.NewRequest("POST", "http://"+c.workers[0].RESTAddr+"/connectors/src-0/tasks", strings.NewReader("[]"))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == 401 {
		t.Error("POST /connectors/{name}/tasks asked for credentials")
	}
}
