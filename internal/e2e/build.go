package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// APIPackage is the import path of riskapi's binary.
const APIPackage = "github.com/riskapi/riskapi/cmd/api"

// EnvRace=1 makes Binary build the api with the race detector, so that a data race in
// the server under real load fails the test through its logs (StartT's cleanup).
// Off by default even under go test -race: a -race server starts and serves several
// times slower (1–2s per restart on a busy 2-vCPU machine), which puts the
// kill-and-restart tests over their CI budget when CI is loaded; the router's own
// tests run it in-process under -race.
const EnvRace = "E2E_RACE"

// BuildOptions tune Build.
type BuildOptions struct {
	// Dir receives the binary. Required.
	Dir string
	// Race builds with -race.
	Race bool
	// Timeout bounds the build. Optional. Default 5 minutes.
	Timeout time.Duration
}

// Build compiles cmd/api into opts.Dir and returns the binary's path. It must run
// inside the riskapi module (the go command resolves APIPackage from the working
// directory); the build cache makes repeated builds cheap.
func Build(ctx context.Context, opts BuildOptions) (string, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	gobin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("build api: the go command is not on PATH: %w", err)
	}
	bin := filepath.Join(opts.Dir, "api")
	args := []string{"build", "-o", bin}
	if opts.Race {
		args = append(args, "-race")
	}
	args = append(args, APIPackage)
	cmd := exec.CommandContext(ctx, gobin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
}

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Binary returns the api binary, built once per test binary into a temporary
// directory (RemoveBinary, from TestMain, deletes it).
func Binary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "riskapi-e2e-bin-")
		if buildErr != nil {
			return
		}
		race := os.Getenv(EnvRace) == "1"
		start := time.Now()
		buildBin, buildErr = Build(context.Background(), BuildOptions{Dir: buildDir, Race: race})
		if buildErr == nil {
			tb.Logf("built %s (race=%v) in %s", buildBin, race, time.Since(start).Round(time.Millisecond))
		}
	})
	if buildErr != nil {
		tb.Fatalf("build the api binary: %v", buildErr)
	}
	return buildBin
}

// RemoveBinary deletes the directory Binary built into. Call it from TestMain after
// m.Run.
func RemoveBinary() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}
