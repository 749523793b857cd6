package sdktest_test

import (
	"slices"
	"testing"

	"github.com/riskapi/riskapi/internal/problem"
	riskapi "github.com/riskapi/riskapi/sdk"
)

// TestCodesMatchTheServer: the SDK's sentinel errors match every problem code the
// server sends by its code and status. (That the SDK has a Code… constant for
// each, documented with the server's status, is checked with the other copies of
// the codes in internal/architecture.)
func TestCodesMatchTheServer(t *testing.T) {
	t.Parallel()
	for _, c := range problem.Codes() {
		got := &riskapi.Error{Status: c.Status(), Code: string(c)}
		sentinels := []*riskapi.Error{riskapi.ErrValidationFailed, riskapi.ErrIdempotencyKeyInvalid,
			riskapi.ErrIdempotencyKeyRequired, riskapi.ErrUnauthenticated, riskapi.ErrForbidden, riskapi.ErrNotFound,
			riskapi.ErrIdempotencyRequestInProgress, riskapi.ErrPayloadTooLarge, riskapi.ErrHeadersTooLarge, riskapi.ErrUnsupportedMediaType, riskapi.ErrPreconditionFailed, riskapi.ErrPreconditionRequired, riskapi.ErrRangeNotSatisfiable, riskapi.ErrIdempotencyKeyReused,
			riskapi.ErrIdempotencyUnsupportedRoute, riskapi.ErrRateLimited, riskapi.ErrInternal, riskapi.ErrStoreUnavailable,
			riskapi.ErrImportInProgress,
			riskapi.ErrConcurrencyLimited, riskapi.ErrQueryTimeout, riskapi.ErrAPIKeyExpired, riskapi.ErrIPNotAllowed,
			riskapi.ErrAPIVersionUnknown, riskapi.ErrAPIVersionMoveRefused, riskapi.ErrOwnerUserUnknown,
			riskapi.ErrSelfApproval, riskapi.ErrAcceptanceDecided}
		n := slices.IndexFunc(sentinels, func(s *riskapi.Error) bool { return got.Is(s) })
		if n < 0 && c != problem.MethodNotAllowed {
			t.Errorf("no Err… sentinel matches %s", c)
		}
	}
}
