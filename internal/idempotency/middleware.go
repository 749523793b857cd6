package idempotency

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/requestid"
)

// engine is the configured middleware.
type engine struct {
	Config
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func (e *engine) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		// GET and HEAD ignore the header and create no record.
		if e.Skipper(c) || !isWrite(req.Method) {
			return next(c)
		}
		key, status := parseKey(req.Header)
		policy := e.Policy(c)
		if policy == Unsupported {
			if status != keyAbsent {
				return problem.New(problem.IdempotencyUnsupportedRoute,
					"%s %s does not support Idempotency-Key; send the request without it", req.Method, req.URL.Path)
			}
			return next(c)
		}
		switch status {
		case keyInvalid:
			return problem.New(problem.IdempotencyKeyInvalid,
				"Idempotency-Key must be sent once, as 8 to 128 characters from A-Z a-z 0-9 . _ -")
		case keyAbsent:
			if policy == Required || e.Required {
				return problem.New(problem.IdempotencyKeyRequired,
					"this write needs an Idempotency-Key header (8 to 128 characters from A-Z a-z 0-9 . _ -)")
			}
			return next(c)
		}
		scope, err := e.Scope(c)
		if err != nil {
			return err
		}
		rk := RecordKey{Scope: scope, Method: req.Method, Path: req.URL.Path, Key: key}
		var outcome Outcome
		if e.Fingerprinter.Streams(req) {
			outcome, err = e.handleStreamed(c, next, rk)
		} else {
			outcome, err = e.handleBuffered(c, next, rk)
		}
		if outcome == outcomeNone {
			return err
		}
		// The outcome goes to OnOutcome, not to a log line of its own: riskapi logs
		// it on the request's one access line (internal/server).
		e.report(c, key, outcome)
		return err
	}
}

// outcomeNone: the request was refused before its record counted (its body could
// not be fingerprinted); it is not reported as a keyed request's outcome.
const outcomeNone Outcome = ""

// handleBuffered runs the state machine of docs/idempotency.md (States) for a keyed
// request whose body is buffered: fingerprint first (a body that cannot be read is
// answered before any record is touched), then the store reports what it saw
// (Lookup, then Reserve unless a live COMPLETE record answered), decide answers, and
// only a run changes the record.
func (e *engine) handleBuffered(c echo.Context, next echo.HandlerFunc, rk RecordKey) (Outcome, error) {
	fp, err := e.Fingerprinter.Fingerprint(c, HashKeep)
	if err != nil {
		return outcomeNone, err
	}
	now := e.Now()
	rec, err := e.lookup(c, rk)
	if err != nil {
		return OutcomeStoreUnavailable, err
	}
	// A live COMPLETE record answers without a lock or a transaction (answered).
	if v, ok := answered(rec, fp, now); ok {
		return e.answer(c, v, rec)
	}
	return e.reserve(c, next, rk, fp)
}

// handleStreamed is handleBuffered for a streamed body (Fingerprinter.Streams),
// which may be large: the key is looked up before a byte of the body is read, so
// that nothing is kept of a body the record or the lock answers
// (docs/idempotency.md, Large bodies). A live COMPLETE record — read when the
// request arrived, and trusted over the lock as decide does — answers after the
// body is hashed in HashDiscard mode; a key another request holds is refused with
// 409 at once, its body unread; only a request that may run has its body kept
// (HashKeep), and then Reserve decides, as for any other body.
func (e *engine) handleStreamed(c echo.Context, next echo.HandlerFunc, rk RecordKey) (Outcome, error) {
	now := e.Now()
	rec, err := e.lookup(c, rk)
	if err != nil {
		return OutcomeStoreUnavailable, err
	}
	if settles(rec, now) {
		fp, err := e.Fingerprinter.Fingerprint(c, HashDiscard)
		if err != nil {
			return outcomeNone, err
		}
		v, _ := answered(rec, fp, now)
		return e.answer(c, v, rec)
	}
	held, err := e.held(c, rk)
	if err != nil {
		return OutcomeStoreUnavailable, err
	}
	if held {
		return e.answer(c, inProgress, nil)
	}
	fp, err := e.Fingerprinter.Fingerprint(c, HashKeep)
	if err != nil {
		return outcomeNone, err
	}
	return e.reserve(c, next, rk, fp)
}

// lookup reads rk's record (Store.Lookup) under a deadline of its own, detached from
// the client like the handler; a failure is already the 503 to answer.
func (e *engine) lookup(c echo.Context, rk RecordKey) (*Record, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), e.HandlerTimeout)
	defer cancel()
	rec, err := e.Store.Lookup(ctx, rk)
	if err != nil {
		return nil, e.unavailable(c, "lookup", err, problem.NotExecuted)
	}
	return rec, nil
}

// held asks Store.Held as lookup asks Store.Lookup.
func (e *engine) held(c echo.Context, rk RecordKey) (bool, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.Request().Context()), e.HandlerTimeout)
	defer cancel()
	held, err := e.Store.Held(ctx, rk)
	if err != nil {
		return false, e.unavailable(c, "held", err, problem.NotExecuted)
	}
	return held, nil
}

// reserve takes rk's reservation (Store.Reserve), lets decide answer from what it
// saw, and runs the handler when decide says so. Its deadline starts here, after
// the body was read: a slow upload never eats into the handler's time.
func (e *engine) reserve(c echo.Context, next echo.HandlerFunc, rk RecordKey, fp string) (Outcome, error) {
	ctx := c.Request().Context()
	now := e.Now()
	// The handler is detached from the client: a client that hangs up mid-request
	// neither aborts a write half-way nor loses one — its retry finds the record.
	// Its deadline stays under the lease, so a live request is never abandoned.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.HandlerTimeout)
	defer cancel()
	obs, err := e.Store.Reserve(hctx, rk)
	if err != nil {
		return OutcomeStoreUnavailable, e.unavailable(c, "reserve", err, problem.NotExecuted)
	}
	if v := decide(obs, fp, now); v != run {
		if obs.Held != nil {
			e.release(ctx, obs.Held)
		}
		return e.answer(c, v, obs.Record)
	}
	tctx, err := obs.Held.Begin(hctx)
	if err != nil {
		e.release(ctx, obs.Held)
		return OutcomeStoreUnavailable, e.unavailable(c, "begin", err, problem.NotExecuted)
	}
	outcome := OutcomeExecuted
	if obs.Record != nil {
		outcome = OutcomeTakenOver
	}
	return e.execute(c, next, obs.Held, tctx, &Record{RecordKey: rk, Fingerprint: fp}, outcome, hctx)
}

// answer answers a request decide did not let run: a replay of rec, 422 or 409.
func (e *engine) answer(c echo.Context, v verdict, rec *Record) (Outcome, error) {
	switch v {
	case replay:
		return e.replay(c, rec)
	case keyReused:
		return OutcomeKeyReused, problem.New(problem.IdempotencyKeyReused,
			"this Idempotency-Key was already used on this method and path with a different query, body (or body Content-Type) or API version (Riskapi-Version: a request without it is read in the account's pinned version); use a new key for a new request")
	}
	return OutcomeInProgress, &problem.Problem{Code: problem.IdempotencyRequestInProgress, RetryAfter: e.RetryAfter,
		Detail: "a request with this Idempotency-Key is still being processed; retry after the Retry-After delay"}
}

// replay answers with rec's stored response, byte for byte. It changes nothing.
func (e *engine) replay(c echo.Context, rec *Record) (Outcome, error) {
	w := c.Response()
	if rec.ContentType != "" {
		w.Header().Set(echo.HeaderContentType, rec.ContentType)
	}
	for k, v := range rec.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set(HeaderReplayed, "true")
	w.WriteHeader(rec.StatusCode)
	if len(rec.Body) > 0 {
		if _, err := w.Write(rec.Body); err != nil {
			return OutcomeReplayed, err
		}
	}
	return OutcomeReplayed, nil
}

// execute runs the handler inside the reservation's transaction (tctx) and settles
// the record; hctx is the request's deadline without the transaction.
func (e *engine) execute(c echo.Context, next echo.HandlerFunc, res Reservation, tctx context.Context, rec *Record, outcome Outcome, hctx context.Context) (_ Outcome, err error) {
	origReq := c.Request()
	rec.RequestID = requestid.From(origReq.Context())
	resp := c.Response()
	origWriter := resp.Writer
	buf := newRecorder()
	resp.Writer = buf
	c.SetRequest(origReq.WithContext(tctx))
	restore := func() {
		resp.Writer = origWriter
		c.SetRequest(origReq)
	}

	settled := false
	defer func() {
		if settled {
			return
		}
		// A panic in the handler: undo its writes, mark FAILED, let Recover answer.
		p := recover()
		restore()
		e.fail(hctx, res, rec)
		origWriter.Header().Set(HeaderReplayed, "false")
		e.report(c, rec.Key, OutcomeFailed)
		if p != nil {
			panic(p)
		}
	}()
	herr := next(c)
	settled = true
	restore()

	if herr == nil && buf.status >= 200 && buf.status < 300 {
		rec.State = StateComplete
		rec.StatusCode = buf.status
		rec.ContentType = buf.header.Get(echo.HeaderContentType)
		rec.Headers = e.kept(buf.header)
		rec.Body = buf.body.Bytes()
		rec.CreatedAt = e.Now().UTC()
		rec.ExpiresAt = rec.CreatedAt.Add(e.TTL)
		if err := res.Complete(hctx, rec); err != nil {
			// Nothing was sent: the client's retry with the same key finds either the
			// committed record (replay) or nothing (runs again). Never both. Whether
			// anything was done is known unless the connection died during COMMIT.
			resp.Committed = false
			outcome := problem.NotExecuted
			if errors.Is(err, ErrOutcomeUnknown) {
				outcome = problem.OutcomeUnknown
			}
			return OutcomeStoreUnavailable, e.unavailable(c, "complete", err, outcome)
		}
		buf.flushTo(origWriter, "false")
		return outcome, nil
	}

	e.fail(hctx, res, rec)
	// The original error reaches the client unchanged, marked as a run request.
	origWriter.Header().Set(HeaderReplayed, "false")
	if buf.status != 0 {
		buf.flushTo(origWriter, "false")
	}
	return OutcomeFailed, herr
}

// kept returns the Config.KeepHeaders that h carries, nil if none.
func (e *engine) kept(h http.Header) map[string]string {
	var out map[string]string
	for _, k := range e.KeepHeaders {
		if v := h.Get(k); v != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// report counts what the engine did with a keyed request and tells OnOutcome.
func (e *engine) report(c echo.Context, key string, o Outcome) {
	e.Metrics.outcome(o)
	if e.OnOutcome != nil {
		e.OnOutcome(c, key, o)
	}
}

// fail rolls the handler's writes back and marks the record FAILED. A failure to mark
// it is only logged: FAILED and absent behave the same, so the client's error stands.
func (e *engine) fail(ctx context.Context, res Reservation, rec *Record) {
	e.release(ctx, res)
	rec.State = StateFailed
	rec.StatusCode, rec.ContentType, rec.Headers, rec.Body = 0, "", nil, nil
	rec.CreatedAt = e.Now().UTC()
	rec.ExpiresAt = rec.CreatedAt.Add(e.TTL)
	if err := e.Store.MarkFailed(ctx, rec, rec.CreatedAt); err != nil {
		e.Logger.WarnContext(ctx, "idempotency: could not mark record failed", slog.String("error", err.Error()))
	}
}

// release frees a reservation; a failure is only logged, the store having discarded
// the connection (its transaction and lock die with it).
func (e *engine) release(ctx context.Context, res Reservation) {
	if err := res.Release(); err != nil {
		e.Logger.WarnContext(ctx, "idempotency: rollback failed", slog.String("error", err.Error()))
	}
}

// unavailable fails closed: without its record a keyed request must not run. outcome
// says what the client may assume (docs/idempotency.md, "When the store fails").
func (e *engine) unavailable(c echo.Context, op string, err error, outcome problem.Outcome) error {
	e.Logger.ErrorContext(c.Request().Context(), "idempotency store failed", slog.String("op", op),
		slog.String("outcome", string(outcome)), slog.String("error", err.Error()))
	detail := fmt.Sprintf("the idempotency store could not be reached and nothing was done; "+
		"retry with the same Idempotency-Key after %s", e.RetryAfter)
	if outcome == problem.OutcomeUnknown {
		detail = fmt.Sprintf("the store's connection was lost while this request was being committed: it may or may not have been done. "+
			"Retry with the same Idempotency-Key after %s (if it was done, its response is replayed and nothing is done twice), "+
			"or look the key up; never retry it under a new key", e.RetryAfter)
	}
	return &problem.Problem{Code: problem.StoreUnavailable, RetryAfter: e.RetryAfter, Outcome: outcome, Detail: detail}
}
