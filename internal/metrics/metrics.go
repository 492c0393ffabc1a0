// Package metrics serves a worker's metrics in Prometheus's formats, named
// as Strimzi's JMX exporter rules name Kafka Connect's JMX metrics
// (kafka_connect_<group without -metrics>_<attribute>, dashes to
// underscores; string attributes as a 1 with the value in a label), so
// that Strimzi's Grafana dashboard and alerts for Kafka Connect work on
// connectd unchanged.
//
// Nothing is counted here: tasks count into their worker.TaskMetrics as
// they work, and a scrape reads those counters and the herder's statuses.
// Like a Kafka Connect worker, each worker shows only the connectors and
// tasks it runs.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/connectd/connectd/client"
	"github.com/connectd/connectd/internal/embedded"
	"github.com/connectd/connectd/internal/group"
	"github.com/connectd/connectd/internal/worker"
)

// Herder is what the metrics read of the worker's herder.
type Herder interface {
	Connectors(ctx context.Context) ([]string, error)
	ConnectorInfo(ctx context.Context, name string) (*client.ConnectorInfo, error)
	ConnectorStatus(ctx context.Context, name string) (*client.ConnectorStatus, error)
}

// Source is the worker whose metrics are shown.
type Source struct {
	Herder Herder
	Worker *worker.Worker
	// WorkerID is the worker's id in statuses; "" shows every connector
	// (a standalone worker runs them all).
	WorkerID string
	// Rebalancing reports whether a distributed worker's group is
	// rebalancing, and Rebalances its rebalances so far; nil for a
	// standalone worker.
	Rebalancing func() bool
	Rebalances  func() group.RebalanceStats
	// Broker gives the embedded broker's counters; nil with an outside
	// Kafka.
	Broker func() embedded.Stats
}

// Handler serves GET /metrics: Prometheus's text format, or OpenMetrics
// when the scraper asks for it.
func Handler(src Source) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collector{src: src, rates: newRates()},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true, ErrorHandling: promhttp.ContinueOnError})
}

// scrapeTimeout bounds the herder calls of one scrape.
const scrapeTimeout = 10 * time.Second

type collector struct {
	src   Source
	rates *rates
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

var (
	connectorCount = desc("kafka_connect_worker_connector_count", "The number of connectors run in this worker.")
	taskCount      = desc("kafka_connect_worker_task_count", "The number of tasks run in this worker.")
	startups       = map[string]*prometheus.Desc{}
	perConnector   = map[string]*prometheus.Desc{}

	connectorStatus  = desc("kafka_connect_connector_status", "The status of the connector: 1, with the status in a label.", "connector", "status")
	connectorClass   = desc("kafka_connect_connector_connector_class", "The name of the connector class: 1, with the class in a label.", "connector", "connector_class")
	connectorType    = desc("kafka_connect_connector_connector_type", "The type of the connector: 1, with source or sink in a label.", "connector", "connector_type")
	connectorVersion = desc("kafka_connect_connector_connector_version", "The version of the connector class: 1, with the version in a label.", "connector", "connector_version")
	taskStatus       = desc("kafka_connect_connector_task_status", "The status of the connector task: 1, with the status in a label.", "connector", "task", "status")
	assignedConns    = desc("kafka_connect_coordinator_assigned_connectors", "The number of connector instances currently assigned to this worker.")
	assignedTasks    = desc("kafka_connect_coordinator_assigned_tasks", "The number of tasks currently assigned to this worker.")
	rebalancing      = desc("kafka_connect_worker_rebalance_rebalancing", "Whether this worker is currently rebalancing.")
	rebalancesTotal  = desc("kafka_connect_worker_rebalance_completed_rebalances_total", "The total number of rebalances completed by this worker.")
	rebalanceEpoch   = desc("kafka_connect_worker_rebalance_epoch", "The epoch or generation number of this worker.")
	rebalanceMax     = desc("kafka_connect_worker_rebalance_rebalance_max_time_ms", "The maximum time in milliseconds spent by this worker to rebalance.")
	rebalanceAvg     = desc("kafka_connect_worker_rebalance_rebalance_avg_time_ms", "The average time in milliseconds spent by this worker to rebalance.")
	rebalanceSince   = desc("kafka_connect_worker_rebalance_time_since_last_rebalance_ms", "The time in milliseconds since this worker completed the most recent rebalance.")

	// The embedded broker's, connectd's own names: Kafka's broker
	// metrics count other things (BytesInPerSec counts produced records
	// only), so borrowing them would mislead a dashboard.
	brokerConnections      = desc("connectd_embedded_broker_connections", "The connections open to the embedded broker, over TCP and in process.")
	brokerConnectionsTotal = desc("connectd_embedded_broker_connections_total", "The connections the embedded broker accepted since it started.")
	brokerReceived         = desc("connectd_embedded_broker_received_bytes_total", "The bytes of requests the embedded broker received.")
	brokerSent             = desc("connectd_embedded_broker_sent_bytes_total", "The bytes of responses the embedded broker sent.")
)

func init() {
	for _, kind := range []string{"connector", "task"} {
		for _, what := range []string{"attempts", "success", "failure"} {
			name := kind + "_startup_" + what + "_total"
			startups[name] = desc("kafka_connect_worker_"+name, "The total number of "+kind+" starts ("+what+").")
		}
	}
	for _, state := range []string{"total", "running", "paused", "failed", "unassigned", "destroyed", "restarting"} {
		name := "connector_" + state + "_task_count"
		perConnector[state] = desc("kafka_connect_worker_"+name, "The number of "+state+" tasks of the connector on the worker.", "connector")
	}
}

// taskCounter is one of a task's counters, with its rate beside it.
type taskCounter struct {
	total, rate *prometheus.Desc // rate nil: none
	value       func(m *worker.TaskMetrics) int64
}

func counter(group, attr, help string, value func(m *worker.TaskMetrics) int64, withRate bool) taskCounter {
	c := taskCounter{total: desc("kafka_connect_"+group+"_"+attr+"_total", help, "connector", "task"), value: value}
	if withRate {
		c.rate = desc("kafka_connect_"+group+"_"+attr+"_rate", help+" per second, over the last minute.", "connector", "task")
	}
	return c
}

var (
	sourceCounters = []taskCounter{
		counter("source_task", "source_record_poll", "The records produced or polled by the task, before transforms.", func(m *worker.TaskMetrics) int64 { return m.Polled.Load() }, true),
		counter("source_task", "source_record_write", "The records output from the transformations and written to Kafka.", func(m *worker.TaskMetrics) int64 { return m.Written.Load() }, true),
	}
	sinkCounters = []taskCounter{
		counter("sink_task", "sink_record_read", "The records read from Kafka by the task, before transforms.", func(m *worker.TaskMetrics) int64 { return m.Read.Load() }, true),
		counter("sink_task", "sink_record_send", "The records output from the transformations and sent to the task.", func(m *worker.TaskMetrics) int64 { return m.Sent.Load() }, true),
		counter("sink_task", "offset_commit_completion", "The offset commits that completed.", func(m *worker.TaskMetrics) int64 { return m.CommitsSucceeded.Load() }, true),
	}
	errorCounters = []taskCounter{
		{total: desc("kafka_connect_task_error_total_record_failures", "The record processing failures in the task.", "connector", "task"), value: func(m *worker.TaskMetrics) int64 { return m.RecordFailures.Load() }},
		{total: desc("kafka_connect_task_error_total_record_errors", "The record processing errors in the task.", "connector", "task"), value: func(m *worker.TaskMetrics) int64 { return m.RecordErrors.Load() }},
		{total: desc("kafka_connect_task_error_total_records_skipped", "The records skipped due to errors.", "connector", "task"), value: func(m *worker.TaskMetrics) int64 { return m.RecordsSkipped.Load() }},
		{total: desc("kafka_connect_task_error_total_errors_logged", "The errors that were logged.", "connector", "task"), value: func(m *worker.TaskMetrics) int64 { return m.ErrorsLogged.Load() }},
		{total: desc("kafka_connect_task_error_deadletterqueue_produce_requests", "The attempted writes to the dead letter queue.", "connector", "task"), value: func(m *worker.TaskMetrics) int64 { return m.DLQRequests.Load() }},
	}
	txnSizeMin       = desc("kafka_connect_source_task_transaction_size_min", "The number of records in the smallest transaction the task committed.", "connector", "task")
	txnSizeMax       = desc("kafka_connect_source_task_transaction_size_max", "The number of records in the largest transaction the task committed.", "connector", "task")
	txnSizeAvg       = desc("kafka_connect_source_task_transaction_size_avg", "The average number of records in the transactions the task committed.", "connector", "task")
	commitSuccessPct = desc("kafka_connect_connector_task_offset_commit_success_percentage", "The average percentage of the task's offset commits that succeeded.", "connector", "task")
	commitFailurePct = desc("kafka_connect_connector_task_offset_commit_failure_percentage", "The average percentage of the task's offset commits that failed.", "connector", "task")
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	count := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	local := func(workerID string) bool { return c.src.WorkerID == "" || workerID == c.src.WorkerID }
	if c.src.Broker != nil {
		b := c.src.Broker()
		gauge(brokerConnections, float64(b.Connections))
		count(brokerConnectionsTotal, b.ConnectionsTotal)
		count(brokerReceived, b.BytesReceived)
		count(brokerSent, b.BytesSent)
	}

	names, err := c.src.Herder.Connectors(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(connectorCount, err)
		return
	}
	connectors, tasks := 0, 0
	for _, name := range names {
		st, err := c.src.Herder.ConnectorStatus(ctx, name)
		if err != nil {
			continue // deleted meanwhile, or not started yet: no status
		}
		states := map[string]int{}
		localTasks := 0
		for _, t := range st.Tasks {
			if !local(t.WorkerID) {
				continue
			}
			localTasks++
			states[strings.ToLower(t.State)]++
			gauge(taskStatus, 1, name, strconv.Itoa(t.ID), strings.ToLower(t.State))
		}
		tasks += localTasks
		if localTasks > 0 {
			gauge(perConnector["total"], float64(localTasks), name)
			for _, state := range []string{"running", "paused", "failed", "unassigned", "destroyed", "restarting"} {
				gauge(perConnector[state], float64(states[state]), name)
			}
		}
		if !local(st.Connector.WorkerID) {
			continue
		}
		connectors++
		gauge(connectorStatus, 1, name, strings.ToLower(st.Connector.State))
		if info, err := c.src.Herder.ConnectorInfo(ctx, name); err == nil {
			// The class's full name, as Kafka's metric has it, whatever
			// alias the config uses.
			class, version := info.Config["connector.class"], ""
			if p, err := c.src.Worker.Plugins().Lookup(class); err == nil {
				class, version = p.Class, p.Version
			}
			gauge(connectorClass, 1, name, class)
			gauge(connectorType, 1, name, info.Type)
			if version != "" {
				gauge(connectorVersion, 1, name, version)
			}
		}
	}
	gauge(connectorCount, float64(connectors))
	gauge(taskCount, float64(tasks))
	gauge(assignedConns, float64(connectors))
	gauge(assignedTasks, float64(tasks))
	if c.src.Rebalancing != nil {
		v := 0.0
		if c.src.Rebalancing() {
			v = 1
		}
		gauge(rebalancing, v)
	}
	if c.src.Rebalances != nil {
		r := c.src.Rebalances()
		count(rebalancesTotal, r.Completed)
		gauge(rebalanceEpoch, float64(r.Epoch))
		gauge(rebalanceMax, float64(r.MaxTime.Milliseconds()))
		gauge(rebalanceAvg, float64(r.AvgTime.Milliseconds()))
		// Kafka shows -1 before the first rebalance.
		since := -1.0
		if !r.Last.IsZero() {
			since = float64(time.Since(r.Last).Milliseconds())
		}
		gauge(rebalanceSince, since)
	}
	s := c.src.Worker.Startups()
	count(startups["connector_startup_attempts_total"], s.ConnectorAttempts.Load())
	count(startups["connector_startup_success_total"], s.ConnectorSuccesses.Load())
	count(startups["connector_startup_failure_total"], s.ConnectorFailures.Load())
	count(startups["task_startup_attempts_total"], s.TaskAttempts.Load())
	count(startups["task_startup_success_total"], s.TaskSuccesses.Load())
	count(startups["task_startup_failure_total"], s.TaskFailures.Load())

	now := time.Now()
	seen := map[rateKey]bool{}
	c.src.Worker.EachTask(func(connector string, id int, typ string, m *worker.TaskMetrics) {
		task := strconv.Itoa(id)
		counters := sourceCounters
		if typ == "sink" {
			counters = sinkCounters
		}
		for _, tc := range append(counters, errorCounters...) {
			v := tc.value(m)
			count(tc.total, v, connector, task)
			if tc.rate != nil {
				k := rateKey{tc.rate, connector, id}
				seen[k] = true
				gauge(tc.rate, c.rates.rate(k, now, v), connector, task)
			}
		}
		// An exactly-once source task's transactions, once it committed
		// one (Kafka's transaction-size-min/max/avg).
		if n, lo, hi, avg := m.TransactionSizes.Stats(); n > 0 {
			gauge(txnSizeMin, float64(lo), connector, task)
			gauge(txnSizeMax, float64(hi), connector, task)
			gauge(txnSizeAvg, avg, connector, task)
		}
		ok, failed := m.CommitsSucceeded.Load(), m.CommitsFailed.Load()
		if all := ok + failed; all > 0 {
			gauge(commitSuccessPct, float64(ok)/float64(all), connector, task)
			gauge(commitFailurePct, float64(failed)/float64(all), connector, task)
		}
	})
	c.rates.keep(seen)
}

// rates computes per-second rates of counters from the values scrapes
// saw in the last minute, as Kafka's Rate does over its sample windows.
type rates struct {
	mu      sync.Mutex
	samples map[rateKey][]sample
}

type rateKey struct {
	d    *prometheus.Desc
	conn string
	task int
}

type sample struct {
	at time.Time
	v  int64
}

func newRates() *rates { return &rates{samples: map[rateKey][]sample{}} }

// rateWindow is how far back a rate looks.
const rateWindow = time.Minute

func (r *rates) rate(k rateKey, now time.Time, v int64) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := append(r.samples[k], sample{now, v})
	// Keep the newest sample older than the window, so that a rate spans
	// the whole window once the task has been watched that long.
	for len(s) > 2 && now.Sub(s[1].at) >= rateWindow {
		s = s[1:]
	}
	r.samples[k] = s
	first := s[0]
	elapsed := now.Sub(first.at).Seconds()
	if elapsed <= 0 || v < first.v {
		return 0
	}
	return float64(v-first.v) / elapsed
}

// keep forgets the tasks that are gone.
func (r *rates) keep(seen map[rateKey]bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.samples {
		if !seen[k] {
			delete(r.samples, k)
		}
	}
}
