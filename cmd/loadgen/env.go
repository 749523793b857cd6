package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

// environment is what the run talks to: base URLs and a key, and the instances it
// started itself, if any.
type environment struct {
	targets []string
	apiKey  string
	store   string // "sqlite", "postgres" or "" (unknown, --targets)
	insts   []*e2e.Instance
	dir     string // temporary directory of spawned instances and the built binary
}

func setUp(ctx context.Context, o *options, stderr io.Writer) (*environment, error) {
	if o.spawn == 0 {
		return &environment{targets: o.targets, apiKey: o.apiKey}, nil
	}
	env := &environment{store: "postgres"}
	if strings.HasPrefix(o.databaseURL, "sqlite://") {
		env.store = "sqlite"
	}
	var err error
	if env.dir, err = e2e.TempDir(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			env.tearDown(stderr)
		}
	}()
	bin := o.apiBin
	if bin == "" {
		fmt.Fprintln(stderr, "loadgen: building cmd/api …")
		if bin, err = e2e.Build(ctx, e2e.BuildOptions{Dir: env.dir}); err != nil {
			return nil, fmt.Errorf("%v (run loadgen from inside the riskapi module, or give --api-bin)", err)
		}
	}
	creds, err := e2e.Provision(ctx, bin, o.databaseURL, env.dir, fmt.Sprintf("loadgen %s", time.Now().UTC().Format(time.RFC3339)))
	if err != nil {
		return nil, fmt.Errorf("provision a tenant: %w", err)
	}
	env.apiKey = creds.APIKey
	for i := range o.spawn {
		dir := fmt.Sprintf("%s/instance%d", env.dir, i+1)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
		in, err := e2e.NewInstance(e2e.Config{Bin: bin, DatabaseURL: o.databaseURL, Dir: dir,
			Name: fmt.Sprintf("api%d", i+1), Lease: o.lease, Env: o.env})
		if err != nil {
			return nil, err
		}
		env.insts = append(env.insts, in)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err = in.Start(sctx)
		cancel()
		if err != nil {
			return nil, err
		}
		env.targets = append(env.targets, in.URL())
		fmt.Fprintf(stderr, "loadgen: started %s at %s\n", in.Name(), in.URL())
	}
	ok = true
	return env, nil
}

// tearDown stops spawned instances gracefully and removes the temporary directory.
// A spawned instance whose log reports a data race, a panic or errors is named.
func (env *environment) tearDown(stderr io.Writer) {
	for _, in := range env.insts {
		if err := in.Stop(); err != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", err)
		}
		races, panics, errs := in.Problems()
		if len(races)+len(panics)+len(errs) > 0 {
			fmt.Fprintf(stderr, "loadgen: %s logged %d races, %d panics, %d errors, e.g.:\n%s%s%s", in.Name(),
				len(races), len(panics), len(errs), e2e.First(races, 3), e2e.First(panics, 3), e2e.First(errs, 3))
		}
	}
	if env.dir != "" {
		os.RemoveAll(env.dir)
	}
}
