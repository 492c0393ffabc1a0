package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// proc is a `connectd standalone` process started from the built binary,
// with its own embedded broker, REST listener and data directory.
type proc struct {
	cmd     *exec.Cmd
	dir     string
	rest    string // http://host:port
	kafka   string // host:port of the embedded broker
	logPath string
	props   string    // a worker's properties file
	started time.Time // just before exec
	exited  chan struct{}
	waitErr error
	logFile *os.File
	stopped bool
	profile string // the CPU profile it writes (-cpuprofiles), if any
}

// freePort returns a TCP port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startWorker writes worker.properties into dir (fresh data dirs, free
// ports, plus extra) and execs `connectd standalone worker.properties`.
// It does not wait for the REST API; see waitReady.
func startWorker(bin, dir string, extra map[string]string) (*proc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	restPort, err := freePort()
	if err != nil {
		return nil, err
	}
	kafkaPort, err := freePort()
	if err != nil {
		return nil, err
	}
	for kafkaPort == restPort {
		if kafkaPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	props := map[string]string{
		"listeners":                    fmt.Sprintf("http://127.0.0.1:%d", restPort),
		"embedded.kafka.listeners":     fmt.Sprintf("127.0.0.1:%d", kafkaPort),
		"embedded.kafka.data.dir":      filepath.Join(dir, "kafka"),
		"offset.storage.file.filename": filepath.Join(dir, "connect.offsets"),
	}
	for k, v := range extra {
		props[k] = v
	}
	var b strings.Builder
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, props[k])
	}
	propsPath := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(propsPath, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	p := &proc{
		dir:     dir,
		rest:    fmt.Sprintf("http://127.0.0.1:%d", restPort),
		kafka:   fmt.Sprintf("127.0.0.1:%d", kafkaPort),
		logPath: filepath.Join(dir, "connectd.log"),
	}
	if err := p.spawn(bin, "standalone", propsPath); err != nil {
		return nil, err
	}
	return p, nil
}

// cpuProfiles is -cpuprofiles: where connectd processes write CPU
// profiles, if anywhere.
var cpuProfiles string

// profiled counts the profiles asked for, to name each.
var profiled atomic.Int64

// spawn execs bin with args (a subcommand first) in p.dir, its output
// going to p.logPath, and records the process as a child to kill should
// the bench stop early.
func (p *proc) spawn(bin string, args ...string) error {
	var err error
	p.exited = make(chan struct{})
	if p.logFile, err = os.Create(p.logPath); err != nil {
		return err
	}
	if cpuProfiles != "" {
		path := filepath.Join(cpuProfiles, fmt.Sprintf("%s-%d.pprof", filepath.Base(p.dir), profiled.Add(1)))
		args = append([]string{args[0], "--cpuprofile", path}, args[1:]...)
		p.profile = path
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = p.dir
	p.cmd.Stdout = p.logFile
	p.cmd.Stderr = p.logFile
	setPdeathsig(p.cmd)
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		p.logFile.Close()
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	children.add(p)
	go func() {
		p.waitErr = p.cmd.Wait()
		children.remove(p)
		close(p.exited)
	}()
	return nil
}

// children are the processes the bench started that are still running.
var children = &childSet{m: map[*proc]struct{}{}}

type childSet struct {
	mu     sync.Mutex
	m      map[*proc]struct{}
	closed bool
}

func (c *childSet) add(p *proc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed { // the bench is exiting: the child must not outlive it
		_ = p.cmd.Process.Kill()
		return
	}
	c.m[p] = struct{}{}
}

func (c *childSet) remove(p *proc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, p)
}

// killAll sends SIGKILL to every child still running and waits (up to
// 5 s) until they are reaped; children started afterwards are killed at
// once.
func (c *childSet) killAll() {
	c.mu.Lock()
	c.closed = true
	var exited []chan struct{}
	for p := range c.m {
		_ = p.cmd.Process.Kill()
		exited = append(exited, p.exited)
	}
	c.mu.Unlock()
	deadline := time.After(5 * time.Second)
	for _, ch := range exited {
		select {
		case <-ch:
		case <-deadline:
			return
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone. Unlike stop it
// is fine to call on a process that has already exited.
func (p *proc) kill() {
	if p == nil || p.stopped {
		return
	}
	p.stopped = true
	_ = p.cmd.Process.Kill()
	<-p.exited
	p.logFile.Close()
}

// waitReady polls GET / until it answers 200 and returns the time of that
// answer. Connection attempts are cheap (refused at once), so the poll
// interval is short to keep the measurement's granularity well under a
// millisecond without spinning a core.
func (p *proc) waitReady(timeout time.Duration) (time.Time, error) {
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true},
	}
	deadline := p.started.Add(timeout)
	for {
		select {
		case <-p.exited:
			return time.Time{}, fmt.Errorf("connectd exited before its REST API answered (%v); log:\n%s", p.waitErr, p.logTail())
		default:
		}
		resp, err := client.Get(p.rest + "/")
		if err == nil {
			now := time.Now()
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return now, nil
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("GET %s/ did not answer 200 within %v (last error %v); log:\n%s", p.rest, timeout, err, p.logTail())
		}
		time.Sleep(250 * time.Microsecond)
	}
}

// rssBytes reads VmRSS from /proc/<pid>/status.
func (p *proc) rssBytes() (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, fmt.Errorf("parsing VmRSS %q: %w", line, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, errors.New("no VmRSS line in /proc/<pid>/status")
}

// stat reads the CPU time and page faults the process has used.
func (p *proc) stat() (procStat, error) { return readProcStat(p.cmd.Process.Pid) }

// stop sends SIGTERM and waits for a clean exit, killing the process if it
// takes longer than 30 s.
func (p *proc) stop() error {
	if p == nil || p.stopped {
		return nil
	}
	p.stopped = true
	defer p.logFile.Close()
	select {
	case <-p.exited:
		return fmt.Errorf("connectd had already exited (%v); log:\n%s", p.waitErr, p.logTail())
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
		return errors.New("connectd did not stop within 30 s of SIGTERM; killed")
	}
}

// logTail returns the end of the worker's log, for error messages.
func (p *proc) logTail() string {
	data, _ := os.ReadFile(p.logPath)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// do sends a REST request and returns the status and body.
func (p *proc) do(ctx context.Context, method, path, body string) (int, []byte, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.rest+path, r)
	if err != nil {
		return 0, nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, buf.Bytes(), err
}

// must is do that fails unless the status is want.
func (p *proc) must(ctx context.Context, want int, method, path, body string) ([]byte, error) {
	code, resp, err := p.do(ctx, method, path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if code != want {
		return nil, fmt.Errorf("%s %s: status %d, want %d; body %s", method, path, code, want, resp)
	}
	return resp, nil
}

// readyWorker starts a standalone worker in dir, waits for its REST API
// and returns it with a client of its broker (made with opts); stop
// closes the client, stops the worker and removes dir (the broker's copy
// of a figure's records is large).
func readyWorker(bin, dir string, extra map[string]string, opts ...kgo.Opt) (p *proc, cl *kgo.Client, stop func() error, err error) {
	if p, err = startWorker(bin, dir, extra); err != nil {
		return nil, nil, nil, err
	}
	stop = func() error {
		if cl != nil {
			cl.Close()
		}
		err := p.stop()
		os.RemoveAll(dir)
		return err
	}
	if _, err = p.waitReady(30 * time.Second); err == nil {
		cl, err = kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(p.kafka)}, opts...)...)
	}
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	return p, cl, stop, nil
}

// firstError keeps the first error producer promises report.
type firstError struct {
	once sync.Once
	err  error
}

func (f *firstError) promise(_ *kgo.Record, err error) {
	if err != nil {
		f.once.Do(func() { f.err = err })
	}
}

// sinkWorker is the worker of the JDBC sink figures, with a client that
// produces uncompressed, as a Kafka producer does by default (franz-go's
// default is snappy, which the sink would have to decompress).
func sinkWorker(bin, dir string, flush time.Duration) (*proc, *kgo.Client, func() error, error) {
	return readyWorker(bin, dir, map[string]string{
		"key.converter":                  "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "true",
		"offset.flush.interval.ms":       strconv.FormatInt(flush.Milliseconds(), 10),
	}, kgo.ProducerBatchCompression(kgo.NoCompression()))
}
