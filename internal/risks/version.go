package risks

import (
	"errors"
	"fmt"
)

// IfMatch is a write's precondition on the stored version (an HTTP If-Match): the
// write applies only when it reports true for the risk's version. nil is no
// precondition.
type IfMatch func(version int64) bool

// Holds reports whether a risk at version v meets m.
func (m IfMatch) Holds(v int64) bool { return m == nil || m(v) }

// StaleError is the refusal of a write whose IfMatch does not hold: Current is the
// risk as stored now, and nothing was changed.
type StaleError struct {
	Current *Risk
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("risk %s is at version %d, which the write's precondition does not name", e.Current.ID, e.Current.Version)
}

// ErrVersionChanged is a Store's refusal to write over a version other than the one
// the caller read (its before), which a caller that read the risk locked never sees.
var ErrVersionChanged = errors.New("risk version changed since it was read")
