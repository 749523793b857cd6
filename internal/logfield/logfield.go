// Package logfield is the one form of a duration in riskapi's logs: milliseconds,
// as a number, in a field whose name says so ("durationMs": 1.87). log/slog's own
// Duration attribute is written by the JSON handler as bare nanoseconds, which a
// reader takes for anything; every log line — the request's, a sweep's, an upload's,
// a delivery's — uses this instead (internal/architecture refuses slog.Duration
// elsewhere).
package logfield

import (
	"log/slog"
	"time"
)

// Millis is the attribute key+"Ms" holding d in milliseconds, to the microsecond
// (a float: 1.87 for 1.87 ms).
func Millis(key string, d time.Duration) slog.Attr {
	return slog.Float64(key+"Ms", float64(d.Microseconds())/1000)
}

// Duration is Millis("duration", d): how long what the line reports took, as the
// request log line has it.
func Duration(d time.Duration) slog.Attr { return Millis("duration", d) }
