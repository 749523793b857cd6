// Command resetflood measures what a flood of client hang-ups costs the clients
// that stay: it opens connections to a running riskapi that each send POST
// /v2/risks and reset (RST) after a random wait of up to --hold, as a careless or
// hostile client does, while a paced client sends --requests writes of its own and
// reports their statuses and latency.
//
//	resetflood --addr 127.0.0.1:8080 --api-key rk_… --flood-key rk_… --workers 16 --hold 20ms
//
// --flood-key is the flood's credential: another key of the tenant (a valid key
// reaches the store, and so tests the pool) or a made-up one (the default: no
// credential is needed to send a flood). Give the paced client's --api-key a key of
// its own, or the flood's rate limit is its too. It prints one line; see
// docs/performance.md ("Client hang-ups") for what to read next to it (the server's
// log, PostgreSQL's pg_stat_database.sessions).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "riskapi's host:port")
	apiKey := flag.String("api-key", "", "the paced client's API key, with risks:write (required)")
	floodKey := flag.String("flood-key", "rk_madeup00000000000000000000000000000000000", "the flood's API key")
	workers := flag.Int("workers", 16, "flooding connections open at once")
	hold := flag.Duration("hold", 20*time.Millisecond, "longest wait between sending a request and resetting it")
	n := flag.Int("requests", 300, "writes the paced client sends")
	every := flag.Duration("every", 50*time.Millisecond, "the paced client's interval")
	flag.Parse()
	if *apiKey == "" || *hold <= 0 {
		fmt.Fprintln(os.Stderr, "resetflood: --api-key is required and --hold must be positive")
		os.Exit(2)
	}
	f := startFlood(*addr, *floodKey, *workers, *hold)
	time.Sleep(time.Second) // let the flood build up
	start := time.Now()
	statuses, took := pace(*addr, *apiKey, *n, *every)
	sent := f.stop()
	elapsed := time.Since(start)
	slices.Sort(took)
	q := func(p float64) time.Duration {
		if len(took) == 0 {
			return 0
		}
		return took[int(p*float64(len(took)-1))].Round(time.Millisecond)
	}
	fmt.Printf("flood: %d requests reset (%.0f/s); paced client: %v, p50 %v, p99 %v, max %v\n",
		sent, float64(sent)/elapsed.Seconds(), statuses, q(0.5), q(0.99), q(1))
}

// flood is the running flood of requests reset mid-flight.
type flood struct {
	done    chan struct{}
	workers sync.WaitGroup
	sent    atomic.Int64
}

// startFlood opens workers connections to addr, each sending a POST /v2/risks
// with floodKey and resetting (RST) it after a random wait of up to hold, over
// and over until stop.
func startFlood(addr, floodKey string, workers int, hold time.Duration) *flood {
	body := `{"title":"flood"}`
	raw := fmt.Appendf(nil, "POST /v2/risks HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, floodKey, len(body), body)
	f := &flood{done: make(chan struct{})}
	for range workers {
		f.workers.Go(func() {
			for {
				select {
				case <-f.done:
					return
				default:
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				_, _ = c.Write(raw)
				f.sent.Add(1)
				time.Sleep(rand.N(hold))
				_ = c.(*net.TCPConn).SetLinger(0) // close with RST, not FIN
				_ = c.Close()
			}
		})
	}
	return f
}

// stop ends the flood and returns how many requests it reset.
func (f *flood) stop() int64 {
	close(f.done)
	f.workers.Wait()
	return f.sent.Load()
}

// pace sends n writes to addr with apiKey, one every interval, and returns how
// many ended with each status ("error" for no answer) and how long each answered
// one took.
func pace(addr, apiKey string, n int, every time.Duration) (map[string]int, []time.Duration) {
	client := &http.Client{Timeout: 30 * time.Second}
	var mu sync.Mutex
	var took []time.Duration
	statuses := map[string]int{}
	start := time.Now()
	var paced sync.WaitGroup
	for i := range n {
		paced.Go(func() {
			req, _ := http.NewRequest("POST", "http://"+addr+"/v2/risks",
				bytes.NewReader(fmt.Appendf(nil, `{"title":"paced %d %d"}`, start.UnixNano(), i)))
			req.Header.Set("Authorization", "Bearer "+apiKey)
			req.Header.Set("Content-Type", "application/json")
			t0 := time.Now()
			res, err := client.Do(req)
			d := time.Since(t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				statuses["error"]++
				return
			}
			res.Body.Close()
			statuses[fmt.Sprint(res.StatusCode)]++
			took = append(took, d)
		})
		time.Sleep(every)
	}
	paced.Wait()
	return statuses, took
}
