package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sync/errgroup"
)

// kfake opens a partition's first segment and index files at the
// partition's first produce, in the loop that answers every client. On
// the development machine's ext4 a new directory and its two files cost
// 0.5 to 1 ms of kernel CPU, so a burst of new topics (a thousand source
// tasks starting, each producing to its own) held every client, a
// connector's create included, for hundreds of milliseconds at a time:
// over a 3,000-connector cluster figure the loop spent 1.9 s of its 3.3 s
// there. The broker makes them instead while it creates the topic, off
// the loop, and kfake then opens files that exist (30 µs).
//
// The paths are kfake's (its partDir, segmentFileName and indexFileName):
// TestLogFilesAreKfakes fails if an upgrade changes them.

// logFilesParallel is how many partitions' files are made at once: the
// request that creates the topics waits for them. More than two contend
// for the same directory in the kernel and cost more CPU in all.
const logFilesParallel = 2

// maxLogFilesTopic bounds what one request makes: a topic of more
// partitions is left to kfake, which makes each file as it is needed.
const maxLogFilesTopic = 1000

// legalTopic is Kafka's rule for a topic name; kfake refuses the others,
// so nothing is made for them.
var legalTopic = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// partitionDir is where kfake keeps a partition's segments.
func partitionDir(dataDir, topic string, partition int32) string {
	return filepath.Join(dataDir, "partitions", fmt.Sprintf("%s-%d", url.PathEscape(topic), partition))
}

// makeLogFiles runs as the control of CreateTopics requests: it makes the
// directory and the first (empty) segment and index files of each
// partition the request creates, then lets kfake answer the request.
func (b *Broker) makeLogFiles(req kmsg.Request) (kmsg.Response, error, bool) {
	b.cluster.KeepControl()
	r := req.(*kmsg.CreateTopicsRequest)
	if b.dataDir == "" || r.ValidateOnly {
		return nil, nil, false
	}
	var dirs []string
	for _, t := range r.Topics {
		if !legalTopic.MatchString(t.Topic) || t.Topic == "." || t.Topic == ".." {
			continue
		}
		n := t.NumPartitions
		if len(t.ReplicaAssignment) > 0 {
			n = int32(len(t.ReplicaAssignment))
		} else if n == -1 {
			n = b.partitions
		}
		if n <= 0 || n > maxLogFilesTopic {
			continue
		}
		for p := range n {
			dirs = append(dirs, partitionDir(b.dataDir, t.Topic, p))
		}
	}
	if len(dirs) == 0 {
		return nil, nil, false
	}
	// The request waits, the loop goes on.
	b.cluster.SleepControl(func() {
		if err := makePartitionFiles(filepath.Join(b.dataDir, "partitions"), dirs); err != nil {
			// kfake makes what is missing itself, and reports what it
			// cannot.
			b.log.log.Warn("embedded broker: making a new topic's log files", "error", err)
		}
	})
	return nil, nil, false
}

// makePartitionFiles makes each directory of dirs (under parent) with an
// empty segment and index file for offset 0, as kfake makes them at a new
// partition's first produce. A directory that exists is left alone: its
// partition exists already (the request will fail for its topic), or was
// produced to, and its first segment may no longer start at offset 0.
// Nothing that exists is written to: a race with kfake making the same
// files costs nothing.
func makePartitionFiles(parent string, dirs []string) error {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(logFilesParallel)
	for _, dir := range dirs {
		g.Go(func() error { return makePartition(dir) })
	}
	return g.Wait()
}

func makePartition(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	for _, name := range []string{"0.dat", "0.idx"} {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}
