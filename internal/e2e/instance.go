package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// riskapiEnv are the variables riskapi reads (internal/config). The parent's values
// are never inherited: an instance sees only what its Config says.
var riskapiEnv = []string{"ADDR", "DATABASE_URL", "DATABASE_POOLER", "DATABASE_READ_URL", "DATABASE_MAX_CONNS", "SECRET_KEY", "JWT_SECRET", "IDEMPOTENCY_TTL", "IDEMPOTENCY_LEASE",
	"IDEMPOTENCY_REQUIRED", "SWEEP_SCHEDULE", "UPLOAD_DIR", "MAX_UPLOAD_BYTES", "MAX_IMPORT_ROWS", "RATE_LIMIT_RPS", "RATE_LIMIT_BURST",
	"REDIS_URL", "TRUSTED_PROXIES", "HTTP_IDLE_TIMEOUT",
	"EVENT_TTL", "WEBHOOK_RETRY_FOR", "WEBHOOK_ALLOW_PRIVATE", "WEBHOOK_ENDPOINTS_MAX", "SCHEDULE_SPEC", "REVIEW_DUE_DAYS"}

// Config describes an instance.
type Config struct {
	// Bin is the api binary (Binary or Build). Required.
	Bin string
	// DatabaseURL is DATABASE_URL. Required.
	DatabaseURL string
	// Dir is the working directory; UPLOAD_DIR defaults to Dir/uploads. Required.
	Dir string
	// Name labels the instance in logs and errors. Optional.
	Name string
	// Lease is IDEMPOTENCY_LEASE. Optional. Default 5s.
	Lease time.Duration
	// Env adds or overrides variables ("K=V"), e.g. "SWEEP_SCHEDULE=@every 1s".
	// The defaults are ADDR=127.0.0.1:0, RATE_LIMIT_RPS=0 and the above.
	Env []string
	// StartTimeout bounds a start or restart until /readyz answers 200. Optional.
	// Default 60s.
	StartTimeout time.Duration
	// StopTimeout bounds a graceful stop before it turns into SIGKILL. Optional.
	// Default 40s (the server drains for up to 30s).
	StopTimeout time.Duration
	// MaxLogBytes caps the stderr kept in memory (the oldest is dropped). Optional.
	// Default 8 MiB.
	MaxLogBytes int
}

func (c *Config) defaults() {
	if c.Lease <= 0 {
		c.Lease = 5 * time.Second
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = 60 * time.Second
	}
	if c.StopTimeout <= 0 {
		c.StopTimeout = 40 * time.Second
	}
	if c.MaxLogBytes <= 0 {
		c.MaxLogBytes = 8 << 20
	}
	if c.Name == "" {
		c.Name = "api"
	}
}

// environ returns the process environment for extra ("K=V", later wins) on top of
// the parent's environment without riskapi's variables.
// secretKeyFor is the SECRET_KEY setting of every instance and command on
// databaseURL: they share it, as the contract asks of a deployment (each runs in a
// directory of its own, where an unset key would be generated apart).
func secretKeyFor(databaseURL string) string {
	return fmt.Sprintf("SECRET_KEY=e2e-%x", sha256.Sum256([]byte(databaseURL)))
}

func environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		inherit := true
		for _, v := range riskapiEnv {
			if name == v {
				inherit = false
			}
		}
		if inherit {
			env = append(env, kv)
		}
	}
	// A -race binary would otherwise sleep 1s on every exit.
	env = append(env, "GORACE=atexit_sleep_ms=0")
	return append(env, extra...)
}

// Instance is one riskapi server, started, killed and restarted as a real process.
// Its methods are safe for concurrent use; URL may be read while it restarts.
type Instance struct {
	cfg  Config
	log  *logBuffer
	hc   *http.Client
	mu   sync.Mutex
	proc *process // nil when not running
	addr string   // last bound address, kept across kills for same-port restarts
	gen  int      // processes started so far
}

// process is one run of the binary.
type process struct {
	cmd  *exec.Cmd
	gen  int
	addr chan string   // receives the "riskapi listening" address once
	done chan struct{} // closed once the process has exited and its stderr is drained
	err  error         // Wait's result, set before done closes
}

// NewInstance returns a stopped instance; Start starts it.
func NewInstance(cfg Config) (*Instance, error) {
	cfg.defaults()
	if cfg.Bin == "" || cfg.DatabaseURL == "" || cfg.Dir == "" {
		return nil, errors.New("e2e: Config needs Bin, DatabaseURL and Dir")
	}
	return &Instance{cfg: cfg, log: &logBuffer{max: cfg.MaxLogBytes},
		hc: &http.Client{Timeout: 5 * time.Second}}, nil
}

// URL is the base URL of the instance's last bound address, "http://127.0.0.1:PORT".
func (in *Instance) URL() string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return "http://" + in.addr
}

// Dir is the instance's working directory (Config.Dir); UPLOAD_DIR is Dir/uploads
// unless Config.Env sets it.
func (in *Instance) Dir() string { return in.cfg.Dir }

// Name is the instance's label.
func (in *Instance) Name() string { return in.cfg.Name }

// Starts is how many processes the instance has started.
func (in *Instance) Starts() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.gen
}

// Running reports whether a process is running.
func (in *Instance) Running() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.proc == nil {
		return false
	}
	select {
	case <-in.proc.done:
		return false
	default:
		return true
	}
}

// Start starts the server on a new port (ADDR=127.0.0.1:0) and waits until /readyz
// answers 200.
func (in *Instance) Start(ctx context.Context) error { return in.start(ctx, "127.0.0.1:0") }

// Restart kills the running process, if any, with SIGKILL and starts a new one on
// the same port (falling back to a new port if that one is taken meanwhile).
func (in *Instance) Restart(ctx context.Context) error {
	if err := in.Kill(); err != nil {
		return err
	}
	in.mu.Lock()
	addr := in.addr
	in.mu.Unlock()
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	err := in.start(ctx, addr)
	if err != nil && strings.Contains(err.Error(), "address already in use") {
		return in.start(ctx, "127.0.0.1:0")
	}
	return err
}

// RestartNewPort kills the running process, if any, and starts a new one on a new
// port; URL changes.
func (in *Instance) RestartNewPort(ctx context.Context) error {
	if err := in.Kill(); err != nil {
		return err
	}
	return in.Start(ctx)
}

func (in *Instance) start(ctx context.Context, addr string) error {
	in.mu.Lock()
	if in.proc != nil {
		select {
		case <-in.proc.done:
		default:
			in.mu.Unlock()
			return fmt.Errorf("%s: already running", in.cfg.Name)
		}
	}
	in.gen++
	gen := in.gen
	env := environ("ADDR="+addr, "DATABASE_URL="+in.cfg.DatabaseURL, "RATE_LIMIT_RPS=0", secretKeyFor(in.cfg.DatabaseURL),
		"IDEMPOTENCY_LEASE="+in.cfg.Lease.String(), "UPLOAD_DIR="+in.cfg.Dir+"/uploads")
	env = append(env, poolerEnv(in.cfg.DatabaseURL)...)
	env = append(env, in.cfg.Env...)
	cmd := exec.Command(in.cfg.Bin, "serve")
	cmd.Dir = in.cfg.Dir
	cmd.Env = env
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		in.mu.Unlock()
		return err
	}
	p := &process{cmd: cmd, gen: gen, addr: make(chan string, 1), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		in.mu.Unlock()
		return fmt.Errorf("%s: start: %w", in.cfg.Name, err)
	}
	in.proc = p
	in.mu.Unlock()
	in.log.printf("=== %s: process %d (pid %d) starting on %s", in.cfg.Name, gen, cmd.Process.Pid, addr)

	go func() {
		in.readLog(p, stderr)
		p.err = cmd.Wait()
		in.log.printf("=== %s: process %d exited: %v", in.cfg.Name, gen, p.err)
		close(p.done)
	}()

	deadline := time.NewTimer(in.cfg.StartTimeout)
	defer deadline.Stop()
	var bound string
	select {
	case bound = <-p.addr:
	case <-p.done:
		return fmt.Errorf("%s: process %d exited before listening (%v); log:\n%s", in.cfg.Name, gen, p.err, in.log.tail(4096))
	case <-deadline.C:
		in.Kill()
		return fmt.Errorf("%s: process %d not listening after %s; log:\n%s", in.cfg.Name, gen, in.cfg.StartTimeout, in.log.tail(4096))
	case <-ctx.Done():
		in.Kill()
		return ctx.Err()
	}
	in.mu.Lock()
	in.addr = bound
	in.mu.Unlock()
	for {
		if in.ready(ctx) {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s: process %d exited before ready (%v); log:\n%s", in.cfg.Name, gen, p.err, in.log.tail(4096))
		case <-deadline.C:
			in.Kill()
			return fmt.Errorf("%s: /readyz not 200 after %s; log:\n%s", in.cfg.Name, in.cfg.StartTimeout, in.log.tail(4096))
		case <-ctx.Done():
			in.Kill()
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (in *Instance) ready(ctx context.Context) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.URL()+"/readyz", nil)
	if err != nil {
		return false
	}
	res, err := in.hc.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// readLog keeps p's stderr and reports the "riskapi listening" address.
func (in *Instance) readLog(p *process, r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	prefix := fmt.Sprintf("[%s#%d] ", in.cfg.Name, p.gen)
	sent := false
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			in.log.write(prefix, line)
			if !sent && bytes.Contains(line, []byte(`"riskapi listening"`)) {
				var m struct {
					Msg  string `json:"msg"`
					Addr string `json:"addr"`
				}
				if json.Unmarshal(line, &m) == nil && m.Msg == "riskapi listening" && m.Addr != "" {
					p.addr <- m.Addr
					sent = true
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// Kill sends SIGKILL to the running process, if any, and waits until it is gone.
func (in *Instance) Kill() error {
	p, err := in.signal(syscall.SIGKILL, "SIGKILL", "kill")
	if p == nil {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s: process %d still running 30s after SIGKILL", in.cfg.Name, p.gen)
	}
}

// Stop stops the running process gracefully (SIGTERM: the server drains in-flight
// requests), killing it if it outlives StopTimeout. It returns the process's exit
// error: a -race server that saw a data race exits non-zero.
func (in *Instance) Stop() error {
	p, err := in.signal(syscall.SIGTERM, "SIGTERM", "stop")
	if p == nil {
		return err
	}
	select {
	case <-p.done:
		if p.err != nil {
			return fmt.Errorf("%s: process %d: %w", in.cfg.Name, p.gen, p.err)
		}
		return nil
	case <-time.After(in.cfg.StopTimeout):
		in.Kill()
		return fmt.Errorf("%s: process %d did not stop within %s after SIGTERM; killed", in.cfg.Name, p.gen, in.cfg.StopTimeout)
	}
}

// signal sends sig (named name in the log) to the running process and returns it;
// it returns nil when no process is running, or with the error (naming verb) when
// the signal could not be sent.
func (in *Instance) signal(sig syscall.Signal, name, verb string) (*process, error) {
	in.mu.Lock()
	p := in.proc
	in.mu.Unlock()
	if p == nil {
		return nil, nil
	}
	select {
	case <-p.done:
		return nil, nil
	default:
	}
	in.log.printf("=== %s: %s process %d", in.cfg.Name, name, p.gen)
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return nil, fmt.Errorf("%s: %s: %w", in.cfg.Name, verb, err)
	}
	return p, nil
}

// Logs returns the stderr of every process of this instance kept so far, each line
// prefixed with [name#process].
func (in *Instance) Logs() string { return in.log.String() }

// LogTail returns at most the last n bytes of Logs.
func (in *Instance) LogTail(n int) string { return in.log.tail(n) }

// Problems returns the log lines that report a data race, a panic or an error.
func (in *Instance) Problems() (races, panics, errorLines []string) {
	for line := range strings.Lines(in.log.String()) {
		msg := line
		if strings.HasPrefix(msg, "[") {
			if i := strings.Index(msg, "] "); i >= 0 {
				msg = msg[i+2:]
			}
		}
		switch {
		case strings.Contains(msg, "WARNING: DATA RACE"):
			races = append(races, line)
		case strings.Contains(msg, `"msg":"panic"`), strings.HasPrefix(msg, "panic:"), strings.HasPrefix(msg, "fatal error:"):
			panics = append(panics, line)
		case strings.Contains(msg, `"level":"ERROR"`):
			errorLines = append(errorLines, line)
		}
	}
	return races, panics, errorLines
}

// First returns at most the first n of lines, joined.
func First(lines []string, n int) string { return strings.Join(lines[:min(n, len(lines))], "") }

// StartT starts an instance for a test: the binary is Binary(t), the working
// directory a t.TempDir(). A cleanup kills it and fails the test if its logs report
// a data race or a panic (the logs' tail is printed then); error lines are logged.
func StartT(t testing.TB, cfg Config) *Instance {
	t.Helper()
	if cfg.Bin == "" {
		cfg.Bin = Binary(t)
	}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	in, err := NewInstance(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := in.Kill(); err != nil {
			t.Error(err)
		}
		CheckLogs(t, in)
	})
	ctx, cancel := context.WithTimeout(context.Background(), in.cfg.StartTimeout)
	defer cancel()
	if err := in.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return in
}

// CheckLogs fails t if in's logs report a data race or a panic, and logs how many
// error lines they hold (with the first few).
func CheckLogs(t testing.TB, in *Instance) {
	t.Helper()
	races, panics, errs := in.Problems()
	if len(races) > 0 || len(panics) > 0 {
		t.Errorf("%s: the server's logs report %d data races and %d panics:\n%s%s\n--- log tail:\n%s",
			in.Name(), len(races), len(panics), First(races, 5), First(panics, 5), in.LogTail(16<<10))
	}
	if len(errs) > 0 {
		t.Logf("%s: %d error lines in the server's logs, e.g.:\n%s", in.Name(), len(errs), First(errs, 5))
	}
}

// logBuffer is a size-capped, concurrency-safe log.
type logBuffer struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	dropped int
}

func (b *logBuffer) write(prefix string, line []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, prefix...)
	b.buf = append(b.buf, line...)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		b.buf = append(b.buf, '\n')
	}
	if len(b.buf) > b.max {
		// Keep the newest half, from a line start: amortised, never a copy per line.
		over := len(b.buf) - b.max/2
		if i := bytes.IndexByte(b.buf[over:], '\n'); i >= 0 {
			over += i + 1
		}
		b.dropped += over
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
}

func (b *logBuffer) printf(format string, args ...any) {
	b.write(time.Now().UTC().Format("15:04:05.000000 "), fmt.Appendf(nil, format, args...))
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dropped > 0 {
		return fmt.Sprintf("[... %d bytes dropped]\n%s", b.dropped, b.buf)
	}
	return string(b.buf)
}

func (b *logBuffer) tail(n int) string {
	s := b.String()
	if len(s) > n {
		s = s[len(s)-n:]
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return s
}
