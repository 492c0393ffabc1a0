package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/builtin"
)

// rawExchange sends head (request line and headers, without the blank
// line) and whatever send writes of the body, over a TCP connection of
// its own, and returns the response's status, body and whether the
// server closes the connection after it. The deadline only keeps a server
// that never answers from hanging the test.
func rawExchange(t *testing.T, addr, head string, send func(io.Writer)) (int, string, bool) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, head+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if send != nil {
		send(conn)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Close
}

// guardedWorker is a worker with small REST limits, so that the tests
// reach them quickly.
func guardedWorker(t *testing.T, plugins ...connect.Plugin) *testWorker {
	return startWorker(t, t.TempDir(), map[string]string{
		"rest.request.max.bytes":       "1024",
		"rest.request.body.timeout.ms": "300",
	}, plugins...)
}

func (w *testWorker) mustHaveNoConnectors() {
	w.t.Helper()
	if body := w.must(200, "GET", "/connectors", ""); body != "[]" {
		w.t.Fatalf("connectors: %s", body)
	}
}

// A body over rest.request.max.bytes is answered 413, in Kafka Connect's
// error shape, long before the client has sent it: a declared length is
// refused before a byte of the body is read, a chunked body once the
// limit is passed.
func TestRESTRefusesOversizedBodies(t *testing.T) {
	w := guardedWorker(t)
	const want = `{"error_code":413,"message":"Request body is larger than 1024 bytes (rest.request.max.bytes)"}`
	head := "POST /connectors HTTP/1.1\r\nHost: " + w.s.RESTAddr + "\r\nContent-Type: application/json\r\n"
	t.Run("declared", func(t *testing.T) {
		code, body, closed := rawExchange(t, w.s.RESTAddr, head+"Content-Length: 1073741824", func(c io.Writer) {
			io.WriteString(c, `{"name":"big","config":{"connector.class":"FileStreamSink","topics":"t","file":"`)
		})
		if code != 413 || body != want || !closed {
			t.Fatalf("got %d %s (connection closed: %t)", code, body, closed)
		}
	})
	t.Run("chunked", func(t *testing.T) {
		code, body, _ := rawExchange(t, w.s.RESTAddr, head+"Transfer-Encoding: chunked", func(c io.Writer) {
			// 2 kB of a body that never ends; the server must answer
			// without waiting for the rest.
			for range 4 {
				io.WriteString(c, "200\r\n"+strings.Repeat(" ", 0x200)+"\r\n")
			}
		})
		if code != 413 || body != want {
			t.Fatalf("got %d %s", code, body)
		}
	})
	w.mustHaveNoConnectors()
}

// A body sent too slowly is cut after rest.request.body.timeout.ms.
func TestRESTCutsSlowBodies(t *testing.T) {
	w := guardedWorker(t)
	head := "POST /connectors HTTP/1.1\r\nHost: " + w.s.RESTAddr + "\r\nContent-Type: application/json\r\nContent-Length: 100"
	code, body, _ := rawExchange(t, w.s.RESTAddr, head, func(c io.Writer) { io.WriteString(c, "{") })
	if want := `{"error_code":408,"message":"Request body not received within 300 ms (rest.request.body.timeout.ms)"}`; code != 408 || body != want {
		t.Fatalf("got %d %s", code, body)
	}
	w.mustHaveNoConnectors()
}

const slowStopSinkClass = "test.SlowStopSink"

var slowStopSink = testSink(slowStopSinkClass, func() connect.SinkTask { return slowStopSinkTask{} })

// slowStopSinkTask takes a second to stop, longer than the guarded
// worker's body timeout.
type slowStopSinkTask struct{}

func (slowStopSinkTask) Version() string                                        { return "test" }
func (slowStopSinkTask) Start(connect.SinkTaskContext, map[string]string) error { return nil }
func (slowStopSinkTask) Open([]connect.TopicPartition) error                    { return nil }
func (slowStopSinkTask) Put([]connect.SinkRecord) error                         { return nil }
func (slowStopSinkTask) Flush(map[connect.TopicPartition]int64) error           { return nil }
func (slowStopSinkTask) Close([]connect.TopicPartition) error                   { return nil }
func (slowStopSinkTask) Stop() error                                            { time.Sleep(time.Second); return nil }

// The body timeout bounds reading the body only: an answer that takes
// longer (a stop waits for its tasks) is not cut by it.
func TestRESTSlowAnswerOutlivesBodyTimeout(t *testing.T) {
	w := guardedWorker(t, slowStopSink)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{
		"name": "slow", "config": map[string]string{"connector.class": slowStopSinkClass, "topics": "slow"},
	}))
	eventually(t, "the task running", func() bool { return w.state("slow") == "RUNNING/RUNNING" })
	w.must(204, "PUT", "/connectors/slow/stop", "")
	if got := w.state("slow"); got != "STOPPED" {
		t.Fatalf("state %s", got)
	}
}

// A POST whose body is not JSON is refused as Jersey refuses it for
// Kafka Connect, and creates nothing: a web page can send a text/plain or
// an untyped POST to another origin without asking first. A POST with no
// body needs no type; PUT keeps taking curl -d's form type.
func TestRESTRefusesNonJSONPost(t *testing.T) {
	w := guardedWorker(t)
	sink := func(name string) string {
		return jsonString(map[string]any{"name": name, "config": map[string]string{
			"connector.class": "FileStreamSink", "topics": "t", "file": filepath.Join(w.dir, name+".txt")}})
	}
	const want = `{"error_code":415,"message":"HTTP 415 Unsupported Media Type"}`
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
		body := sink("evil")
		head := "POST /connectors HTTP/1.1\r\nHost: " + w.s.RESTAddr + "\r\nContent-Length: " + strconv.Itoa(len(body))
		if ct != "" {
			head += "\r\nContent-Type: " + ct
		}
		code, got, _ := rawExchange(t, w.s.RESTAddr, head, func(c io.Writer) { io.WriteString(c, body) })
		if code != 415 || got != want {
			t.Errorf("Content-Type %q: got %d %s", ct, code, got)
		}
	}
	w.mustHaveNoConnectors()

	// The reference chapter's curl -X PUT .../config -d '...'.
	req, _ := http.NewRequest("PUT", "http://"+w.s.RESTAddr+"/connectors/orders-sink/config",
		strings.NewReader(`{"connector.class":"FileStreamSink","topics":"t","file":"`+filepath.Join(w.dir, "out.txt")+`"}`))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("form-encoded PUT: %d", resp.StatusCode)
	}
	// A restart carries no body and no type.
	code, got, _ := rawExchange(t, w.s.RESTAddr, "POST /connectors/orders-sink/restart HTTP/1.1\r\nHost: "+w.s.RESTAddr, nil)
	if code != 204 {
		t.Fatalf("restart: %d %s", code, got)
	}
}

// A request from another origin is refused, whatever it asks; one from
// the worker's own origin is served.
func TestRESTRefusesCrossOrigin(t *testing.T) {
	w := guardedWorker(t)
	create := jsonString(map[string]any{"name": "x", "config": map[string]string{
		"connector.class": "FileStreamSink", "topics": "t", "file": filepath.Join(w.dir, "x.txt")}})
	send := func(method, path, origin, body string) (int, string) {
		req, _ := http.NewRequest(method, "http://"+w.s.RESTAddr+path, strings.NewReader(body))
		req.Header.Set("Origin", origin)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, origin := range []string{"http://evil.example", "null", "https://" + w.s.RESTAddr} {
		code, body := send("POST", "/connectors", origin, create)
		want := `{"error_code":403,"message":"Cross-origin request refused: origin ` + origin + ` is not this worker's (http://` + w.s.RESTAddr + `), and access.control.allow.origin does not allow it"}`
		if code != 403 || body != want {
			t.Errorf("Origin %s: got %d %s", origin, code, body)
		}
	}
	w.mustHaveNoConnectors()
	if code, body := send("POST", "/connectors", "http://"+w.s.RESTAddr, create); code != 201 {
		t.Fatalf("same origin: %d %s", code, body)
	}
	if code, _ := send("POST", "/connectors/x/restart", "http://evil.example", ""); code != 403 {
		t.Fatalf("cross-origin restart: %d", code)
	}
	if code, _ := send("DELETE", "/connectors/x", "http://evil.example", ""); code != 403 {
		t.Fatalf("cross-origin delete: %d", code)
	}
	w.must(200, "GET", "/connectors/x", "")
}

// A listener serves at most its limit of connections at a time; the next
// one is accepted once one closes.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := limitListener(inner, 1)
	accepted := make(chan net.Conn)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial()
	first := <-accepted
	dial()
	// A window in which an unlimited listener would take the second
	// connection; a limited one never does, however long it is.
	select {
	case <-accepted:
		t.Fatal("a second connection was accepted while the first was open")
	case <-time.After(200 * time.Millisecond):
	}
	first.Close()
	second := <-accepted
	second.Close()
	// Closing the listener ends an Accept waiting for a free slot.
	dial()
	<-accepted
	ln.Close()
	if _, open := <-accepted; open {
		t.Fatal("accepted after Close")
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
}

// A worker asked for a REST protection connectd does not give does not
// start, and says which key asked for it.
func TestWorkerRefusesUnprovidedProtections(t *testing.T) {
	dir := t.TempDir()
	props := map[string]string{
		"listeners":                    "http://127.0.0.1:0",
		"embedded.kafka.listeners":     "127.0.0.1:0",
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
		"rest.extension.classes":       "com.example.AuditExtension",
	}
	s, err := StartStandalone(context.Background(), props, nil, builtin.Plugins(), testLoggers(t))
	if err == nil {
		s.Close()
		t.Fatal("the standalone worker started")
	}
	if want := "Invalid value com.example.AuditExtension for configuration rest.extension.classes"; !strings.Contains(err.Error(), want) {
		t.Fatalf("standalone: %v", err)
	}
	delete(props, "rest.extension.classes")
	for k, v := range map[string]string{
		"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"inter.worker.signature.algorithm": "HmacSHA512",
	} {
		props[k] = v
	}
	d, err := StartDistributed(context.Background(), props, builtin.Plugins(), testLoggers(t))
	if err == nil {
		d.Close()
		t.Fatal("the distributed worker started")
	}
	if !strings.Contains(err.Error(), "inter.worker.signature.algorithm") {
		t.Fatalf("distributed: %v", err)
	}
}

const blockingValidateSinkClass = "test.BlockingValidateSink"

// validateGate holds every validation of a blockingValidateSink until it
// is closed.
var validateGate struct {
	sync.Mutex
	ch chan struct{}
}

var blockingValidateSinkPlugin = connect.Plugin{Class: blockingValidateSinkClass, Type: connect.PluginSink, Version: "test",
	New: func() any { return &blockingValidateSink{testSinkConnector{class: blockingValidateSinkClass}} }}

type blockingValidateSink struct{ testSinkConnector }

func (*blockingValidateSink) Validate(map[string]string) map[string][]string {
	validateGate.Lock()
	ch := validateGate.ch
	validateGate.Unlock()
	<-ch
	return nil
}

// Endpoints hold at most four of the largest bodies at once: a request
// with a body waits for room, and is answered 503 if none is made before
// its body time is out, rather than take more of the worker's memory.
func TestRESTBodiesWaitForRoom(t *testing.T) {
	gate := make(chan struct{})
	validateGate.Lock()
	validateGate.ch = gate
	validateGate.Unlock()
	w := guardedWorker(t, blockingValidateSinkPlugin)
	prefix := `{"connector.class":"` + blockingValidateSinkClass + `","topics":"t","pad":"`
	body := prefix + strings.Repeat("x", 1000-len(prefix)-2) + `"}`
	type result struct {
		code int
		body string
	}
	results := make(chan result, 5)
	for range 5 {
		go func() {
			req, _ := http.NewRequest("PUT", "http://"+w.s.RESTAddr+"/connector-plugins/"+blockingValidateSinkClass+"/config/validate", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results <- result{0, err.Error()}
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			results <- result{resp.StatusCode, string(b)}
		}()
	}
	// Four bodies of 1000 bytes fill the room (4 × 1024 bytes); the
	// validations holding them wait at the gate until the fifth is
	// answered.
	var first result
	select {
	case first = <-results:
	case <-time.After(30 * time.Second):
		t.Fatal("no request answered while four were held")
	}
	close(gate)
	if want := `{"error_code":503,"message":"The worker is busy reading other request bodies (4096 bytes at most at once); try again"}`; first.code != 503 || first.body != want {
		t.Fatalf("first answer %d %s", first.code, first.body)
	}
	for range 4 {
		if r := <-results; r.code != 200 {
			t.Errorf("held request: %d %s", r.code, r.body)
		}
	}
}
