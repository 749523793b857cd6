package server

import (
	"errors"

	"github.com/riskapi/riskapi/internal/attachments"
	"github.com/riskapi/riskapi/internal/events"
	"github.com/riskapi/riskapi/internal/followup"
	"github.com/riskapi/riskapi/internal/problem"
	"github.com/riskapi/riskapi/internal/requestlog"
	"github.com/riskapi/riskapi/internal/risks"
	"github.com/riskapi/riskapi/internal/tenants"
	"github.com/riskapi/riskapi/internal/webhooks"
)

// notFound is the one table from the domains' not-found sentinels to the 404
// NOT_FOUND a client sees (docs/errors.md). Handlers return the sentinel as is;
// another tenant's row reads as absent in every store, so it lands here too.
var notFound = []struct {
	err    error
	detail string
}{
	{risks.ErrNotFound, "no such risk"},
	{attachments.ErrNotFound, "no such attachment"},
	{followup.ErrActionNotFound, "no such action"},
	{followup.ErrAcceptanceNotFound, "no such acceptance"},
	{webhooks.ErrFindingNotFound, "no risk has this finding's externalId; send finding.created first"},
	{tenants.ErrTenantNotFound, "no such tenant"},
	{tenants.ErrUserNotFound, "no such user"},
	{tenants.ErrAPIKeyNotFound, "no such API key"},
	{webhooks.ErrSourceNotFound, "no such webhook source"},
	{events.ErrNotFound, "no such event"},
	{events.ErrEndpointNotFound, "no such webhook endpoint"},
	{requestlog.ErrNotFound, "no request with this id in the log"},
	{requestlog.ErrKeyNotFound, "no live idempotency record for this key, method and path"},
}

// notFoundProblem returns the 404 problem of err's not-found sentinel, or nil.
func notFoundProblem(err error) *problem.Problem {
	for _, nf := range notFound {
		if errors.Is(err, nf.err) {
			return problem.New(problem.NotFound, "%s", nf.detail)
		}
	}
	return nil
}
