package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
)

// raceResult is what --races measured: each race sends --race-width concurrent
// first requests with one Idempotency-Key and one body, and the tenant's risks are
// then counted by the race's title. Exactly-once means one row per race.
type raceResult struct {
	races, width int
	rows         map[string]int // per race title: risks created
	statuses     map[string]int // "201 replayed=false", "409 …", "network error", …
	err          error          // listing the risks failed
}

// races runs g.o.races races one after another, each from g.o.raceWidth goroutines
// released together, then lists the tenant's risks once and counts each race's.
func (g *generator) races(ctx context.Context) *raceResult {
	rr := &raceResult{races: g.o.races, width: g.o.raceWidth, rows: map[string]int{}, statuses: map[string]int{}}
	var mu sync.Mutex
	titles := make([]string, 0, g.o.races)
	for i := range g.o.races {
		if ctx.Err() != nil {
			break
		}
		key := fmt.Sprintf("%s-race-%d", g.run_, i)
		body := g.body(fmt.Sprintf("race%d", i))
		title := raceTitle(body)
		titles = append(titles, title)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for c := range g.o.raceWidth {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				target := g.env.targets[c%len(g.env.targets)]
				a := g.client.CreateRisk(ctx, target, key, body)
				s := "network error"
				if a.Err == nil {
					s = fmt.Sprintf("%d", a.Status)
					if a.Replayed != "" {
						s += " replayed=" + a.Replayed
					}
					if a.Code != "" {
						s += " " + a.Code
					}
				}
				mu.Lock()
				rr.statuses[s]++
				mu.Unlock()
			}()
		}
		close(start)
		wg.Wait()
	}
	rs, err := g.client.ListRisks(context.WithoutCancel(ctx), g.env.targets[0], 1<<20)
	if err != nil {
		rr.err = err
		return rr
	}
	for _, t := range titles {
		rr.rows[t] = 0
	}
	for _, r := range rs {
		if _, ok := rr.rows[r.Title]; ok {
			rr.rows[r.Title]++
		}
	}
	return rr
}

// raceTitle is the title g.body put in body.
func raceTitle(body []byte) string {
	s := string(body)
	const p = `"title":"`
	i := strings.Index(s, p)
	if i < 0 {
		return ""
	}
	s = s[i+len(p):]
	return s[:strings.IndexByte(s, '"')]
}

// ok is whether every race created exactly one risk.
func (rr *raceResult) ok() bool {
	if rr.err != nil {
		return false
	}
	for _, n := range rr.rows {
		if n != 1 {
			return false
		}
	}
	return len(rr.rows) == rr.races
}

func (rr *raceResult) report(w io.Writer) {
	fmt.Fprintf(w, "\nsame-key races: %d races of %d concurrent requests with one key and one body\n", rr.races, rr.width)
	if rr.err != nil {
		fmt.Fprintf(w, "  FAILED to list the tenant's risks: %v\n", rr.err)
		return
	}
	total, bad := 0, 0
	for _, n := range rr.rows {
		total += n
		if n != 1 {
			bad++
		}
	}
	fmt.Fprintf(w, "  risks created: %d for %d races; races with other than one: %d (%s)\n", total, len(rr.rows), bad, okWord(rr.ok()))
	keys := make([]string, 0, len(rr.statuses))
	for s := range rr.statuses {
		keys = append(keys, s)
	}
	sort.Strings(keys)
	for _, s := range keys {
		fmt.Fprintf(w, "  answers %-40s %d\n", s, rr.statuses[s])
	}
}
