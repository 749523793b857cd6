package trends

import (
	"time"

	"github.com/riskapi/riskapi/internal/problem"
)

// Interval is a series' step.
type Interval string

// The intervals of GET /register/trends.
const (
	Day   Interval = "day"
	Week  Interval = "week"
	Month Interval = "month"
)

// MaxPoints bounds a series: more days (weeks, months) than this are refused.
const MaxPoints = 400

// MaxSpan bounds the days a series reads, whatever its interval.
const MaxSpan = 1830 * 24 * time.Hour

// Point is one step of a series: the counts of the last snapshot within [From, To]
// (the step's days), taken on Day at TakenAt. A step no snapshot falls in has no
// point: a gap.
type Point struct {
	From    string    `json:"from"`
	To      string    `json:"to"`
	Day     string    `json:"day"`
	TakenAt time.Time `json:"takenAt"`
	Counts
}

// Range is a series' request: its days [From, To] and step.
type Range struct {
	From, To time.Time
	Interval Interval
}

// ParseRange reads from, to (YYYY-MM-DD, UTC; to defaults to today, from to 90
// days before to) and interval (default day). Errors: VALIDATION_FAILED naming each
// bad parameter, and a range of more than MaxPoints steps.
func ParseRange(from, to, interval string, today time.Time) (Range, error) {
	r := Range{Interval: Interval(interval)}
	var bad []error
	if interval == "" {
		r.Interval = Day
	} else if r.Interval != Day && r.Interval != Week && r.Interval != Month {
		bad = append(bad, problem.Invalid("interval", "must be day, week or month"))
	}
	r.To = today
	if to != "" {
		t, err := time.Parse(DateLayout, to)
		if err != nil {
			bad = append(bad, problem.Invalid("to", "must be a date YYYY-MM-DD"))
		}
		r.To = t
	}
	r.From = r.To.AddDate(0, 0, -90)
	if from != "" {
		t, err := time.Parse(DateLayout, from)
		if err != nil {
			bad = append(bad, problem.Invalid("from", "must be a date YYYY-MM-DD"))
		}
		r.From = t
	}
	if err := problem.Join(bad...); err != nil {
		return r, err
	}
	if r.From.After(r.To) {
		return r, problem.Invalid("from", "must not be after to")
	}
	if r.To.Sub(r.From) > MaxSpan {
		return r, problem.Invalid("from", "the range may span at most 5 years (1830 days)")
	}
	if len(r.Steps()) > MaxPoints {
		return r, problem.Invalid("from", "the range holds more than 400 steps of its interval: narrow it or take a longer interval")
	}
	return r, nil
}

// Steps returns r's steps, each [from, to] within r: calendar days, ISO weeks
// (Monday to Sunday) or calendar months, the first and last cut to r. It stops
// past MaxPoints+1 steps.
func (r Range) Steps() [][2]time.Time {
	var out [][2]time.Time
	for start := r.From; !start.After(r.To) && len(out) <= MaxPoints; {
		var next time.Time
		switch r.Interval {
		case Week:
			wd := (int(start.Weekday()) + 6) % 7 // days since Monday
			next = start.AddDate(0, 0, 7-wd)
		case Month:
			next = time.Date(start.Year(), start.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		default:
			next = start.AddDate(0, 0, 1)
		}
		end := next.AddDate(0, 0, -1)
		if end.After(r.To) {
			end = r.To
		}
		out = append(out, [2]time.Time{start, end})
		start = next
	}
	return out
}

// Series returns r's points from snaps (ascending by day, within r): for each step,
// the last snapshot that falls in it; a step with none has no point.
func (r Range) Series(snaps []Snapshot) []Point {
	out := []Point{}
	i := 0
	for _, st := range r.Steps() {
		from, to := st[0].Format(DateLayout), st[1].Format(DateLayout)
		var last *Snapshot
		for ; i < len(snaps) && snaps[i].Day <= to; i++ {
			if snaps[i].Day >= from {
				last = &snaps[i]
			}
		}
		if last != nil {
			out = append(out, Point{From: from, To: to, Day: last.Day, TakenAt: last.TakenAt.UTC(), Counts: last.Counts})
		}
	}
	return out
}
