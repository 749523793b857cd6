package webhooks

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/riskapi/riskapi/internal/changes"
	"github.com/riskapi/riskapi/internal/ids"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/risks"
)

// EventType is what a delivery reports.
type EventType string

// The event types of the contract.
const (
	FindingCreated EventType = "finding.created"
	FindingUpdated EventType = "finding.updated"
)

// Event is one delivery's content.
type Event struct {
	// ID is the sender's event ID (1–200 characters); redeliveries repeat it.
	ID string
	// Type says what happened; Validate refuses types other than the two above.
	Type EventType
	// ExternalID is the sender's ID of the finding (1–200 characters), kept on the
	// risk to find it again.
	ExternalID string
	// Change holds the risk fields the event gives; nil fields are not given.
	Change risks.Update
}

// ErrFindingNotFound: a finding.updated event names an externalId no risk of the
// tenant carries. The event is not recorded, so a redelivery after the creating event
// is processed.
var ErrFindingNotFound = errors.New("no risk with that externalId")

// Service receives events and manages sources.
type Service struct {
	store Store
	risks *risks.Service
	now   func() time.Time
}

// NewService returns a Service over store, writing risks through rs (the same
// writes as the API's, so each records its change once); now may be nil (time.Now).
func NewService(store Store, rs *risks.Service, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, risks: rs, now: now}
}

// CreateSource creates a source named name for tenantID (whose existence the caller
// checked) and returns it with its secret. Errors: ErrInvalidSourceName,
// ErrSourceExists.
func (s *Service) CreateSource(ctx context.Context, tenantID, name string) (*Source, error) {
	src, err := NewSource(tenantID, name, s.now().UTC().Truncate(time.Microsecond))
	if err != nil {
		return nil, err
	}
	if err := s.store.CreateSource(ctx, src); err != nil {
		return nil, err
	}
	return src, nil
}

// Sources lists the tenant's sources newest first (Store.Sources), without their
// secrets.
func (s *Service) Sources(ctx context.Context, tenantID, before string, limit int) ([]*Source, bool, error) {
	return s.store.Sources(ctx, tenantID, before, limit)
}

// DeleteSource deletes the tenant's source id: deliveries signed with its secret get
// 401 from the next request on. Errors: ErrSourceNotFound.
func (s *Service) DeleteSource(ctx context.Context, tenantID, id string) error {
	return s.store.DeleteSource(ctx, tenantID, id)
}

// Source returns the source named name. Errors: ErrSourceNotFound.
func (s *Service) Source(ctx context.Context, name string) (*Source, error) {
	if !ValidSourceName(name) {
		return nil, ErrSourceNotFound
	}
	return s.store.SourceByName(ctx, name)
}

// Validate checks ev's envelope. Errors: *problem.Problem VALIDATION_FAILED naming
// "id", "type" or "data/externalId".
func (ev *Event) Validate() error {
	var errs []problem.FieldError
	text := func(field, v string) {
		if n := utf8.RuneCountInString(v); n < 1 || n > 200 || !utf8.ValidString(v) {
			errs = append(errs, problem.FieldError{Field: field, Detail: "must be 1–200 characters"})
		}
	}
	text("id", ev.ID)
	if ev.Type != FindingCreated && ev.Type != FindingUpdated {
		errs = append(errs, problem.FieldError{Field: "type", Detail: "must be finding.created or finding.updated"})
	}
	text("data/externalId", ev.ExternalID)
	if p := problem.Fields(errs); p != nil {
		return p
	}
	return nil
}

// Receive processes ev from src exactly once: the event ID is recorded in the same
// transaction as the risk it creates or changes, so a crash leaves both or neither,
// and a redelivery finds the record and changes nothing (duplicate true).
//
// finding.created creates a risk with the event's fields and externalId — or, when
// the tenant has one with that externalId already, changes it like finding.updated,
// so that a sender that re-sends a creation under a new event ID does no harm.
// finding.updated changes the fields the event gives.
//
// Errors: ErrFindingNotFound; *problem.Problem VALIDATION_FAILED from the risk's
// validation (field names as in the risks domain); store errors.
func (s *Service) Receive(ctx context.Context, src *Source, ev Event) (duplicate bool, err error) {
	if err := ev.Validate(); err != nil {
		return false, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	ctx = changes.WithActor(ctx, changes.Actor{Type: changes.ActorWebhookSource, ID: src.ID})
	err = s.store.InTx(ctx, func(ctx context.Context) error {
		first, err := s.store.RecordEvent(ctx, src.ID, ev.ID, now)
		if err != nil {
			return err
		}
		if !first {
			duplicate = true
			return nil
		}
		if err := s.store.LockFinding(ctx, src.TenantID, ev.ExternalID); err != nil {
			return err
		}
		return s.apply(ctx, src.TenantID, ev, now)
	})
	return duplicate, err
}

func (s *Service) apply(ctx context.Context, tenantID string, ev Event, now time.Time) error {
	r, err := s.risks.Store.GetByExternalID(ctx, tenantID, ev.ExternalID)
	switch {
	case errors.Is(err, risks.ErrNotFound) && ev.Type == FindingCreated:
		r, err := risks.New(ids.New(ids.Risk), tenantID, ev.Change.Fields(), now)
		if err != nil {
			return err
		}
		ext := ev.ExternalID
		r.ExternalID = &ext
		err = s.risks.Create(ctx, r)
		if err != nil && s.risks.ImportPending(tenantID) {
			// The external ID may be a row of the tenant's import, written but not
			// yet published (SQLite): the sender's retry after it updates that risk.
			return risks.ImportInProgress("an import of this tenant's risks is being written and may hold this finding's externalId; retry when it has finished")
		}
		return err
	case errors.Is(err, risks.ErrNotFound):
		return ErrFindingNotFound
	case err != nil:
		return fmt.Errorf("find risk of finding: %w", err)
	}
	// The service reads the risk again with its row locked: LockFinding keeps other
	// deliveries out, but a PATCH through the API may be changing the same risk, and
	// its change must stay.
	_, err = s.risks.Update(ctx, tenantID, r.ID, nil, func(r *risks.Risk) error { return r.Apply(ev.Change, now) })
	if errors.Is(err, risks.ErrNotFound) {
		return ErrFindingNotFound
	}
	return err
}
