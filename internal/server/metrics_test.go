package server

import (
	"github.com/connectd/connectd/internal/servertest"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// scrape reads the worker's /metrics.
func scrape(t *testing.T, w *testWorker) string {
	t.Helper()
	resp, err := http.Get("http://" + w.s.RESTAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// metricValue is the value of the series of text whose name and labels
// line starts with series, "" when there is none.
func metricValue(text, series string) string {
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return m[1]
}

// A scrape after records flowed counts them as sent; a failed task shows
// status="failed"; the series Strimzi's Kafka Connect dashboard queries
// are there; OpenMetrics when asked.
func TestMetrics(t *testing.T) {
	dir := t.TempDir()
	w := startWorker(t, dir, map[string]string{
		"key.converter":   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter": "org.apache.kafka.connect.storage.StringConverter",
	})
	in := filepath.Join(dir, "in.txt")
	var lines []string
	for i := range 25 {
		lines = append(lines, "line "+string(rune('a'+i)))
	}
	servertest.WriteLines(t, in, lines...)
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "src", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "lines"}}))
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "snk", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": filepath.Join(dir, "out.txt"), "topics": "lines"}}))
	// A sink whose file cannot be created fails its task.
	w.must(201, "POST", "/connectors", jsonString(map[string]any{"name": "bad", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": filepath.Join(dir, "missing", "out.txt"), "topics": "lines"}}))
	eventually(t, "25 records written and put, and the bad task failed", func() bool {
		m := scrape(t, w)
		return metricValue(m, `kafka_connect_source_task_source_record_write_total{connector="src",task="0"}`) == "25" &&
			metricValue(m, `kafka_connect_sink_task_sink_record_send_total{connector="snk",task="0"}`) == "25" &&
			metricValue(m, `kafka_connect_connector_task_status{connector="bad",status="failed",task="0"}`) == "1"
	})
	m := scrape(t, w)
	for series, want := range map[string]string{
		`kafka_connect_source_task_source_record_poll_total{connector="src",task="0"}`:                                                       "25",
		`kafka_connect_sink_task_sink_record_read_total{connector="snk",task="0"}`:                                                           "25",
		`kafka_connect_connector_status{connector="src",status="running"}`:                                                                   "1",
		`kafka_connect_connector_connector_class{connector="src",connector_class="org.apache.kafka.connect.file.FileStreamSourceConnector"}`: "1",
		`kafka_connect_worker_connector_failed_task_count{connector="bad"}`:                                                                  "1",
		`kafka_connect_worker_connector_running_task_count{connector="src"}`:                                                                 "1",
		`kafka_connect_worker_connector_count`:                                                                                               "3",
		`kafka_connect_worker_task_count`:                                                                                                    "3",
		`kafka_connect_task_error_total_record_failures{connector="snk",task="0"}`:                                                           "0",
	} {
		if got := metricValue(m, series); got != want {
			t.Errorf("%s = %q, want %s", series, got, want)
		}
	}
	// What Strimzi's dashboard for Kafka Connect queries, each a series
	// (the rebalance gauge is a distributed worker's).
	for _, name := range []string{"kafka_connect_worker_connector_count", "kafka_connect_worker_task_count",
		"kafka_connect_worker_connector_running_task_count", "kafka_connect_worker_connector_paused_task_count",
		"kafka_connect_worker_connector_failed_task_count", "kafka_connect_worker_connector_unassigned_task_count",
		"kafka_connect_worker_connector_destroyed_task_count", "kafka_connect_connector_status",
		"kafka_connect_task_error_total_record_failures", "kafka_connect_coordinator_assigned_connectors",
		"kafka_connect_coordinator_assigned_tasks", "go_goroutines", "process_resident_memory_bytes"} {
		if !regexp.MustCompile(`(?m)^` + name + `[{ ]`).MatchString(m) {
			t.Errorf("no series %s", name)
		}
	}
	// The embedded broker's traffic: the 25 lines went in and out.
	for _, series := range []string{"connectd_embedded_broker_connections", "connectd_embedded_broker_connections_total",
		"connectd_embedded_broker_received_bytes_total", "connectd_embedded_broker_sent_bytes_total"} {
		v, err := strconv.ParseFloat(metricValue(m, series), 64)
		if err != nil || v < 1 || (strings.HasSuffix(series, "bytes_total") && v < float64(25*len("line a"))) {
			t.Errorf("%s = %q", series, metricValue(m, series))
		}
	}
	req, _ := http.NewRequest("GET", "http://"+w.s.RESTAddr+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text;version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") || !strings.HasSuffix(strings.TrimSpace(string(body)), "# EOF") {
		t.Errorf("OpenMetrics asked for, got %s", ct)
	}
}

// metrics.listeners serve GET /metrics alone, apart from the API.
func TestMetricsListener(t *testing.T) {
	w := startWorker(t, t.TempDir(), map[string]string{"metrics.listeners": "http://127.0.0.1:0"})
	if w.s.MetricsAddr == "" {
		t.Fatal("no metrics listener")
	}
	resp, err := http.Get("http://" + w.s.MetricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || metricValue(string(b), "kafka_connect_worker_connector_count") != "0" {
		t.Errorf("GET /metrics on the metrics listener: %d %.200s", resp.StatusCode, b)
	}
	resp, err = http.Get("http://" + w.s.MetricsAddr + "/connectors")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /connectors on the metrics listener: %d", resp.StatusCode)
	}
}
