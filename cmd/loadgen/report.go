package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/riskapi/riskapi/internal/e2e"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

// report prints the run's figures: one line per kind, the ratios, and the checks.
func report(w io.Writer, o *options, env *environment, r *results) {
	store := env.store
	if store == "" {
		store = "unknown (--targets)"
	}
	fmt.Fprintf(w, "riskapi loadgen — %s\n", time.Now().UTC().Format(time.RFC3339))
	if o.label != "" {
		fmt.Fprintf(w, "label:    %s\n", o.label)
	}
	fmt.Fprintf(w, "store:    %s, %d instance(s): %s\n", store, len(env.targets), strings.Join(env.targets, " "))
	fmt.Fprintf(w, "load:     %d clients, %d round(s) of up to %d requests or %s per kind, warm-up %d+%d writes; loadgen on %d CPUs, %s\n",
		o.clients, o.rounds, o.requests, o.duration, o.warmup, o.warmup, runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(w, "loadavg:  %s at the start, %s at the end (1, 5, 15 minutes)\n", r.loadStart, loadAvg())
	if len(o.env) > 0 {
		fmt.Fprintf(w, "env:      %s\n", strings.Join(o.env, " "))
	}
	if r.stopped != "" {
		fmt.Fprintf(w, "STOPPED EARLY: %s\n", r.stopped)
	}
	fmt.Fprintf(w, "\n%-8s %9s %7s %8s %10s %9s %9s %9s %9s\n", "kind", "requests", "errors", "seconds", "req/s", "p50", "p95", "p99", "max")
	sums := map[kind]e2e.Summary{}
	for _, k := range o.kinds {
		kr := r.kinds[k]
		s := e2e.Summarize(kr.lat)
		sums[k] = s
		fmt.Fprintf(w, "%-8s %9d %7d %8.2f %10.1f %9s %9s %9s %9s\n", k, kr.ok+kr.errors, kr.errors,
			kr.elapsed.Seconds(), kr.throughput(), ms(s.P50), ms(s.P95), ms(s.P99), ms(s.Max))
	}
	reportRatios(w, r, sums)
	if r.race != nil {
		r.race.report(w)
	}
	reportChecks(w, o, r)
}

// reportRatios prints the ratios between the kinds that were measured.
func reportRatios(w io.Writer, r *results, sums map[kind]e2e.Summary) {
	tp := func(k kind) float64 {
		if kr := r.kinds[k]; kr != nil {
			return kr.throughput()
		}
		return 0
	}
	ratio := func(a, b float64) string {
		if a == 0 || b == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	lat := func(a, b time.Duration) string { return ratio(float64(a), float64(b)) }
	has := func(ks ...kind) bool {
		for _, k := range ks {
			if kr := r.kinds[k]; kr == nil || kr.ok == 0 {
				return false
			}
		}
		return true
	}
	fmt.Fprintf(w, "\nratios\n")
	if has(kindKeyed, kindUnkeyed) {
		fmt.Fprintf(w, "  keyed/unkeyed throughput             %s   (goal ≥ 0.85 on PostgreSQL, ≥ 0.80 on SQLite)\n", ratio(tp(kindKeyed), tp(kindUnkeyed)))
		fmt.Fprintf(w, "  keyed/unkeyed latency p50 / p99      %s / %s\n", lat(sums[kindKeyed].P50, sums[kindUnkeyed].P50), lat(sums[kindKeyed].P99, sums[kindUnkeyed].P99))
		if f := r.floor; f != nil {
			fmt.Fprintf(w, "  pgbench floor keyed/unkeyed          %s   (the same statements straight to PostgreSQL, rounds interleaved)\n", ratio(f.ratio("keyed"), 1))
			fmt.Fprintf(w, "  riskapi ratio / floor ratio          %s   (goal ≥ 0.90)\n", ratio(tp(kindKeyed)/tp(kindUnkeyed), f.ratio("keyed")))
			fmt.Fprintf(w, "  one-call keyed / floor unkeyed       %s   (keyed-onecall.sql: the keyed write as one function call)\n", ratio(f.ratio("keyed-onecall"), 1))
			fmt.Fprintf(w, "  riskapi ratio / one-call ratio       %s   (how far riskapi's keyed/unkeyed is from the best design's)\n", ratio(tp(kindKeyed)/tp(kindUnkeyed), f.ratio("keyed-onecall")))
			fmt.Fprintf(w, "  pgbench tps unkeyed / keyed / one-call   %.1f / %.1f / %.1f   (%d clients, mean of rounds)\n",
				f.mean("unkeyed"), f.mean("keyed"), f.mean("keyed-onecall"), f.clients)
			if u := f.dbCPU("unkeyed"); u > 0 {
				fmt.Fprintf(w, "  pgbench database CPU per transaction, unkeyed / keyed   %.0fµs / %.0fµs   (its backends', mean of rounds)\n",
					float64(u)/1e3, float64(f.dbCPU("keyed"))/1e3)
			}
		}
	}
	if has(kindKeyed, kindReplay) {
		fmt.Fprintf(w, "  replay speedup over first execution  %s× throughput, %s× p50, %s× p99   (goal ≥ 3 on PostgreSQL, ≥ 4 on SQLite)\n",
			ratio(tp(kindReplay), tp(kindKeyed)), lat(sums[kindKeyed].P50, sums[kindReplay].P50), lat(sums[kindKeyed].P99, sums[kindReplay].P99))
	}
	cpu := func(k kind) float64 { return float64(r.kinds[k].cpuPerRequest()) }
	if has(kindReplay, kindUnkeyed) && cpu(kindUnkeyed) > 0 {
		fmt.Fprintf(w, "  server CPU per request, unkeyed / keyed / replay   %.0fµs / %.0fµs / %.0fµs\n",
			cpu(kindUnkeyed)/1e3, cpu(kindKeyed)/1e3, cpu(kindReplay)/1e3)
		fmt.Fprintf(w, "  replay/unkeyed server CPU            %s   (goal ≤ 0.50)\n", ratio(cpu(kindReplay), cpu(kindUnkeyed)))
	}
	both := func(k kind) float64 { return cpu(k) + float64(r.kinds[k].dbCPUPerRequest()) }
	if has(kindReplay, kindUnkeyed) && r.kinds[kindUnkeyed].dbCPUPerRequest() > 0 {
		fmt.Fprintf(w, "  server+database CPU per request, unkeyed / keyed / replay   %.0fµs / %.0fµs / %.0fµs\n",
			both(kindUnkeyed)/1e3, both(kindKeyed)/1e3, both(kindReplay)/1e3)
		fmt.Fprintf(w, "  replay/unkeyed server+database CPU   %s   (goal ≤ 0.50)\n", ratio(both(kindReplay), both(kindUnkeyed)))
	}
	if has(kindRead, kindReplay) {
		fmt.Fprintf(w, "  read/replay throughput               %s\n", ratio(tp(kindRead), tp(kindReplay)))
	}
	if has(kindRead, kindUnkeyed) {
		fmt.Fprintf(w, "  read/unkeyed-write throughput        %s\n", ratio(tp(kindRead), tp(kindUnkeyed)))
	}
}

// reportChecks prints what the run checked: mismatched replays and reads, the
// tenant's risks against the run's acknowledged writes, the errors, the verdict.
func reportChecks(w io.Writer, o *options, r *results) {
	fmt.Fprintf(w, "\nchecks\n")
	var mism int
	for _, k := range o.kinds {
		mism += r.kinds[k].mismatches
	}
	fmt.Fprintf(w, "  replays not identical to their first answer / reads of another risk: %d\n", mism)
	switch {
	case r.verifyErr != nil:
		fmt.Fprintf(w, "  verify: FAILED to list the tenant's risks: %v\n", r.verifyErr)
	case r.verified:
		fmt.Fprintf(w, "  tenant's risks: %d, accounted for by the run: %d (%s)\n", r.risks, r.expected, okWord(r.risks == r.expected))
		fmt.Fprintf(w, "  doubled writes: %d, lost acknowledged writes: %d\n", len(r.doubled), len(r.lost))
		for _, t := range first(r.doubled, 5) {
			fmt.Fprintf(w, "    doubled: %s\n", t)
		}
		for _, id := range first(r.lost, 5) {
			fmt.Fprintf(w, "    lost: %s\n", id)
		}
	default:
		fmt.Fprintf(w, "  verify: off\n")
	}
	for _, k := range o.kinds {
		for _, e := range r.kinds[k].examples {
			fmt.Fprintf(w, "  error: %s\n", e)
		}
	}
	fmt.Fprintf(w, "  result: %s (total %s)\n", okWord(r.ok()), r.took.Round(time.Millisecond))
}

func okWord(ok bool) string {
	if ok {
		return "OK"
	}
	return "FAILED"
}

func first(s []string, n int) []string { return s[:min(n, len(s))] }
