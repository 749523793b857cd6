// Package webhooktest is test support for outbound webhooks: a real HTTP receiver on
// loopback that records every delivery, can answer with failures or go down and come
// back on the same address, and a check of recorded signatures with the Standard
// Webhooks reference implementation for Node.js — independent of the Go code that
// signed them. It is in a non-test file so that several test packages share it.
package webhooktest

import (
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// Delivery is one request the receiver got.
type Delivery struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// ID is the delivery's webhook-id header.
func (d Delivery) ID() string { return d.Header.Get("webhook-id") }

// Receiver is a webhook endpoint on 127.0.0.1. Its methods are safe for concurrent
// use.
type Receiver struct {
	addr string
	mu   sync.Mutex
	srv  *http.Server
	got  []Delivery
	// answer decides the status of the nth delivery (from 0); nil answers 204.
	answer   func(n int, d Delivery) int
	delay    time.Duration
	inFlight int
	maxIn    int
}

// NewReceiver starts a receiver, stopped when t ends.
func NewReceiver(t testing.TB) *Receiver {
	t.Helper()
	r := &Receiver{}
	if err := r.listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Down)
	return r
}

func (r *Receiver) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 5 * time.Second}
	r.mu.Lock()
	r.addr, r.srv = ln.Addr().String(), srv
	r.mu.Unlock()
	go srv.Serve(ln)
	return nil
}

// URL is the receiver's base URL, "http://127.0.0.1:PORT"; it stays the same
// across Down and Up.
func (r *Receiver) URL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return "http://" + r.addr
}

// Answer makes the receiver answer the nth delivery (counted from 0, across all
// event ids) with f's status.
func (r *Receiver) Answer(f func(n int, d Delivery) int) {
	r.mu.Lock()
	r.answer = f
	r.mu.Unlock()
}

// Delay makes each answer wait d.
func (r *Receiver) Delay(d time.Duration) {
	r.mu.Lock()
	r.delay = d
	r.mu.Unlock()
}

// Down closes the listener and every connection: senders get connection refused.
func (r *Receiver) Down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Up listens again on the same address.
func (r *Receiver) Up(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := r.listen(r.URL()[len("http://"):])
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver up again: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	d := Delivery{Header: req.Header.Clone(), Body: body, At: time.Now()}
	r.mu.Lock()
	n := len(r.got)
	r.got = append(r.got, d)
	answer, delay := r.answer, r.delay
	r.inFlight++
	r.maxIn = max(r.maxIn, r.inFlight)
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}()
	if delay > 0 {
		time.Sleep(delay)
	}
	status := http.StatusNoContent
	if answer != nil {
		status = answer(n, d)
	}
	w.WriteHeader(status)
}

// Deliveries returns every delivery so far, in arrival order.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.got...)
}

// MaxConcurrent is the most deliveries the receiver was handling at once.
func (r *Receiver) MaxConcurrent() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maxIn
}

// IDs counts the deliveries per webhook-id.
func (r *Receiver) IDs() map[string]int {
	out := map[string]int{}
	for _, d := range r.Deliveries() {
		out[d.ID()]++
	}
	return out
}

// WaitIDs waits until the receiver has seen n distinct webhook-ids and returns the
// count of deliveries per id; it fails t after timeout.
func (r *Receiver) WaitIDs(t testing.TB, n int, timeout time.Duration) map[string]int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ids := r.IDs()
		if len(ids) >= n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("receiver saw %d distinct webhook-ids after %s, want %d", len(ids), timeout, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
