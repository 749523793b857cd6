package e2e_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

var (
	scale = flag.Float64("e2e.scale", envScale(), "multiplies the keys, kills and outages of the crash, scale-out, fault and store-fault tests, and the due items (default: $E2E_SCALE, else 1)")
	seed  = flag.Uint64("e2e.seed", 0, "seed of the kill schedule (0: from the clock; the seed is logged)")
)

func TestMain(m *testing.M) {
	flag.Parse()
	// Every test here starts real processes, kills them and waits out their
	// recovery: the fast path (go test -short, README "Test it") leaves them to ./test.
	if testing.Short() {
		fmt.Println("internal/e2e: skipped by -short (real processes, kills, long loads); ./test runs it")
		os.Exit(0)
	}
	code := m.Run()
	e2e.RemoveBinary()
	os.Exit(code)
}

// envScale is E2E_SCALE when it is a positive number, else 1: .ci/run sets 0.5 to
// keep CI inside its time budget; the full size is the default (README, "Test it").
func envScale() float64 {
	if v, err := strconv.ParseFloat(os.Getenv("E2E_SCALE"), 64); err == nil && v > 0 {
		return v
	}
	return 1
}

// scaled returns n times -e2e.scale, at least 1.
func scaled(n int) int { return max(1, int(float64(n)**scale+0.5)) }

// newRand returns the test's random source, logging its seed.
func newRand(t *testing.T) *rand.Rand {
	s := *seed
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -e2e.seed=%d)", s, s)
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}
