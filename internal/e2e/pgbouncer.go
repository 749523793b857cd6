package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// PgBouncerSettings are the PgBouncer settings docs/deploying.md gives (PgBouncer,
// After PostgreSQL restarts), beside the pool mode and size .ci/pgbouncer uses:
// a failed server login is retried after 1 s, not PgBouncer's 15 s, and a client
// waits at most 5 s for a server connection, below riskapi's store-call bound
// (half the idempotency lease), so that writes succeed again soon after
// PostgreSQL answers and no request waits on the pooler longer than its bound.
const PgBouncerSettings = `pool_mode = transaction
default_pool_size = 10
max_client_conn = 500
server_reset_query =
server_login_retry = 1
query_wait_timeout = 5
`

// PgBouncer is a PgBouncer process in front of a PGCluster, in transaction pooling
// mode with PgBouncerSettings, on a port of its own that survives Kill and Start.
// As root it runs as the postgres user (it refuses root). The instances and
// commands this package starts on its URL get DATABASE_POOLER=transaction.
type PgBouncer struct {
	dir  string
	port int
	cred *syscall.Credential // nil: as we are

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// PgBouncerBin returns the path of the pgbouncer binary, or "".
func PgBouncerBin() string {
	for _, p := range []string{"pgbouncer", "/usr/sbin/pgbouncer"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	return ""
}

// poolers are the addresses (host:port) of the PgBouncers this process knows: those
// it started and TEST_PGBOUNCER_URL's.
var poolers sync.Map

// poolerEnv returns DATABASE_POOLER=transaction when databaseURL points at a
// PgBouncer this process knows, else nothing.
func poolerEnv(databaseURL string) []string {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil
	}
	if t, err := url.Parse(os.Getenv("TEST_PGBOUNCER_URL")); err == nil && t.Host != "" && t.Host == u.Host {
		return []string{"DATABASE_POOLER=transaction"}
	}
	if _, ok := poolers.Load(u.Host); ok {
		return []string{"DATABASE_POOLER=transaction"}
	}
	return nil
}

// StartPgBouncerT starts a PgBouncer in front of pg for a test, stopped in its
// cleanup. It skips the test when there is no pgbouncer binary, unless CI is set
// (.ci/run installs it), where it fails.
func StartPgBouncerT(t testing.TB, pg *PGCluster) *PgBouncer {
	t.Helper()
	bin := PgBouncerBin()
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("no pgbouncer binary (apt-get install pgbouncer; .ci/run installs it)")
		}
		t.Skip("no pgbouncer binary: apt-get install pgbouncer")
	}
	b, err := newPgBouncer(pg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Kill()
		os.RemoveAll(b.dir)
	})
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return b
}

func newPgBouncer(pg *PGCluster) (*PgBouncer, error) {
	dir, err := os.MkdirTemp("", "riskapi-pgbouncer-")
	if err != nil {
		return nil, err
	}
	b := &PgBouncer{dir: dir}
	if b.port, err = freePort(); err != nil {
		return nil, err
	}
	ini := fmt.Sprintf("[databases]\n* = host=127.0.0.1 port=%d\n\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = %d\n"+
		"unix_socket_dir =\nauth_type = trust\nauth_file = %s\nlogfile = %s\n%s",
		pg.port, b.port, filepath.Join(dir, "users.txt"), filepath.Join(dir, "pgbouncer.log"), PgBouncerSettings)
	if err := os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(ini), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(`"postgres" ""`+"\n"), 0o644); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root, and PgBouncer refuses root: no postgres user (%w)", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		b.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	poolers.Store(b.addr(), true)
	return b, nil
}

func (b *PgBouncer) addr() string { return fmt.Sprintf("127.0.0.1:%d", b.port) }

// URL is the DATABASE_URL of pg's postgres database through the pooler.
func (b *PgBouncer) URL() string {
	return fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", b.addr())
}

// Start starts the pooler in the foreground, as its own process (Kill sends it
// SIGKILL by its PID), and waits until it accepts connections.
func (b *PgBouncer) Start(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd != nil {
		return errors.New("pgbouncer: already running")
	}
	cmd := exec.Command(PgBouncerBin(), filepath.Join(b.dir, "pgbouncer.ini"))
	cmd.Dir = b.dir
	if b.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: b.cred}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgbouncer: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	b.cmd, b.done = cmd, done
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", b.addr(), time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-done:
			b.cmd = nil
			return fmt.Errorf("pgbouncer exited at start: %s", b.LogTail(2048))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgbouncer does not listen on %s: %s", b.addr(), b.LogTail(2048))
		}
	}
}

// Kill sends the pooler SIGKILL, as a crash would end it, and waits until it is
// gone: its clients' connections break with no answer. A stopped pooler is left.
func (b *PgBouncer) Kill() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return
	}
	_ = b.cmd.Process.Kill()
	<-b.done
	b.cmd = nil
}

// LogTail returns at most the last n bytes of the pooler's log.
func (b *PgBouncer) LogTail(n int) string {
	data, _ := os.ReadFile(filepath.Join(b.dir, "pgbouncer.log"))
	return string(data[max(0, len(data)-n):])
}
