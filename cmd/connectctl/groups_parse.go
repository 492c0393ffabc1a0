package main

import (
	"errors"
	"fmt"
	"github.com/connectd/connectd/internal/groupoffsets"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// parseResetCSV reads a reset plan as kafka-consumer-groups --export
// writes it and --from-file reads it: "topic,partition,offset" lines for
// one group, or "group,topic,partition,offset" lines, of which those of
// group are kept. As in Kafka, a later line for the same partition wins.
func parseResetCSV(data []byte, group string) (groupoffsets.State, error) {
	out := groupoffsets.State{}
	fields := 0
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		cols := strings.Split(line, ",")
		for j := range cols {
			cols[j] = strings.TrimSpace(cols[j])
		}
		if len(cols) != 3 && len(cols) != 4 {
			return nil, fmt.Errorf("line %d: %q: want topic,partition,offset or group,topic,partition,offset", i+1, line)
		}
		if fields != 0 && len(cols) != fields {
			return nil, fmt.Errorf("line %d: %d columns where the lines before have %d", i+1, len(cols), fields)
		}
		fields = len(cols)
		if fields == 4 {
			if cols[0] != group {
				continue
			}
			cols = cols[1:]
		}
		if cols[0] == "" {
			return nil, fmt.Errorf("line %d: no topic", i+1)
		}
		p, err := strconv.ParseInt(cols[1], 10, 32)
		if err != nil || p < 0 {
			return nil, fmt.Errorf("line %d: partition %q is not a partition number", i+1, cols[1])
		}
		off, err := strconv.ParseInt(cols[2], 10, 64)
		if err != nil || off < 0 {
			return nil, fmt.Errorf("line %d: offset %q is not an offset", i+1, cols[2])
		}
		out[groupoffsets.TP{Topic: cols[0], Partition: int32(p)}] = off
	}
	return out, nil
}

// isoDuration is java.time.Duration.parse's grammar (PnDTnHnMn.nS, each
// part optional and signed, the whole signed too, letters in either case).
var isoDuration = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$`)

// parseISODuration reads --by-duration: an ISO-8601 duration as
// kafka-consumer-groups takes it (java.time.Duration.parse: PT15M,
// P1DT2H, -PT5M), or a Go duration (15m, 2h30m) for convenience.
func parseISODuration(s string) (time.Duration, error) {
	bad := fmt.Errorf("--by-duration %q: want an ISO-8601 duration such as PT15M or P1DT2H (or 15m, 2h30m)", s)
	m := isoDuration.FindStringSubmatch(s)
	if m == nil {
		if d, err := time.ParseDuration(s); err == nil {
			return d, nil
		}
		return 0, bad
	}
	// "P", "PT" and "P...T" name no amount, and are refused as Java does.
	if m[2] == "" && m[4] == "" && m[5] == "" && m[6] == "" || m[3] != "" && m[4] == "" && m[5] == "" && m[6] == "" {
		return 0, bad
	}
	// Summed exactly, so that an overflow is seen rather than wrapped.
	total := new(big.Int)
	add := func(num string, unit time.Duration) error {
		if num == "" {
			return nil
		}
		n, ok := new(big.Int).SetString(num, 10)
		if !ok {
			return bad
		}
		total.Add(total, n.Mul(n, big.NewInt(int64(unit))))
		return nil
	}
	for _, part := range []struct {
		num  string
		unit time.Duration
	}{{m[2], 24 * time.Hour}, {m[4], time.Hour}, {m[5], time.Minute}, {m[6], time.Second}} {
		if err := add(part.num, part.unit); err != nil {
			return 0, err
		}
	}
	if frac := m[7]; frac != "" {
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		// The fraction takes the seconds' sign: PT-1.5S is -1.5 s.
		if strings.HasPrefix(m[6], "-") {
			ns = -ns
		}
		total.Add(total, big.NewInt(ns))
	}
	if m[1] == "-" {
		total.Neg(total)
	}
	if !total.IsInt64() || total.Int64() == math.MinInt64 {
		return 0, errors.Join(bad, errors.New("it is longer than connectctl can count (292 years)"))
	}
	return time.Duration(total.Int64()), nil
}
