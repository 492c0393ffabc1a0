package worker

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafkasec"
	"github.com/twmb/franz-go/pkg/kgo"
)

// clientOptions turns Kafka client properties (Java names) into franz-go
// options. Keys that have no franz-go equivalent are ignored, as a Java
// client ignores keys it does not know with a warning.
//
// Connection security (security.protocol, ssl.*, sasl.*) and dial are
// handled by kafkasec.ConnOptions.
func clientOptions(props map[string]string, dial kafkasec.DialFunc) ([]kgo.Opt, error) {
	opts, err := kafkasec.ConnOptions(props, dial)
	if err != nil {
		return nil, err
	}
	bad := func(k, v, why string) error {
		return fmt.Errorf("Invalid value %s for configuration %s: %s", v, k, why)
	}
	ms := func(k, v string) (time.Duration, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0, bad(k, v, "Not a number of type LONG")
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	for k, v := range props {
		switch k {
		case "bootstrap.servers":
			opts = append(opts, kgo.SeedBrokers(splitList(v)...))
		case "client.id":
			opts = append(opts, kgo.ClientID(v))
		case "linger.ms":
			d, err := ms(k, v)
			if err != nil {
				return nil, err
			}
			opts = append(opts, kgo.ProducerLinger(d))
		case "batch.size":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n <= 0 {
				return nil, bad(k, v, "Not a number of type INT")
			}
			opts = append(opts, kgo.ProducerBatchMaxBytes(int32(n)))
		case "compression.type":
			var c kgo.CompressionCodec
			switch strings.ToLower(v) {
			case "none":
				c = kgo.NoCompression()
			case "gzip":
				c = kgo.GzipCompression()
			case "snappy":
				c = kgo.SnappyCompression()
			case "lz4":
				c = kgo.Lz4Compression()
			case "zstd":
				c = kgo.ZstdCompression()
			default:
				return nil, bad(k, v, "String must be one of: none, gzip, snappy, lz4, zstd")
			}
			opts = append(opts, kgo.ProducerBatchCompression(c))
		case "acks":
			switch strings.ToLower(v) {
			case "all", "-1":
				opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
			case "1":
				opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
			case "0":
				opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
			default:
				return nil, bad(k, v, "String must be one of: all, -1, 0, 1")
			}
		case "auto.offset.reset":
			switch strings.ToLower(v) {
			case "earliest":
				opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			case "latest":
				opts = append(opts, kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
			case "none":
				opts = append(opts, kgo.ConsumeResetOffset(kgo.NoResetOffset()))
			default:
				return nil, bad(k, v, "String must be one of: latest, earliest, none")
			}
		case "session.timeout.ms":
			d, err := ms(k, v)
			if err != nil {
				return nil, err
			}
			opts = append(opts, kgo.SessionTimeout(d))
		case "heartbeat.interval.ms":
			d, err := ms(k, v)
			if err != nil {
				return nil, err
			}
			opts = append(opts, kgo.HeartbeatInterval(d))
		case "transaction.timeout.ms":
			d, err := ms(k, v)
			if err != nil {
				return nil, err
			}
			opts = append(opts, kgo.TransactionTimeout(d))
		case "fetch.max.wait.ms":
			d, err := ms(k, v)
			if err != nil {
				return nil, err
			}
			opts = append(opts, kgo.FetchMaxWait(d))
		case "fetch.max.bytes", "max.partition.fetch.bytes", "fetch.min.bytes":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil {
				return nil, bad(k, v, "Not a number of type INT")
			}
			if n < 0 {
				return nil, bad(k, v, "Value must be at least 0")
			}
			switch k {
			case "fetch.max.bytes":
				opts = append(opts, kgo.FetchMaxBytes(int32(n)))
			case "max.partition.fetch.bytes":
				opts = append(opts, kgo.FetchMaxPartitionBytes(int32(n)))
			default:
				opts = append(opts, kgo.FetchMinBytes(int32(n)))
			}
		case "enable.metrics.push":
			push, err := connect.ParseValue(k, connect.ConfigBoolean, v)
			if err != nil {
				return nil, err
			}
			if !push.(bool) {
				opts = append(opts, kgo.DisableClientMetrics())
			}
		case "isolation.level":
			if strings.EqualFold(v, "read_committed") {
				opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
			}
		}
	}
	return opts, nil
}
