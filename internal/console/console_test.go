package console_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/console"
	"github.com/connectd/connectd/internal/embedded"
)

// The console's consumer group endpoints against the embedded broker:
// the list with lag, a group's partitions, a reset previewed, refused
// while the group has members, then applied and verified; mistakes are
// 4xx in Kafka Connect's error shape.
func TestGroupEndpoints(t *testing.T) {
	b, err := embedded.Start(embedded.Config{Listen: "127.0.0.1:0", DataDir: filepath.Join(t.TempDir(), "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	var os kadm.Offsets
	os.AddOffset("orders", 0, 4, -1)
	if err := adm.CommitAllOffsets(ctx, "billing", os); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(console.New(console.Options{Admin: func() (*kadm.Client, func(), error) {
		c, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
		if err != nil {
			return nil, nil, err
		}
		return kadm.NewClient(c), c.Close, nil
	}}))
	t.Cleanup(srv.Close)
	call := func(method, path, body string) (int, map[string]any, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return resp.StatusCode, m, string(raw)
	}

	if code, _, body := call("GET", "/ui/api/groups", ""); code != 200 || !strings.Contains(body, `{"group":"billing","state":"Empty","members":0,"lag":1}`) {
		t.Errorf("groups: %d %s", code, body)
	}
	if code, _, body := call("GET", "/ui/api/groups/billing", ""); code != 200 || !strings.Contains(body, `"current_offset":4,"log_end_offset":5,"lag":1`) {
		t.Errorf("group: %d %s", code, body)
	}
	if code, m, _ := call("GET", "/ui/api/groups/nope", ""); code != 404 || m["message"] != "Consumer group 'nope' does not exist." || m["error_code"] != 404.0 {
		t.Errorf("an unknown group: %d %v", code, m)
	}
	for body, want := range map[string]string{
		`{"to":"nowhere"}`:                    `"to" is "nowhere"`,
		`{"to":"offset"}`:                     `"to":"offset" needs "offset"`,
		`{"to":"datetime","datetime":"noon"}`: `datetime "noon": want a time`,
		`{"to":"earliest","extra":1}`:         `unknown field "extra"`,
		`{"to":"earliest","topic":"nope"}`:    "topic nope does not exist",
		`not json`:                            "the reset request",
	} {
		if code, m, _ := call("POST", "/ui/api/groups/billing/reset", body); code != 400 || !strings.Contains(m["message"].(string), want) {
			t.Errorf("reset %s: %d %v, want 400 with %q", body, code, m, want)
		}
	}
	code, m, body := call("POST", "/ui/api/groups/billing/reset", `{"to":"offset","offset":99,"dry_run":true}`)
	if code != 200 || m["applied"] != false || !strings.Contains(body, `"changes":[{"topic":"orders","partition":0,"before":4,"after":5}]`) ||
		!strings.Contains(body, "is higher than latest offset") {
		t.Errorf("dry run: %d %s", code, body)
	}

	// With a member, Kafka takes no commit from outside: refused.
	member, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumerGroup("billing"), kgo.ConsumeTopics("orders"))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		member.PollFetches(pctx)
		cancel()
		if _, m, _ := call("GET", "/ui/api/groups/billing", ""); m["state"] == "Stable" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("billing never got its member")
		}
	}
	if code, m, _ := call("POST", "/ui/api/groups/billing/reset", `{"to":"earliest"}`); code != 409 || !strings.Contains(m["message"].(string), "can only be reset if the group 'billing' is inactive") {
		t.Errorf("reset while active: %d %v", code, m)
	}
	member.Close()
	for {
		if _, m, _ := call("GET", "/ui/api/groups/billing", ""); m["state"] == "Empty" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("billing never emptied")
		}
	}
	code, m, body = call("POST", "/ui/api/groups/billing/reset", `{"to":"earliest"}`)
	if code != 200 || m["applied"] != true || m["verified"] != true {
		t.Errorf("reset: %d %s", code, body)
	}
	if o, err := adm.FetchOffsets(ctx, "billing"); err != nil || o["orders"][0].At != 0 {
		t.Errorf("billing after the reset: %v %v", o, err)
	}
}
