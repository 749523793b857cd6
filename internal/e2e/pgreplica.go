package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/riskapi/riskapi/internal/netfault"
)

// Streaming replication between private clusters (PGCluster): a standby made with
// pg_basebackup -R, promoted with pg_ctl promote, and a pair of them that fails
// over and back under load (docs/deploying.md, Failover and Replicas).

// NewPGStandby makes a streaming standby of primary, which must be running: a new
// cluster directory with a free port of its own, filled by pg_basebackup -R (the
// base backup, standby.signal and primary_conninfo) from via, primary's address or a
// proxy's in front of it ("127.0.0.1:port"). It is not yet started.
func NewPGStandby(ctx context.Context, primary *PGCluster, via string) (*PGCluster, error) {
	c, err := newPGDir(primary.bin)
	if err != nil {
		return nil, err
	}
	if err := c.backUp(ctx, via); err != nil {
		os.RemoveAll(c.dir)
		return nil, err
	}
	return c, nil
}

// backUp fills c's (absent or stopped) data directory with a base backup of the
// primary at via (host:port) and makes it that primary's streaming standby.
func (c *PGCluster) backUp(ctx context.Context, via string) error {
	host, port, err := net.SplitHostPort(via)
	if err != nil {
		return err
	}
	if _, err := os.Stat(c.data()); err == nil {
		// pg_basebackup wants an empty directory; the user it runs as owns c.dir.
		if err := os.RemoveAll(c.data()); err != nil {
			return err
		}
	}
	if _, err := c.run(ctx, "pg_basebackup", "-D", c.data(), "-h", host, "-p", port,
		"-U", "postgres", "-R", "-X", "stream", "-c", "fast", "--no-sync"); err != nil {
		return err
	}
	return c.configure()
}

// Promote ends c's recovery (pg_ctl promote) and returns once it takes writes.
func (c *PGCluster) Promote(ctx context.Context) error {
	_, err := c.run(ctx, "pg_ctl", "promote", "-D", c.data(), "-w", "-t", "60")
	return err
}

// Port is the cluster's TCP port on 127.0.0.1.
func (c *PGCluster) Port() int { return c.port }

// Addr is the cluster's "127.0.0.1:port".
func (c *PGCluster) Addr() string { return fmt.Sprintf("127.0.0.1:%d", c.port) }

// Exec runs sql, one statement without parameters, on the cluster's postgres
// database over a connection of its own.
func (c *PGCluster) Exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	return err
}

// QueryInt returns the one integer sql's one row holds.
func (c *PGCluster) QueryInt(ctx context.Context, sql string) (int64, error) {
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int64
	err = conn.QueryRow(ctx, sql).Scan(&n)
	return n, err
}

// waitFor polls sql (an integer query) on c until it returns a positive number, for
// at most a minute.
func (c *PGCluster) waitFor(ctx context.Context, what, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		n, err := c.QueryInt(ctx, sql)
		if err == nil && n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not within a minute (last: %d, %v)", what, n, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// PGPair is a primary and its streaming standby, two private clusters whose roles
// swap at each Failover; URL names both. With Sync, the primary commits only once
// the standby has the commit on disk (synchronous_standby_names = '*',
// synchronous_commit = on, PostgreSQL's default): no acknowledged commit is missing
// on the standby when it is promoted. Without, replication is asynchronous. The
// standby streams through a proxy (link), so that a test can hold replication
// back (StallReplication) as a slow or partitioned network does.
type PGPair struct {
	Primary, Standby *PGCluster
	Sync             bool
	link             *netfault.Proxy
}

// StartPGPairT starts a primary and a streaming standby of it for a test (skipped
// without PostgreSQL binaries, StartPGClusterT), both removed in its cleanup.
func StartPGPairT(t testing.TB, sync bool) *PGPair {
	t.Helper()
	p := &PGPair{Primary: StartPGClusterT(t), Sync: sync}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	via, err := p.linkTo(p.Primary)
	if err != nil {
		t.Fatal(err)
	}
	standby, err := NewPGStandby(ctx, p.Primary, via)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.link != nil {
			p.link.Close()
		}
		if err := standby.Remove(); err != nil {
			t.Errorf("remove the private PostgreSQL standby: %v", err)
		}
	})
	p.Standby = standby
	if err := p.startStandby(ctx); err != nil {
		t.Fatalf("%v\n--- standby log:\n%s", err, standby.LogTail(4096))
	}
	return p
}

// URL is the multi-host DATABASE_URL of the pair: both hosts, and the one that
// takes writes chosen at each connection (target_session_attrs=read-write).
func (p *PGPair) URL() string {
	a, b := p.Primary, p.Standby
	if a.port > b.port { // the same URL whichever is primary
		a, b = b, a
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write",
		a.port, b.port)
}

// startStandby starts the standby, waits until the primary streams to it, and then,
// with Sync, makes the primary's commits wait for it. The standby's configuration
// was copied before that setting, so once promoted it does not wait for a standby
// of its own (which it has not).
func (p *PGPair) startStandby(ctx context.Context) error {
	if err := p.Standby.Start(ctx); err != nil {
		return err
	}
	if err := p.Primary.waitFor(ctx, "the standby streams",
		"SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'"); err != nil {
		return err
	}
	if !p.Sync {
		return nil
	}
	for _, sql := range []string{"ALTER SYSTEM SET synchronous_standby_names = '*'", "SELECT pg_reload_conf()"} {
		if err := p.Primary.Exec(ctx, sql); err != nil {
			return err
		}
	}
	return p.Primary.waitFor(ctx, "the standby is synchronous",
		"SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")
}

// linkTo replaces the replication link with a proxy to primary and returns its
// address.
func (p *PGPair) linkTo(primary *PGCluster) (string, error) {
	if p.link != nil {
		p.link.Close()
	}
	px, err := netfault.Start(primary.Addr())
	if err != nil {
		return "", err
	}
	p.link = px
	return px.Addr(), nil
}

// StallReplication holds back everything the primary streams to the standby until
// the next Failover or Rejoin: the standby falls behind, and with Sync the
// primary's commits wait.
func (p *PGPair) StallReplication() { p.link.Stall() }

// Failover stops the primary as a crash does (pg_ctl stop -m immediate), waits
// detect — the time a failover manager takes to notice —, promotes the standby and
// swaps the roles. The old primary stays stopped until Rejoin.
func (p *PGPair) Failover(ctx context.Context, detect time.Duration) error {
	if err := p.Primary.StopImmediate(ctx); err != nil {
		return err
	}
	if err := sleep(ctx, detect); err != nil {
		return err
	}
	if err := p.Standby.Promote(ctx); err != nil {
		return err
	}
	p.Primary, p.Standby = p.Standby, p.Primary
	return nil
}

// Rejoin makes the stopped old primary a standby of the new one again — a fresh base
// backup in its directory, on its port — and starts it (startStandby), so that the
// pair can fail over once more.
func (p *PGPair) Rejoin(ctx context.Context) error {
	via, err := p.linkTo(p.Primary)
	if err != nil {
		return err
	}
	if err := p.Standby.backUp(ctx, via); err != nil {
		return err
	}
	return p.startStandby(ctx)
}
