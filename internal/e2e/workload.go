package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// WriteTestConfig configures a WriteTest.
type WriteTestConfig struct {
	// Client sends the requests. Required.
	Client *Client
	// Targets returns the base URLs of the instances, read again before every
	// attempt (an instance restarted on a new port changes its URL). Required.
	Targets func() []string
	// Keys is how many distinct Idempotency-Keys (and risks) the test writes. Required.
	Keys int
	// Clients is how many keys are in flight at once. Optional. Default 8.
	Clients int
	// Dup is how many senders send each key at the same time, each starting at a
	// different instance and retrying through all of them. Optional. Default 1.
	Dup int
	// Prefix makes keys and titles unique to the run. Required.
	Prefix string
	// Lease is the servers' IDEMPOTENCY_LEASE: a key answering 409 for longer is a
	// failure. Required.
	Lease time.Duration
}

// WriteTest sends one keyed POST /v2/risks per key (each key with a body of its own),
// retrying the same key on network errors, 409 and 503 while the caller does its
// worst to the servers, and keeps every answer. Verify then retries every key once
// more and Check compares the answers with the risks the tenant holds: one risk per
// key, none doubled, every acknowledged write present, no key blocked past the lease.
type WriteTest struct {
	cfg   WriteTestConfig
	keys  []*keyState
	queue chan int
	wg    sync.WaitGroup

	mu       sync.Mutex // guards keyState fields below, issued, problems
	issued   int
	problems []string

	// Counters, for the report. NotExecuted and Unknown count the 503s by their
	// "outcome".
	Attempts, NetErrors, InProgress, Unavailable, OtherStatus, Retries atomic.Int64
	Executed, Replayed, NotExecuted, Unknown                           atomic.Int64
}

type keyState struct {
	key, title string
	body       []byte
	acks       []ack // every 2xx answer, in order of arrival
	final      *ack  // the Verify answer
	// mayHaveRun counts the answers after which the attempt may have committed
	// without the client being told: network errors and 503 outcome "unknown".
	mayHaveRun int
	// notExecuted are the [sent, answered] spans of the attempts answered 503
	// outcome not_executed; netErrors counts the attempts without an answer.
	notExecuted [][2]time.Time
	netErrors   int
	// A run of 409 answers: from the arrival of the first to the sending of the
	// latest, the key was certainly blocked.
	streakFrom time.Time
	maxStreak  time.Duration
}

type ack struct {
	id       string
	body     []byte
	replayed bool
	phase    string
	target   string
}

// NewWriteTest prepares keys and bodies; Start sends them.
func NewWriteTest(cfg WriteTestConfig) *WriteTest {
	if cfg.Clients <= 0 {
		cfg.Clients = 8
	}
	if cfg.Dup <= 0 {
		cfg.Dup = 1
	}
	w := &WriteTest{cfg: cfg, queue: make(chan int, cfg.Keys)}
	for i := range cfg.Keys {
		title := fmt.Sprintf("%s risk %04d", cfg.Prefix, i)
		body, _ := json.Marshal(map[string]any{
			"title": title, "description": fmt.Sprintf("written by e2e run %s with key %d", cfg.Prefix, i),
			"category": "Resilience", "likelihood": 1 + i%5, "impact": 1 + (i/5)%5,
		})
		w.keys = append(w.keys, &keyState{key: fmt.Sprintf("%s-key-%04d", cfg.Prefix, i), title: title, body: body})
	}
	return w
}

// Start starts the clients; they send keys as Issue releases them, until Finish.
func (w *WriteTest) Start(ctx context.Context) {
	for range w.cfg.Clients {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for i := range w.queue {
				w.sendKey(ctx, i, "load", w.cfg.Dup)
			}
		}()
	}
}

// Issue releases the next n keys to the clients and returns how many it released.
func (w *WriteTest) Issue(n int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	k := 0
	for ; k < n && w.issued < len(w.keys); k++ {
		w.queue <- w.issued // never blocks: the queue holds every key
		w.issued++
	}
	return k
}

// Issued is how many keys have been released so far.
func (w *WriteTest) Issued() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.issued
}

// Finish releases the remaining keys and waits until every key has a 2xx answer or
// ctx (the one given to Start) ends.
func (w *WriteTest) Finish() {
	w.Issue(len(w.keys))
	close(w.queue)
	w.wg.Wait()
}

// Verify retries every key once more with its key and body, Clients at a time, each
// until it answers 2xx or ctx ends. Run it once the servers are left alone.
func (w *WriteTest) Verify(ctx context.Context) {
	next := make(chan int, len(w.keys))
	for i := range w.keys {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range w.cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				w.sendKey(ctx, i, "final", 1)
			}
		}()
	}
	wg.Wait()
}

// sendKey sends key i from dup concurrent senders and returns when all have a 2xx
// answer, an answer that must not be retried, or ctx ends.
func (w *WriteTest) sendKey(ctx context.Context, i int, phase string, dup int) {
	start := rand.IntN(1 << 20)
	if dup == 1 {
		w.sendUntilDone(ctx, i, phase, start)
		return
	}
	var wg sync.WaitGroup
	for s := range dup {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.sendUntilDone(ctx, i, phase, start+s)
		}()
	}
	wg.Wait()
}

func (w *WriteTest) sendUntilDone(ctx context.Context, i int, phase string, start int) {
	k := w.keys[i]
	var last Answer
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			w.problemf("key %s (%s): no 2xx answer before the deadline after %d attempts; last answer: %s", k.key, phase, attempt, last)
			return
		}
		targets := w.cfg.Targets()
		target := targets[(start+attempt)%len(targets)]
		a := w.cfg.Client.CreateRisk(ctx, target, k.key, k.body)
		w.Attempts.Add(1)
		last = a
		switch {
		case a.Err != nil:
			if ctx.Err() == nil {
				w.NetErrors.Add(1)
			}
			w.mayHaveRun(k)
			w.mu.Lock()
			k.netErrors++
			w.mu.Unlock()
		case a.Status >= 200 && a.Status < 300:
			w.acked(k, a, phase, target)
			return
		case a.Status == http.StatusConflict && a.Code == "IDEMPOTENCY_REQUEST_IN_PROGRESS":
			w.InProgress.Add(1)
			w.blocked(k, a)
			w.checkRetryAfter(k, a)
		case a.Status == http.StatusServiceUnavailable:
			w.Unavailable.Add(1)
			w.checkRetryAfter(k, a)
			switch a.Outcome {
			case "not_executed":
				w.NotExecuted.Add(1)
				w.mu.Lock()
				k.notExecuted = append(k.notExecuted, [2]time.Time{a.Sent, a.Sent.Add(a.Latency)})
				w.mu.Unlock()
			case "unknown":
				w.Unknown.Add(1)
				w.mayHaveRun(k)
			default:
				w.problemf("key %s (%s): 503 without outcome not_executed|unknown: %s", k.key, phase, a)
			}
		case a.Status == http.StatusTooManyRequests:
			w.Unavailable.Add(1)
			w.checkRetryAfter(k, a)
		default:
			w.OtherStatus.Add(1)
			w.problemf("key %s (%s) via %s: unexpected answer %s", k.key, phase, target, a)
			w.mu.Lock()
			k.streakFrom = time.Time{}
			w.mu.Unlock()
			return
		}
		w.Retries.Add(1)
		// Short jittered exponential backoff: 5–10ms, doubling to at most 80–160ms.
		b := 10 * time.Millisecond << min(attempt, 4)
		if sleep(ctx, b/2+rand.N(b/2)) != nil {
			continue // reported at the top of the loop
		}
	}
}

// UntrueNotExecuted returns, for the keys whose risk was created at createdAt[title]
// (the server's clock, read from the database) within an attempt answered 503
// not_executed, what it broke: the attempt committed. Attempts of one key run one
// after another (Dup 1), so the one whose span holds the creation time made it —
// unless an attempt before had no answer and its server kept running; keys with a
// network error are left out for that reason.
func (w *WriteTest) UntrueNotExecuted(createdAt map[string]time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var untrue []string
	for _, k := range w.keys {
		at, ok := createdAt[k.title]
		if !ok || k.netErrors > 0 {
			continue
		}
		for _, span := range k.notExecuted {
			if !at.Before(span[0]) && !at.After(span[1]) {
				untrue = append(untrue, fmt.Sprintf("UNTRUE: key %s committed at %s by the attempt sent at %s and answered "+
					"503 not_executed", k.key, at.Format(time.RFC3339Nano), span[0].Format(time.RFC3339Nano)))
			}
		}
	}
	return untrue
}

func (w *WriteTest) mayHaveRun(k *keyState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k.mayHaveRun++
}

func (w *WriteTest) checkRetryAfter(k *keyState, a Answer) {
	if n, err := strconv.Atoi(a.RetryAfter); err != nil || n < 1 {
		w.problemf("key %s: %d %s without a Retry-After of whole seconds (%q)", k.key, a.Status, a.Code, a.RetryAfter)
	}
}

func (w *WriteTest) blocked(k *keyState, a Answer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k.streakFrom.IsZero() {
		k.streakFrom = a.Sent.Add(a.Latency)
		return
	}
	if d := a.Sent.Sub(k.streakFrom); d > k.maxStreak {
		k.maxStreak = d
	}
}

func (w *WriteTest) acked(k *keyState, a Answer, phase, target string) {
	replayed := a.Replayed == "true"
	if replayed {
		w.Replayed.Add(1)
	} else {
		w.Executed.Add(1)
	}
	id, err := RiskID(a.Body)
	if err != nil {
		w.problemf("key %s (%s): 2xx with a body that is not a risk: %v", k.key, phase, err)
	}
	if a.Replayed != "true" && a.Replayed != "false" {
		w.problemf("key %s (%s): 2xx without Idempotent-Replayed true/false: %q", k.key, phase, a.Replayed)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	k.streakFrom = time.Time{}
	ac := ack{id: id, body: a.Body, replayed: replayed, phase: phase, target: target}
	if phase == "final" {
		k.final = &ac
	} else {
		k.acks = append(k.acks, ac)
	}
}

func (w *WriteTest) problemf(format string, args ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.problems) < 1000 {
		w.problems = append(w.problems, fmt.Sprintf(format, args...))
	}
}

// Report is the outcome of a WriteTest.
type Report struct {
	Keys, Attempts, NetErrors, InProgress, Unavailable, OtherStatus, Retries int64
	// Executed and Replayed count 2xx answers by Idempotent-Replayed, all phases;
	// NotExecuted and Unknown count 503 answers by their outcome.
	Executed, Replayed, NotExecuted, Unknown int64
	// AckedBeforeFinal: keys with a 2xx before Verify; FinalExecuted: keys whose
	// Verify answer ran the request (no earlier attempt had committed).
	AckedBeforeFinal, FinalExecuted int
	Risks                           int           // risks in the tenant
	MaxBlocked                      time.Duration // longest run of 409s on one key
	// Problems lists every broken guarantee but the losses; empty and no Losses
	// means the run passed.
	Problems []string
	// Lost counts the keys whose acknowledged risk the tenant does not hold, and
	// Losses says what that broke for each (the loss, and the retry that then ran the
	// write again). A store that lost committed transactions (an asynchronous
	// standby promoted) shows here; every other failure is in Problems.
	Lost   int
	Losses []string
}

func (r Report) String() string {
	return fmt.Sprintf("keys=%d risks=%d requests=%d retries=%d network-errors=%d 409=%d 503/429=%d (503 not_executed=%d unknown=%d) other=%d "+
		"2xx-executed=%d 2xx-replayed=%d acked-before-final=%d final-executed=%d max-409-run=%s lost=%d problems=%d",
		r.Keys, r.Risks, r.Attempts, r.Retries, r.NetErrors, r.InProgress, r.Unavailable, r.NotExecuted, r.Unknown, r.OtherStatus,
		r.Executed, r.Replayed, r.AckedBeforeFinal, r.FinalExecuted, r.MaxBlocked.Round(time.Millisecond), r.Lost, len(r.Problems))
}

// Check lists the tenant's risks through base and checks every guarantee against the
// answers collected: exactly one risk per key and none doubled; every 2xx answer of a
// key identical (same risk, byte-identical body) and at most one of them executed;
// every acknowledged risk present; each key answered 2xx by Verify; no key blocked by
// 409 for longer than the lease; every 409 and 503 with Retry-After, and a key whose
// write committed without any 2xx saying so (every 2xx a replay) answered at least
// once with a network error or a 503 outcome "unknown" — never only "not_executed".
func (w *WriteTest) Check(ctx context.Context, base string) Report {
	r := Report{Keys: int64(len(w.keys)), Attempts: w.Attempts.Load(), NetErrors: w.NetErrors.Load(),
		InProgress: w.InProgress.Load(), Unavailable: w.Unavailable.Load(), OtherStatus: w.OtherStatus.Load(),
		Retries: w.Retries.Load(), Executed: w.Executed.Load(), Replayed: w.Replayed.Load(),
		NotExecuted: w.NotExecuted.Load(), Unknown: w.Unknown.Load()}
	var problems []string
	add := func(format string, args ...any) {
		if len(problems) < 200 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	risks, err := w.cfg.Client.ListRisks(ctx, base, len(w.keys)/100+100)
	if err != nil {
		add("list risks: %v", err)
	}
	r.Risks = len(risks)
	byTitle := map[string][]string{}
	ids := map[string]bool{}
	for _, rk := range risks {
		byTitle[rk.Title] = append(byTitle[rk.Title], rk.ID)
		ids[rk.ID] = true
	}
	if err == nil && len(risks) != len(w.keys) {
		add("the tenant holds %d risks for %d distinct keys", len(risks), len(w.keys))
	}
	for title, ids := range byTitle {
		if len(ids) > 1 {
			add("DOUBLED: %d risks titled %q: %s", len(ids), title, strings.Join(ids, ", "))
		}
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	problems = append(problems, w.problems...)
	for _, k := range w.keys {
		w.checkKey(k, &r, ids, byTitle, err == nil, add)
	}
	r.Problems = problems
	return r
}

// checkKey checks one key's answers (see Check) and adds what it finds broken;
// listed says whether the tenant's risks (ids, byTitle) could be listed.
func (w *WriteTest) checkKey(k *keyState, r *Report, ids map[string]bool, byTitle map[string][]string, listed bool,
	add func(format string, args ...any)) {
	if k.maxStreak > r.MaxBlocked {
		r.MaxBlocked = k.maxStreak
	}
	if k.maxStreak > w.cfg.Lease {
		add("BLOCKED: key %s answered 409 for %s, longer than the lease %s", k.key, k.maxStreak.Round(time.Millisecond), w.cfg.Lease)
	}
	all := k.acks
	if len(k.acks) > 0 {
		r.AckedBeforeFinal++
	}
	if k.final == nil {
		add("key %s: no 2xx answer in the final retry", k.key)
	} else {
		all = append(all[:len(all):len(all)], *k.final)
		if !k.final.replayed {
			r.FinalExecuted++
		}
	}
	if listed && len(all) > 0 && !ids[all[0].id] {
		// The first acknowledged risk is gone: what follows from it is the loss.
		r.Lost++
		add = func(format string, args ...any) { r.Losses = append(r.Losses, fmt.Sprintf(format, args...)) }
	}
	executed := 0
	for _, a := range all {
		if !a.replayed {
			executed++
		}
		if !bytes.Equal(a.body, all[0].body) {
			add("key %s: 2xx answers differ: %s (%s via %s) vs %s (%s via %s)", k.key,
				all[0].id, all[0].phase, all[0].target, a.id, a.phase, a.target)
		}
	}
	if executed > 1 {
		add("DOUBLED: key %s executed %d times (Idempotent-Replayed: false on %d 2xx answers)", k.key, executed, executed)
	}
	if executed == 0 && len(all) > 0 && k.mayHaveRun == 0 {
		// The attempt that committed told its client something else: only a
		// network error or a 503 "unknown" may hide a committed write.
		add("UNTRUE: key %s committed (every 2xx is a replay), yet no attempt was answered with a network error or a 503 "+
			"outcome unknown: a 503 not_executed hid a committed write", k.key)
	}
	if len(all) == 0 || !listed {
		return
	}
	if !ids[all[0].id] {
		add("LOST: key %s was acknowledged with %s, which the tenant does not hold", k.key, all[0].id)
	}
	if got := byTitle[k.title]; len(got) == 1 && got[0] != all[0].id {
		add("key %s: acknowledged %s but its title belongs to %s", k.key, all[0].id, got[0])
	} else if len(got) == 0 {
		add("LOST: no risk titled %q (key %s)", k.title, k.key)
	}
}
