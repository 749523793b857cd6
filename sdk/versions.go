package riskapi

import (
	"context"
	"encoding/json"
	"errors"
)

// StaleRiskError is the 412 PRECONDITION_FAILED of a risk write whose
// Params.IfMatch named a version the risk no longer has: someone else changed
// it since it was read. Nothing was changed. Current is the risk as stored
// now; redo the change on it and send it with Current.ETag(), or let Modify
// do so.
//
// errors.Is(err, ErrPreconditionFailed) holds for it too.
type StaleRiskError struct {
	// Err is the answer itself: status, code, detail, request id.
	Err *Error
	// Current is the risk as stored when the write was refused.
	Current *Risk
}

// Error returns the answer's message (Error.Error).
func (e *StaleRiskError) Error() string { return e.Err.Error() }

// Unwrap returns Err, so errors.Is and errors.As see it.
func (e *StaleRiskError) Unwrap() error { return e.Err }

// staleRisk turns a 412 with a "current" risk into a *StaleRiskError; other
// errors pass unchanged.
func staleRisk(err error) error {
	var apiErr *Error
	if !errors.As(err, &apiErr) || apiErr.Code != CodePreconditionFailed {
		return err
	}
	var body struct {
		Current *Risk `json:"current"`
	}
	if json.Unmarshal(apiErr.Body, &body) != nil || body.Current == nil {
		return err
	}
	return &StaleRiskError{Err: apiErr, Current: body.Current}
}

// MaxModifyAttempts bounds how many writes Modify tries before it returns the
// last *StaleRiskError: each refused write means another writer changed the
// risk in between.
const MaxModifyAttempts = 5

// Modify is the safe read-change-write of one risk: it reads the risk, asks
// change for the update to make to it, and sends that with If-Match of the
// version read. When another writer changed the risk in between (412), it
// calls change again on the risk as stored now — the server sends it with
// the refusal, so no extra read — and tries again, at most
// MaxModifyAttempts writes. Nobody's change is overwritten unseen: change
// always decides on the latest version.
//
//	r, err := c.Risks.Modify(ctx, id, func(r *riskapi.Risk) (*riskapi.RiskUpdateParams, error) {
//		title := strings.TrimSpace(r.Title)
//		return &riskapi.RiskUpdateParams{Title: &title}, nil
//	})
//
// change must not keep the params it returns between calls; its
// Params.IfMatch is set by Modify. An error from change stops Modify and is
// returned as is. Errors: those of Get and Update; *StaleRiskError when every
// attempt found a newer version.
func (s *RisksService) Modify(ctx context.Context, id string, change func(*Risk) (*RiskUpdateParams, error)) (*Risk, error) {
	r, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		p, err := change(r)
		if err != nil {
			return nil, err
		}
		if p == nil {
			p = &RiskUpdateParams{}
		}
		p.IfMatch = r.ETag()
		updated, err := s.Update(ctx, id, p)
		var stale *StaleRiskError
		if !errors.As(err, &stale) || attempt >= MaxModifyAttempts {
			return updated, err
		}
		r = stale.Current
	}
}
