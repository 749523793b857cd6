package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvPGBin names the directory holding initdb and pg_ctl for PGCluster. Optional;
// default the newest /usr/lib/postgresql/*/bin (Debian's layout).
const EnvPGBin = "E2E_PG_BIN"

// PGCluster is a private PostgreSQL cluster: initdb'd into a temporary directory of
// its own and listening on 127.0.0.1 on a free port with trust authentication. Tests
// that stop PostgreSQL itself (pg_ctl stop -m immediate) use it, never the shared
// server: they stop and remove only this cluster, by its data directory. The
// PostgreSQL binaries refuse to run as root, so as root they run as the postgres
// user (runuser), in a directory that user owns.
type PGCluster struct {
	bin  string   // directory of initdb and pg_ctl
	dir  string   // the cluster's directory: data/, server.log, the socket
	port int      // TCP port on 127.0.0.1
	as   []string // command prefix running a binary as the cluster's user; empty: as we are
}

// PGBinDir returns the directory of initdb and pg_ctl ($E2E_PG_BIN, else the newest
// /usr/lib/postgresql/*/bin), or "" when there is none.
func PGBinDir() string {
	if d := os.Getenv(EnvPGBin); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(d string) int { n, _ := strconv.Atoi(filepath.Base(filepath.Dir(d))); return n }
	slices.SortFunc(dirs, func(a, b string) int { return version(a) - version(b) })
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

// NewPGCluster runs initdb (superuser postgres, trust authentication) in a new
// temporary directory and returns the cluster, not yet started. Remove deletes it.
func NewPGCluster(ctx context.Context, bin string) (*PGCluster, error) {
	c, err := newPGDir(bin)
	if err != nil {
		return nil, err
	}
	if _, err := c.run(ctx, "initdb", "-D", c.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		os.RemoveAll(c.dir)
		return nil, err
	}
	if err := c.configure(); err != nil {
		os.RemoveAll(c.dir)
		return nil, err
	}
	return c, nil
}

// newPGDir makes the directory of a cluster of bin's binaries, owned by the user
// they run as, and picks the cluster's free port.
func newPGDir(bin string) (*PGCluster, error) {
	c := &PGCluster{bin: bin}
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		return nil, fmt.Errorf("no PostgreSQL binaries in %s: %w", bin, err)
	}
	dir, err := os.MkdirTemp("", "riskapi-pg-")
	if err != nil {
		return nil, err
	}
	c.dir = dir
	if os.Geteuid() == 0 {
		if err := c.runAsPostgres(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if c.port, err = freePort(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// configure appends the cluster's own address to its postgresql.conf: later lines
// win, so this also overrides the primary's port in a base backup's copy.
func (c *PGCluster) configure() error {
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\n", c.port, c.dir)
	f, err := os.OpenFile(filepath.Join(c.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// runAsPostgres makes the cluster's binaries run as the postgres user and gives it
// the cluster's directory.
func (c *PGCluster) runAsPostgres() error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, and PostgreSQL refuses root: no postgres user (%w)", err)
	}
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		return fmt.Errorf("running as root, and PostgreSQL refuses root: no runuser (%w)", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(c.dir, uid, gid); err != nil {
		return err
	}
	c.as = []string{runuser, "-u", "postgres", "--"}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *PGCluster) data() string { return filepath.Join(c.dir, "data") }

// run runs one of the cluster's binaries (as its user) and returns its output;
// errors carry the output.
func (c *PGCluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	argv := append(slices.Clone(c.as), filepath.Join(c.bin, name))
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// URL is the DATABASE_URL of the cluster's postgres database.
func (c *PGCluster) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Start starts the cluster (pg_ctl start) and waits until it accepts connections,
// after crash recovery if it was stopped with StopImmediate.
func (c *PGCluster) Start(ctx context.Context) error {
	_, err := c.run(ctx, "pg_ctl", "start", "-D", c.data(), "-l", filepath.Join(c.dir, "server.log"), "-w", "-t", "120")
	return err
}

// StopImmediate stops the cluster as `pg_ctl stop -m immediate` does: every backend
// quits at once, with no checkpoint and no goodbye to its client, as in a crash.
// It returns once the postmaster is gone.
func (c *PGCluster) StopImmediate(ctx context.Context) error {
	_, err := c.run(ctx, "pg_ctl", "stop", "-D", c.data(), "-m", "immediate", "-w", "-t", "60")
	return err
}

// LogTail returns at most the last n bytes of the cluster's server log.
func (c *PGCluster) LogTail(n int) string {
	b, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
	return string(b[max(0, len(b)-n):])
}

// Remove stops the cluster if it runs (by its data directory's postmaster.pid) and
// deletes its directory.
func (c *PGCluster) Remove() error {
	var err error
	if _, statErr := os.Stat(filepath.Join(c.data(), "postmaster.pid")); statErr == nil {
		err = c.StopImmediate(context.Background())
	}
	if rmErr := os.RemoveAll(c.dir); err == nil {
		err = rmErr
	}
	return err
}

// StartPGClusterT starts a private cluster for a test, removed in its cleanup. It
// skips the test when there are no PostgreSQL binaries (EnvPGBin).
func StartPGClusterT(t testing.TB) *PGCluster {
	t.Helper()
	bin := PGBinDir()
	if bin == "" {
		t.Skipf("no PostgreSQL binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin; set %s to their directory", EnvPGBin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := NewPGCluster(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Errorf("remove the private PostgreSQL cluster: %v", err)
		}
	})
	if err := c.Start(ctx); err != nil {
		t.Fatalf("%v\n%s", err, c.LogTail(4096))
	}
	return c
}
