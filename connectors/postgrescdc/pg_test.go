package postgrescdc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The package's tests share one throwaway PostgreSQL cluster with
// wal_level=logical, created with initdb in a temporary directory on the
// first test that needs it and stopped by TestMain. Each test gets a
// database of its own. Without initdb the tests skip, except under
// CI=true, where they fail.

func TestMain(m *testing.M) {
	code := m.Run()
	stopCluster()
	os.Exit(code)
}

type pgCluster struct {
	dir    string
	bin    string // directory of initdb, pg_ctl, pg_recvlogical
	port   int
	runAs  string // user to run the server as, when running as root
	uid    int
	gid    int
	nextDB atomic.Int64
}

var (
	clusterOnce sync.Once
	clusterErr  error
	theCluster  *pgCluster
)

// testCluster returns the shared cluster, starting it on first use.
func testCluster(tb testing.TB) *pgCluster {
	tb.Helper()
	clusterOnce.Do(func() { theCluster, clusterErr = startCluster() })
	if clusterErr != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("cannot start a throwaway PostgreSQL cluster under CI: %v", clusterErr)
		}
		tb.Skipf("cannot start a throwaway PostgreSQL cluster: %v", clusterErr)
	}
	return theCluster
}

func findPGBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "pg_ctl")); err == nil {
			return dir, nil
		}
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(matches, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[j]))))
		return vi > vj
	})
	for _, m := range matches {
		return filepath.Dir(m), nil
	}
	return "", errors.New("initdb is not installed (neither in PATH nor in /usr/lib/postgresql/*/bin)")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *pgCluster) command(name string, args ...string) *exec.Cmd {
	path := filepath.Join(c.bin, name)
	if c.runAs != "" {
		return exec.Command("runuser", append([]string{"-u", c.runAs, "--", path}, args...)...)
	}
	return exec.Command(path, args...)
}

func startCluster() (*pgCluster, error) {
	bin, err := findPGBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "postgrescdc-test-")
	if err != nil {
		return nil, err
	}
	c := &pgCluster{dir: dir, bin: bin}
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: run the cluster as postgres.
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root and there is no postgres user to run the cluster as: %v", err)
		}
		c.runAs = u.Username
		c.uid, _ = strconv.Atoi(u.Uid)
		c.gid, _ = strconv.Atoi(u.Gid)
		if err := os.Chown(dir, c.uid, c.gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	out, err := c.command("initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	for attempt := 0; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			return nil, err
		}
		conf := fmt.Sprintf(`
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
wal_level = logical
max_replication_slots = 40
max_wal_senders = 40
max_connections = 100
wal_sender_timeout = 60s
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 64MB
log_min_messages = warning
`, c.port, dir)
		if err := os.WriteFile(filepath.Join(data, "postgresql.auto.conf"), []byte(conf), 0o600); err != nil {
			return nil, err
		}
		if c.runAs != "" {
			os.Chown(filepath.Join(data, "postgresql.auto.conf"), c.uid, c.gid)
		}
		out, err = c.command("pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "start").CombinedOutput()
		if err == nil {
			break
		}
		if attempt == 2 {
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pg_ctl start: %v: %s\n%s", err, out, log)
		}
	}
	return c, nil
}

func stopCluster() {
	if theCluster == nil {
		return
	}
	c := theCluster
	c.command("pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop").Run()
	os.RemoveAll(c.dir)
}

// dsn is a connection string to a database of the cluster.
func (c *pgCluster) dsn(db string) string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=%s sslmode=disable", c.port, db)
}

func (c *pgCluster) connect(tb testing.TB, db string) *pgx.Conn {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.dsn(db))
	if err != nil {
		tb.Fatalf("connecting to %s: %v", db, err)
	}
	return conn
}

// testDB is a database of its own for a test.
type testDB struct {
	c    *pgCluster
	name string
	conn *pgx.Conn
	tb   testing.TB
}

// newDB creates a fresh database; it and its replication slots are
// dropped when the test ends.
func newDB(tb testing.TB) *testDB {
	tb.Helper()
	c := testCluster(tb)
	name := fmt.Sprintf("cdc_%d_%d", os.Getpid(), c.nextDB.Add(1))
	admin := c.connect(tb, "postgres")
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("creating database: %v", err)
	}
	d := &testDB{c: c, name: name, conn: c.connect(tb, name), tb: tb}
	tb.Cleanup(func() {
		d.conn.Close(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		admin, err := pgx.Connect(ctx, c.dsn("postgres"))
		if err != nil {
			return
		}
		defer admin.Close(ctx)
		// The slots first: a slot keeps its database alive.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			admin.Exec(ctx, "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL", name)
			admin.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1 AND NOT active", name)
			var n int
			admin.QueryRow(ctx, "SELECT count(*) FROM pg_replication_slots WHERE database = $1", name).Scan(&n)
			if n == 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	return d
}

func (d *testDB) exec(sql string, args ...any) {
	d.tb.Helper()
	if _, err := d.conn.Exec(context.Background(), sql, args...); err != nil {
		d.tb.Fatalf("%s: %v", sql, err)
	}
}

// lsn returns the current WAL position.
func (d *testDB) currentLSN() int64 {
	d.tb.Helper()
	var s string
	if err := d.conn.QueryRow(context.Background(), "SELECT pg_current_wal_insert_lsn()::text").Scan(&s); err != nil {
		d.tb.Fatal(err)
	}
	return parseLSNText(d.tb, s)
}

// confirmedFlush returns the slot's confirmed_flush_lsn (0 without slot).
func (d *testDB) confirmedFlush(slot string) int64 {
	d.tb.Helper()
	var s *string
	err := d.conn.QueryRow(context.Background(), "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&s)
	if errors.Is(err, pgx.ErrNoRows) || s == nil {
		return 0
	}
	if err != nil {
		d.tb.Fatal(err)
	}
	return parseLSNText(d.tb, *s)
}

func parseLSNText(tb testing.TB, s string) int64 {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		tb.Fatalf("bad LSN %q", s)
	}
	return int64(h<<32 | l)
}

// config is a connector config for the database.
func (d *testDB) config(prefix, slot string, extra ...string) map[string]string {
	m := map[string]string{
		"connector.class":   ConnectorClass,
		"topic.prefix":      prefix,
		"database.hostname": "127.0.0.1",
		"database.port":     strconv.Itoa(d.c.port),
		"database.user":     "postgres",
		"database.dbname":   d.name,
		"database.sslmode":  "disable",
		"slot.name":         slot,
		"publication.name":  slot + "_pub",
		"poll.interval.ms":  "50",
		// Short waits when a previous task still holds the slot.
		"slot.retry.delay.ms": "200",
		"slot.max.retries":    "50",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}
