// Command loadgen drives concurrent clients over loopback against running riskapi
// instances and reports throughput and p50/p95/p99 latency for four kinds of
// request — unkeyed writes, keyed first executions, replays and reads — with the
// ratios between them, then checks that no write was doubled or lost.
//
//	loadgen --targets http://127.0.0.1:8080,http://127.0.0.1:8081 --api-key rk_…
//	loadgen --spawn 1 --database-url sqlite:///tmp/load/riskapi.db
//	loadgen --spawn 3 --database-url 'postgres://postgres@127.0.0.1:5432/riskapi_load?sslmode=disable'
//
// --spawn builds cmd/api (run it from inside the riskapi module, or give --api-bin),
// starts that many instances on --database-url with rate limiting off, and provisions
// a fresh tenant and API key through the api's CLI. A run is bounded by --requests
// and --duration per kind and round, and stops by itself; Ctrl-C stops it early and
// still prints what was measured. Requests are not retried: every non-2xx answer or
// network error is counted as an error, and any error, duplicate or lost write makes
// the exit status 1. See docs/performance.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var ue usageError
	switch {
	case err == nil:
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "loadgen: "+ue.Error())
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "loadgen: "+err.Error())
		os.Exit(1)
	}
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// options are the command line.
type options struct {
	targets     []string
	apiKey      string
	spawn       int
	databaseURL string
	apiBin      string
	lease       time.Duration
	clients     int
	requests    int
	duration    time.Duration
	rounds      int
	warmup      int
	kinds       []kind
	progress    time.Duration
	timeout     time.Duration
	verify      bool
	label       string
	pgbench     string        // folder of bench/pgbench scripts; "" = no floor
	pgbenchTime time.Duration // per script and round
	pgbenchURL  string        // the database pgbench writes; "" = --database-url
	env         []string      // extra K=V for spawned instances
	races       int           // same-key races after the rounds; 0 = none
	raceWidth   int           // concurrent requests per race
}

// envFlags collects repeated --env K=V.
type envFlags struct{ o *options }

// String is nil-safe: flag's usage output calls it on a zero envFlags to learn
// whether the flag has a default worth printing.
func (e envFlags) String() string {
	if e.o == nil {
		return ""
	}
	return strings.Join(e.o.env, " ")
}
func (e envFlags) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("%q is not K=V", v)
	}
	e.o.env = append(e.o.env, v)
	return nil
}

func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	targets := fs.String("targets", "", "comma-separated base URLs of running instances, e.g. http://127.0.0.1:8080")
	fs.StringVar(&o.apiKey, "api-key", os.Getenv("RISKAPI_KEY"), "API key (rk_…) with risks:read and risks:write for --targets ($RISKAPI_KEY)")
	fs.IntVar(&o.spawn, "spawn", 0, "start this many instances on --database-url instead of using --targets (SQLite: 1)")
	fs.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "DATABASE_URL for --spawn ($DATABASE_URL)")
	fs.StringVar(&o.apiBin, "api-bin", "", "api binary for --spawn (default: go build ./cmd/api into a temporary directory)")
	fs.DurationVar(&o.lease, "lease", time.Minute, "IDEMPOTENCY_LEASE of spawned instances")
	fs.IntVar(&o.clients, "clients", 16, "concurrent clients")
	fs.IntVar(&o.requests, "requests", 5000, "requests per kind and round (upper bound)")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "time per kind and round (upper bound)")
	fs.IntVar(&o.rounds, "rounds", 2, "rounds; each runs every kind once, in order, so drift hits all kinds alike")
	fs.IntVar(&o.warmup, "warmup", 300, "unmeasured unkeyed and keyed writes before the first round, each")
	kinds := fs.String("kinds", "unkeyed,keyed,replay,read", "kinds to measure: unkeyed, keyed, replay (needs keyed), read (needs keyed)")
	fs.DurationVar(&o.progress, "progress", 5*time.Second, "interval of the progress line on stderr (0: none)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "timeout of one request")
	fs.BoolVar(&o.verify, "verify", true, "list the tenant's risks before and after and check for doubled and lost writes")
	fs.StringVar(&o.pgbench, "pgbench", "", "folder of the pgbench scripts (bench/pgbench): after each round run them on --database-url, or --pgbench-database-url (PostgreSQL, on this machine), for --pgbench-time each and print riskapi's keyed/unkeyed ratio next to that floor, and PostgreSQL's CPU per transaction of them (true only on a cluster where no other client ends a connection meanwhile)")
	fs.DurationVar(&o.pgbenchTime, "pgbench-time", 10*time.Second, "time per pgbench script and round")
	fs.StringVar(&o.pgbenchURL, "pgbench-database-url", "", "the database --pgbench writes (default --database-url): another database of the same cluster, migrated by 'api migrate', keeps pgbench's rows out of what the instance under test sweeps and folds in its own phases")
	fs.IntVar(&o.races, "races", 0, "after the rounds, run this many same-key races and count the risks each created (exactly-once: 1)")
	fs.IntVar(&o.raceWidth, "race-width", 16, "concurrent requests per race, all with one Idempotency-Key and one body")
	fs.Var(envFlags{o}, "env", "K=V added to the environment of --spawn instances, repeatable (e.g. DATABASE_MAX_CONNS=16, so that --pgbench at 64 clients fits PostgreSQL's max_connections)")
	fs.StringVar(&o.label, "label", "", "free text printed in the report header (e.g. the store)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	for _, t := range strings.Split(*targets, ",") {
		if t = strings.TrimRight(strings.TrimSpace(t), "/"); t != "" {
			if !strings.HasPrefix(t, "http://") && !strings.HasPrefix(t, "https://") {
				return nil, usageError{fmt.Sprintf("--targets: %q is not an http:// URL", t)}
			}
			o.targets = append(o.targets, t)
		}
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	seen := map[kind]bool{}
	for _, s := range strings.Split(*kinds, ",") {
		k := kind(strings.TrimSpace(s))
		if !k.valid() {
			return nil, usageError{fmt.Sprintf("--kinds: unknown kind %q (unkeyed, keyed, replay, read)", s)}
		}
		seen[k] = true
	}
	if (seen[kindReplay] || seen[kindRead]) && !seen[kindKeyed] {
		return nil, usageError{"--kinds: replay and read need keyed (they reuse its keys and risks)"}
	}
	for _, k := range allKinds { // always in this order
		if seen[k] {
			o.kinds = append(o.kinds, k)
		}
	}
	return o, nil
}

// check rejects combinations of flags that cannot run.
func (o *options) check() error {
	switch {
	case o.spawn < 0:
		return usageError{"--spawn must be ≥ 0"}
	case o.spawn > 0 && len(o.targets) > 0:
		return usageError{"give either --targets or --spawn, not both"}
	case o.spawn == 0 && len(o.targets) == 0:
		return usageError{"give --targets URL,… (with --api-key) or --spawn N (with --database-url)"}
	case o.spawn == 0 && o.apiKey == "":
		return usageError{"--targets needs --api-key (or $RISKAPI_KEY)"}
	case o.spawn > 0 && o.databaseURL == "":
		return usageError{"--spawn needs --database-url (or $DATABASE_URL)"}
	case o.spawn > 1 && strings.HasPrefix(o.databaseURL, "sqlite://"):
		return usageError{"--spawn: SQLite supports one instance; use PostgreSQL for more"}
	case o.races < 0 || o.raceWidth < 1:
		return usageError{"--races must be ≥ 0 and --race-width ≥ 1"}
	case o.clients < 1 || o.requests < 1 || o.rounds < 1 || o.warmup < 0:
		return usageError{"--clients, --requests and --rounds must be ≥ 1, --warmup ≥ 0"}
	case o.duration <= 0 || o.timeout <= 0 || o.progress < 0:
		return usageError{"--duration and --timeout must be positive, --progress ≥ 0"}
	case o.pgbench != "" && !strings.HasPrefix(o.databaseURL, "postgres"):
		return usageError{"--pgbench needs a PostgreSQL --database-url"}
	case o.pgbenchURL != "" && (o.pgbench == "" || !strings.HasPrefix(o.pgbenchURL, "postgres")):
		return usageError{"--pgbench-database-url needs --pgbench and a PostgreSQL URL"}
	case o.lease < 2*time.Second:
		return usageError{"--lease must be at least 2s"}
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	env, err := setUp(ctx, o, stderr)
	if err != nil {
		return err
	}
	defer env.tearDown(stderr)
	g := newGenerator(o, env, stderr)
	res, err := g.run(ctx)
	if err != nil {
		return err
	}
	report(stdout, o, env, res)
	if !res.ok() {
		return errors.New("errors, doubled or lost writes: see the report")
	}
	return nil
}
