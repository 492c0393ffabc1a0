package httpsource

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// Class names and version of the connector.
const (
	ConnectorClass = "io.connectd.connect.http.HttpSourceConnector"
	TaskClass      = "io.connectd.connect.http.HttpSourceTask"
	Version        = "1.0.0"
)

// Source partition and offset keys.
const (
	// EndpointField is the only key of the source partition: the URL path
	// of http.url, e.g. "/api/orders".
	EndpointField = "endpoint"
	// LastIDField holds the cursor id of the last record emitted: an int64
	// when the API's id is a JSON integer, otherwise a string.
	LastIDField = "last_id"
	// TimestampField holds that record's http.cursor.timestamp.field value,
	// as text exactly as the response had it; absent when there is none.
	TimestampField = "timestamp"
)

// Config keys.
const (
	URLConfig                = "http.url"
	URLTemplateConfig        = "http.url.template"
	MethodConfig             = "http.method"
	BodyConfig               = "http.body"
	HeadersConfig            = "http.headers"
	AuthTypeConfig           = "http.auth.type"
	AuthUserConfig           = "http.auth.user"
	AuthPasswordConfig       = "http.auth.password"
	AuthTokenConfig          = "http.auth.token"
	TimeoutConfig            = "http.timeout.ms"
	RetriesConfig            = "http.retries"
	BackoffConfig            = "http.retry.backoff.ms"
	BackoffMaxConfig         = "http.retry.backoff.max.ms"
	RecordsPointerConfig     = "http.records.pointer"
	CursorIDFieldConfig      = "http.cursor.id.field"
	CursorTimestampConfig    = "http.cursor.timestamp.field"
	CursorParamConfig        = "http.cursor.param"
	CursorTimestampParamConf = "http.cursor.timestamp.param"
	CursorInitialConfig      = "http.cursor.initial"
	PageParamConfig          = "http.page.param"
	PageStartConfig          = "http.page.start"
	PageNextPointerConfig    = "http.page.next.pointer"
	PollIntervalConfig       = "poll.interval.ms"
	TopicConfig              = "topic"
)

// Auth types.
const (
	AuthNone   = "none"
	AuthBasic  = "basic"
	AuthBearer = "bearer"
)

// Placeholders of http.url.template and http.body.
const (
	lastIDPlaceholder    = "${last_id}"
	timestampPlaceholder = "${timestamp}"
)

const (
	groupRequest = "Request"
	groupAuth    = "Authentication"
	groupCursor  = "Cursor"
	groupPaging  = "Paging"
	groupPolling = "Polling"
)

// ConnectorConfig returns the config definition shared by the connector
// and its task.
func ConnectorConfig() *connect.ConfigDef {
	order := map[string]int{}
	next := func(group string) int { order[group]++; return order[group] }
	return connect.NewConfigDef().
		Define(connect.ConfigKey{
			Name: URLConfig, Type: connect.ConfigString, Required: true, Validator: absoluteURL,
			Importance: connect.High, Group: groupRequest, OrderInGroup: next(groupRequest), Width: connect.WidthLong,
			DisplayName: "URL",
			Doc: "The http:// or https:// URL to poll, e.g. https://api.example.com/api/orders. Its path (here " +
				"/api/orders) names the source partition {\"endpoint\": <path>} under which the offset is stored. " +
				"Requests go to this URL unless http.url.template is set.",
		}).
		Define(connect.ConfigKey{
			Name: URLTemplateConfig, Type: connect.ConfigString, Default: "",
			Importance: connect.Medium, Group: groupRequest, OrderInGroup: next(groupRequest), Width: connect.WidthLong,
			DisplayName: "URL template",
			Doc: "Optional URL to request instead of http.url, in which ${last_id} and ${timestamp} are replaced by " +
				"the current cursor (escaped for the URL part they are in; empty when there is no cursor yet), e.g. " +
				"https://api.example.com/api/orders/after/${last_id}. The partition is still named after http.url.",
		}).
		Define(connect.ConfigKey{
			Name: MethodConfig, Type: connect.ConfigString, Default: "GET", Validator: connect.OneOfIgnoreCase("GET", "POST"),
			Importance: connect.Low, Group: groupRequest, OrderInGroup: next(groupRequest), Width: connect.WidthShort,
			DisplayName: "HTTP method", Recommended: []string{"GET", "POST"},
			Doc: "The HTTP method of the requests: GET or POST.",
		}).
		Define(connect.ConfigKey{
			Name: BodyConfig, Type: connect.ConfigString, Default: "",
			Importance: connect.Low, Group: groupRequest, OrderInGroup: next(groupRequest), Width: connect.WidthLong,
			DisplayName: "Request body",
			Doc: "The body sent with POST requests, with ${last_id} and ${timestamp} replaced by the cursor " +
				"(verbatim, not escaped). Sent as application/json unless http.headers sets a Content-Type.",
		}).
		Define(connect.ConfigKey{
			Name: HeadersConfig, Type: connect.ConfigList, Default: "", Validator: headerList,
			Importance: connect.Medium, Group: groupRequest, OrderInGroup: next(groupRequest), Width: connect.WidthLong,
			DisplayName: "Headers",
			Doc: "Extra request headers, a comma-separated list of \"Name: value\" (values therefore cannot " +
				"contain commas), e.g. \"Accept: application/json, X-Tenant: acme\".",
		}).
		Define(connect.ConfigKey{
			Name: TimeoutConfig, Type: connect.ConfigInt, Default: int32(30000), Validator: connect.AtLeast(1),
			Importance: connect.Low, Group: groupRequest, OrderInGroup: next(groupRequest), Width: connect.WidthShort,
			DisplayName: "Request timeout (ms)",
			Doc: "How long one request may take, reading the whole response included, before it is abandoned " +
				"and retried.",
		}).
		Define(connect.ConfigKey{
			Name: RetriesConfig, Type: connect.ConfigInt, Default: int32(5), Validator: connect.AtLeast(-1),
			Importance: connect.Medium, Group: groupRequest, OrderInGroup: next(groupRequest), Width: connect.WidthShort,
			DisplayName: "Retries",
			Doc: "How many times a request is retried after a 5xx or 429 status, a timeout or a connection error " +
				"before the task fails; -1 retries forever. Other statuses (4xx) fail the task at once.",
		}).
		Define(connect.ConfigKey{
			Name: BackoffConfig, Type: connect.ConfigInt, Default: int32(500), Validator: connect.AtLeast(0),
			Importance: connect.Low, Group: groupRequest, OrderInGroup: next(groupRequest), Width: connect.WidthShort,
			DisplayName: "Retry backoff (ms)",
			Doc: "The wait before the first retry; it doubles with each further retry of the same request, up to " +
				"http.retry.backoff.max.ms. A Retry-After header (seconds or HTTP date) replaces it, capped the same way.",
		}).
		Define(connect.ConfigKey{
			Name: BackoffMaxConfig, Type: connect.ConfigInt, Default: int32(30000), Validator: connect.AtLeast(0),
			Importance: connect.Low, Group: groupRequest, OrderInGroup: next(groupRequest), Width: connect.WidthShort,
			DisplayName: "Maximum retry backoff (ms)",
			Doc:         "The longest wait between two attempts of a request.",
		}).
		Define(connect.ConfigKey{
			Name: AuthTypeConfig, Type: connect.ConfigString, Default: AuthNone,
			Validator:  connect.OneOfIgnoreCase(AuthNone, AuthBasic, AuthBearer),
			Importance: connect.High, Group: groupAuth, OrderInGroup: next(groupAuth), Width: connect.WidthShort,
			DisplayName: "Authentication type", Recommended: []string{AuthNone, AuthBasic, AuthBearer},
			Dependents: []string{AuthUserConfig, AuthPasswordConfig, AuthTokenConfig},
			Doc: "none; basic (HTTP Basic with http.auth.user and http.auth.password); or bearer " +
				"(\"Authorization: Bearer <http.auth.token>\").",
		}).
		Define(connect.ConfigKey{
			Name: AuthUserConfig, Type: connect.ConfigString, Default: "",
			Importance: connect.High, Group: groupAuth, OrderInGroup: next(groupAuth), Width: connect.WidthMedium,
			DisplayName: "User", Doc: "The user name for basic authentication.",
		}).
		Define(connect.ConfigKey{
			Name: AuthPasswordConfig, Type: connect.ConfigPassword, Default: nil,
			Importance: connect.High, Group: groupAuth, OrderInGroup: next(groupAuth), Width: connect.WidthMedium,
			DisplayName: "Password", Doc: "The password for basic authentication.",
		}).
		Define(connect.ConfigKey{
			Name: AuthTokenConfig, Type: connect.ConfigPassword, Default: nil,
			Importance: connect.High, Group: groupAuth, OrderInGroup: next(groupAuth), Width: connect.WidthMedium,
			DisplayName: "Bearer token", Doc: "The token for bearer authentication.",
		}).
		Define(connect.ConfigKey{
			Name: RecordsPointerConfig, Type: connect.ConfigString, Default: "", Validator: jsonPointer,
			Importance: connect.High, Group: groupCursor, OrderInGroup: next(groupCursor), Width: connect.WidthMedium,
			DisplayName: "Records pointer",
			Doc: "A JSON Pointer (RFC 6901) to the array of records in each response, e.g. /data/items; empty " +
				"means the response body itself is the array. A missing or null target is an empty page.",
		}).
		Define(connect.ConfigKey{
			Name: CursorIDFieldConfig, Type: connect.ConfigString, Default: "id", Validator: fieldRef,
			Importance: connect.High, Group: groupCursor, OrderInGroup: next(groupCursor), Width: connect.WidthMedium,
			DisplayName: "Cursor id field",
			Doc: "The field of each record that orders records and becomes the offset's last_id and the record " +
				"key: a top-level field name, or a JSON Pointer into the record when it starts with \"/\". Its " +
				"values must increase: records at or before the stored cursor are dropped.",
		}).
		Define(connect.ConfigKey{
			Name: CursorTimestampConfig, Type: connect.ConfigString, Default: "", Validator: fieldRefOrEmpty,
			Importance: connect.Medium, Group: groupCursor, OrderInGroup: next(groupCursor), Width: connect.WidthMedium,
			DisplayName: "Cursor timestamp field",
			Doc: "Optional field (name or JSON Pointer) whose value is stored, as text, as the offset's timestamp " +
				"and can be sent back through ${timestamp} or http.cursor.timestamp.param. It does not order records.",
		}).
		Define(connect.ConfigKey{
			Name: CursorParamConfig, Type: connect.ConfigString, Default: "",
			Importance: connect.High, Group: groupCursor, OrderInGroup: next(groupCursor), Width: connect.WidthMedium,
			DisplayName: "Cursor query parameter",
			Doc: "The query parameter that carries last_id on each request, e.g. since_id; left out while there " +
				"is no cursor. Without http.page.param or http.page.next.pointer, the source also pages with it: " +
				"after a page with new records it asks again at once with the new cursor.",
		}).
		Define(connect.ConfigKey{
			Name: CursorTimestampParamConf, Type: connect.ConfigString, Default: "",
			Importance: connect.Low, Group: groupCursor, OrderInGroup: next(groupCursor), Width: connect.WidthMedium,
			DisplayName: "Cursor timestamp query parameter",
			Doc:         "The query parameter that carries the offset's timestamp, e.g. updated_since; left out while there is none.",
		}).
		Define(connect.ConfigKey{
			Name: CursorInitialConfig, Type: connect.ConfigString, Default: "",
			Importance: connect.Low, Group: groupCursor, OrderInGroup: next(groupCursor), Width: connect.WidthMedium,
			DisplayName: "Initial cursor",
			Doc: "The last_id to start after when no offset is stored (an integer text is a numeric id); empty " +
				"starts with no cursor and emits every record.",
		}).
		Define(connect.ConfigKey{
			Name: PageParamConfig, Type: connect.ConfigString, Default: "",
			Importance: connect.Medium, Group: groupPaging, OrderInGroup: next(groupPaging), Width: connect.WidthMedium,
			DisplayName: "Page query parameter",
			Doc: "The query parameter of the page number, e.g. page. Each poll requests pages from " +
				"http.page.start on, with the cursor of the poll's start, until a page holds no record.",
		}).
		Define(connect.ConfigKey{
			Name: PageStartConfig, Type: connect.ConfigInt, Default: int32(1),
			Importance: connect.Low, Group: groupPaging, OrderInGroup: next(groupPaging), Width: connect.WidthShort,
			DisplayName: "First page", Doc: "The number of the first page.",
		}).
		Define(connect.ConfigKey{
			Name: PageNextPointerConfig, Type: connect.ConfigString, Default: "", Validator: jsonPointer,
			Importance: connect.Medium, Group: groupPaging, OrderInGroup: next(groupPaging), Width: connect.WidthMedium,
			DisplayName: "Next page pointer",
			Doc: "A JSON Pointer to the URL of the next page in each response (absolute, or relative to the " +
				"request), e.g. /links/next; paging stops when it is missing, null or empty. Excludes http.page.param.",
		}).
		Define(connect.ConfigKey{
			Name: PollIntervalConfig, Type: connect.ConfigInt, Default: int32(10000), Validator: connect.AtLeast(0),
			Importance: connect.High, Group: groupPolling, OrderInGroup: next(groupPolling), Width: connect.WidthShort,
			DisplayName: "Poll interval (ms)",
			Doc:         "The wait between the end of one poll (its last page) and the start of the next.",
		}).
		Define(connect.ConfigKey{
			Name: TopicConfig, Type: connect.ConfigString, Required: true, Validator: connect.NonEmptyString(),
			Importance: connect.High, Group: groupPolling, OrderInGroup: next(groupPolling), Width: connect.WidthMedium,
			DisplayName: "Topic", Doc: "The topic to write the records to.",
		})
}

func absoluteURL(v any) error {
	s, _ := v.(string)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("Must be an absolute http:// or https:// URL")
	}
	return nil
}

func headerList(v any) error {
	for _, h := range asList(v) {
		if _, _, err := parseHeader(h); err != nil {
			return err
		}
	}
	return nil
}

func asList(v any) []string { l, _ := v.([]string); return l }

func parseHeader(h string) (name, value string, err error) {
	name, value, ok := strings.Cut(h, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
		return "", "", fmt.Errorf("Header %q is not of the form \"Name: value\"", h)
	}
	return name, value, nil
}

func jsonPointer(v any) error {
	s, _ := v.(string)
	_, err := parsePointer(s)
	return err
}

func fieldRef(v any) error {
	s, _ := v.(string)
	if s == "" {
		return errors.New("String must be non-empty")
	}
	return fieldRefOrEmpty(v)
}

func fieldRefOrEmpty(v any) error {
	s, _ := v.(string)
	if strings.HasPrefix(s, "/") {
		return jsonPointer(v)
	}
	return nil
}

// config is a parsed task config.
type config struct {
	url          *url.URL
	urlTemplate  string
	endpoint     string
	method       string
	body         string
	headers      [][2]string
	authType     string
	user         string
	password     string
	token        string
	timeout      time.Duration
	retries      int
	backoff      time.Duration
	backoffMax   time.Duration
	records      pointer
	idField      pointer
	tsField      pointer // nil when unset
	cursorParam  string
	tsParam      string
	initial      string
	pageParam    string
	pageStart    int
	nextPointer  pointer // nil when unset
	pollInterval time.Duration
	topic        string
}

// parseConfig parses and cross-checks a connector or task config.
func parseConfig(props map[string]string) (*config, error) {
	c, err := buildConfig(props)
	if err != nil {
		return nil, err
	}
	if errs := c.check(); len(errs) > 0 {
		for _, k := range ConnectorConfig().Keys() {
			if msgs := errs[k.Name]; len(msgs) > 0 {
				return nil, &connect.ConfigError{Name: k.Name, Message: msgs[0]}
			}
		}
	}
	return c, nil
}

// buildConfig parses a config without the checks across keys.
func buildConfig(props map[string]string) (*config, error) {
	pc, err := ConnectorConfig().Parse(props)
	if err != nil {
		return nil, err
	}
	c := &config{
		urlTemplate:  pc.String(URLTemplateConfig),
		method:       strings.ToUpper(pc.String(MethodConfig)),
		body:         pc.String(BodyConfig),
		authType:     strings.ToLower(pc.String(AuthTypeConfig)),
		user:         pc.String(AuthUserConfig),
		password:     pc.String(AuthPasswordConfig),
		token:        pc.String(AuthTokenConfig),
		timeout:      ms(pc.Int(TimeoutConfig)),
		retries:      pc.Int(RetriesConfig),
		backoff:      ms(pc.Int(BackoffConfig)),
		backoffMax:   ms(pc.Int(BackoffMaxConfig)),
		cursorParam:  pc.String(CursorParamConfig),
		tsParam:      pc.String(CursorTimestampParamConf),
		initial:      pc.String(CursorInitialConfig),
		pageParam:    pc.String(PageParamConfig),
		pageStart:    pc.Int(PageStartConfig),
		pollInterval: ms(pc.Int(PollIntervalConfig)),
		topic:        pc.String(TopicConfig),
	}
	c.url, _ = url.Parse(pc.String(URLConfig))
	c.endpoint = c.url.Path
	if c.endpoint == "" {
		c.endpoint = "/"
	}
	for _, h := range pc.List(HeadersConfig) {
		name, value, _ := parseHeader(h)
		c.headers = append(c.headers, [2]string{name, value})
	}
	c.records, _ = parsePointer(pc.String(RecordsPointerConfig))
	c.idField = fieldPointer(pc.String(CursorIDFieldConfig))
	if f := pc.String(CursorTimestampConfig); f != "" {
		c.tsField = fieldPointer(f)
	}
	if p := pc.String(PageNextPointerConfig); p != "" {
		c.nextPointer, _ = parsePointer(p)
	}
	return c, nil
}

// check returns the problems that span several keys, by key.
func (c *config) check() map[string][]string {
	errs := map[string][]string{}
	add := func(key, msg string) { errs[key] = append(errs[key], msg) }
	switch c.authType {
	case AuthBasic:
		if c.user == "" {
			add(AuthUserConfig, "http.auth.user is required when http.auth.type is basic")
		}
	case AuthBearer:
		if c.token == "" {
			add(AuthTokenConfig, "http.auth.token is required when http.auth.type is bearer")
		}
	}
	if c.pageParam != "" && c.nextPointer != nil {
		add(PageNextPointerConfig, "http.page.param and http.page.next.pointer are mutually exclusive")
	}
	if c.backoffMax < c.backoff {
		add(BackoffMaxConfig, "http.retry.backoff.max.ms must be at least http.retry.backoff.ms")
	}
	if c.urlTemplate != "" {
		if err := absoluteURL(fillTemplate(c.urlTemplate, "1", "2026-01-01T00:00:00Z")); err != nil {
			add(URLTemplateConfig, "http.url.template must give an absolute http:// or https:// URL")
		}
	}
	if c.body != "" && c.method != "POST" {
		add(BodyConfig, "http.body is only sent with http.method POST")
	}
	return errs
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
