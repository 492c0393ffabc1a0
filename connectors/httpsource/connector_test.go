package httpsource

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

func TestRegisteredWithAliases(t *testing.T) {
	plugins, err := connect.NewPluginSet(Plugins()...)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{ConnectorClass, "HttpSourceConnector", "HttpSource"} {
		p, err := plugins.Lookup(name)
		if err != nil || p.Class != ConnectorClass || p.Type != connect.PluginSource || p.Version != Version {
			t.Fatalf("LookupPlugin(%s) = %+v, %v", name, p, err)
		}
		if _, ok := p.New().(connect.SourceConnector); !ok {
			t.Fatalf("%s is not a SourceConnector", name)
		}
	}
}

func TestConfigDef(t *testing.T) {
	def := ConnectorConfig()
	for _, k := range def.Keys() {
		if k.Doc == "" || k.Group == "" {
			t.Errorf("key %s has no doc or group", k.Name)
		}
	}
	for name, want := range map[string]connect.ConfigType{
		AuthPasswordConfig: connect.ConfigPassword, AuthTokenConfig: connect.ConfigPassword, HeadersConfig: connect.ConfigList,
	} {
		if k := def.Key(name); k == nil || k.Type != want {
			t.Errorf("key %s: %+v", name, k)
		}
	}
	pc, err := def.Parse(map[string]string{URLConfig: "http://h/api", TopicConfig: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if pc.String(MethodConfig) != "GET" || pc.Int(PollIntervalConfig) != 10000 || pc.Int(RetriesConfig) != 5 ||
		pc.String(AuthTypeConfig) != "none" || pc.String(RecordsPointerConfig) != "" || pc.String(CursorIDFieldConfig) != "id" {
		t.Fatalf("defaults: %v %v %v", pc.String(MethodConfig), pc.Int(PollIntervalConfig), pc.Int(RetriesConfig))
	}
}

func TestConfigErrors(t *testing.T) {
	base := func(kv ...string) map[string]string {
		m := map[string]string{URLConfig: "https://api.example.com/api/orders", TopicConfig: "orders"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		props map[string]string
		key   string
		msg   string
	}{
		{map[string]string{TopicConfig: "t"}, URLConfig, `Missing required configuration "http.url" which has no default value.`},
		{base(URLConfig, "/api/orders"), URLConfig, "Invalid value /api/orders for configuration http.url: Must be an absolute http:// or https:// URL"},
		{base(TopicConfig, ""), TopicConfig, "String must be non-empty"},
		{base(MethodConfig, "PUT"), MethodConfig, "String must be one of (case insensitive): GET, POST"},
		{base(AuthTypeConfig, "oauth"), AuthTypeConfig, "String must be one of (case insensitive): none, basic, bearer"},
		{base(HeadersConfig, "X-A: 1, nocolon"), HeadersConfig, `Header "nocolon" is not of the form "Name: value"`},
		{base(RecordsPointerConfig, "data"), RecordsPointerConfig, `JSON Pointer "data" must be empty or start with /`},
		{base(RecordsPointerConfig, "/a~2"), RecordsPointerConfig, "invalid escape"},
		{base(CursorIDFieldConfig, ""), CursorIDFieldConfig, "String must be non-empty"},
		{base(RetriesConfig, "-2"), RetriesConfig, "Value must be at least -1"},
		{base(AuthTypeConfig, "basic"), AuthUserConfig, "http.auth.user is required when http.auth.type is basic"},
		{base(AuthTypeConfig, "bearer"), AuthTokenConfig, "http.auth.token is required when http.auth.type is bearer"},
		{base(PageParamConfig, "page", PageNextPointerConfig, "/next"), PageNextPointerConfig, "mutually exclusive"},
		{base(URLTemplateConfig, "/after/${last_id}"), URLTemplateConfig, "must give an absolute"},
		{base(BodyConfig, "{}"), BodyConfig, "only sent with http.method POST"},
		{base(BackoffConfig, "100", BackoffMaxConfig, "10"), BackoffMaxConfig, "at least http.retry.backoff.ms"},
	} {
		_, err := parseConfig(tc.props)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: error %v, want %q", tc.props, err, tc.msg)
			continue
		}
		if ce, ok := err.(*connect.ConfigError); !ok || ce.Name != tc.key {
			t.Errorf("%v: error %#v, want one for %s", tc.props, err, tc.key)
		}
		c := &Connector{}
		if err := c.Start(nil, tc.props); err == nil {
			t.Errorf("%v: Start accepted it", tc.props)
		}
	}
	// Validate reports the cross-key problems together, by key.
	got := (&Connector{}).Validate(base(AuthTypeConfig, "basic", PageParamConfig, "p", PageNextPointerConfig, "/n"))
	if len(got[AuthUserConfig]) != 1 || len(got[PageNextPointerConfig]) != 1 || len(got) != 2 {
		t.Fatalf("Validate = %v", got)
	}
	if got := (&Connector{}).Validate(base()); len(got) != 0 {
		t.Fatalf("Validate of a good config = %v", got)
	}
}

func TestConnectorTaskConfigs(t *testing.T) {
	props := map[string]string{URLConfig: "https://u:p@api.example.com/", TopicConfig: "t", "tasks.max": "4"}
	c := &Connector{}
	if err := c.Start(nil, props); err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(4)
	if err != nil || len(cfgs) != 1 || !reflect.DeepEqual(cfgs[0], props) {
		t.Fatalf("TaskConfigs = %v, %v", cfgs, err)
	}
	cfg, _ := parseConfig(props)
	if cfg.endpoint != "/" {
		t.Fatalf("endpoint of an URL without path = %q", cfg.endpoint)
	}
	if c.TaskClass() != TaskClass || c.Version() != Version || c.Stop() != nil {
		t.Fatal("TaskClass/Version/Stop")
	}
}

func TestPointer(t *testing.T) {
	doc, err := decodeJSON([]byte(`{"a":{"b/c":[10,{"~d":"x"}],"":1},"n":null}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ptr  string
		want any
		ok   bool
	}{
		{"", doc, true},
		{"/a/b~1c/0", json.Number("10"), true},
		{"/a/b~1c/1/~0d", "x", true},
		{"/a/", json.Number("1"), true},
		{"/n", nil, true},
		{"/a/b~1c/2", nil, false},
		{"/a/b~1c/01", nil, false},
		{"/a/b~1c/-", nil, false},
		{"/missing", nil, false},
		{"/n/x", nil, false},
	} {
		p, err := parsePointer(tc.ptr)
		if err != nil {
			t.Fatalf("%q: %v", tc.ptr, err)
		}
		if p.String() != tc.ptr {
			t.Errorf("%q prints as %q", tc.ptr, p.String())
		}
		got, ok := p.lookup(doc)
		if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, %v", tc.ptr, got, ok)
		}
	}
	if _, err := decodeJSON([]byte(`[1] [2]`)); err == nil {
		t.Error("trailing data accepted")
	}
}

func TestCompareIDs(t *testing.T) {
	for _, tc := range []struct {
		a, b any
		want int
	}{
		{int64(9), int64(10), -1},
		{"9", "10", -1},
		{int64(41), "40", 1},
		{"1.5", "10", -1},
		{"abc", "abd", -1},
		{"2026-07-10T14:30:00Z", "2026-07-10T14:31:00Z", -1},
		{int64(5), int64(5), 0},
		{"a", "a", 0},
	} {
		if got := compareIDs(tc.a, tc.b); got != tc.want {
			t.Errorf("compareIDs(%v, %v) = %d", tc.a, tc.b, got)
		}
		if got := compareIDs(tc.b, tc.a); got != -tc.want {
			t.Errorf("compareIDs(%v, %v) = %d", tc.b, tc.a, got)
		}
	}
}

func TestFillTemplate(t *testing.T) {
	got := fillTemplate("http://h/x/${last_id}/y?since=${timestamp}&id=${last_id}", "a b/c", "2026-07-10T14:30:00+02:00")
	if want := "http://h/x/a%20b%2Fc/y?since=2026-07-10T14%3A30%3A00%2B02%3A00&id=a+b%2Fc"; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	if d := retryAfter("7"); d.Seconds() != 7 {
		t.Fatal(d)
	}
	if d := retryAfter("Wed, 21 Oct 2015 07:28:00 GMT"); d != 0 {
		t.Fatal(d)
	}
	if d := retryAfter("soon"); d != 0 {
		t.Fatal(d)
	}
}

// The URL's own query parameters are kept beside the cursor's and the
// page's.
func TestBuildRequestKeepsQuery(t *testing.T) {
	props := map[string]string{
		URLConfig: "http://h/api/orders?limit=100&sort=id", TopicConfig: "t",
		CursorParamConfig: "since_id", CursorTimestampParamConf: "after", PageParamConfig: "p", PageStartConfig: "0",
	}
	task := NewTask()
	if err := task.Start(nil, props); err != nil {
		t.Fatal(err)
	}
	task.page = 0
	if got := task.buildRequest().url; got != "http://h/api/orders?limit=100&p=0&sort=id" {
		t.Fatalf("without a cursor: %s", got)
	}
	task.cycleCur = cursor{id: int64(5), ts: "2026-07-10T14:30:00Z"}
	if got := task.buildRequest().url; got != "http://h/api/orders?after=2026-07-10T14%3A30%3A00Z&limit=100&p=0&since_id=5&sort=id" {
		t.Fatalf("with a cursor: %s", got)
	}
}
