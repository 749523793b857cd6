package jsonbody_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/riskapi/riskapi/internal/jsonbody"
)

// chunks records every Write, to check that WriteCanonical's pieces add up to
// Canonical's form whatever the body's size.
type chunks struct {
	bytes.Buffer
	n int
}

func (c *chunks) Write(p []byte) (int, error) { c.n++; return c.Buffer.Write(p) }

// TestWriteCanonicalIsCanonical: what WriteCanonical writes is byte for byte
// Canonical's form (the fingerprint of a stored record must not change), for bodies
// below, at and far above its two-chunk buffer, one after the other so that each
// reuses a builder (and its buffer) the one before grew, a long string among them.
func TestWriteCanonicalIsCanonical(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{`)
	for i := range 5000 {
		fmt.Fprintf(&many, `"k%05d":{"b":[1.0,2e0,"x"],"a":null},`, 4999-i)
	}
	many.WriteString(`"z":true}`)
	bodies := []string{
		`{"title":"Vendor contract","likelihood":3,"impact":4.0,"metadata":{"b":1,"a":2}}`,
		many.String(),
		`{"t":"` + strings.Repeat("é", 100_000) + `","a":[` + strings.Repeat(`1.50,`, 20_000) + `0]}`,
		`{"a":"` + strings.Repeat("x", 64<<10) + `"}`,
		`[]`,
		`{"title":"Vendor contract","likelihood":3,"impact":4.0,"metadata":{"b":1,"a":2}}`,
	}
	for i, in := range bodies {
		want, err := jsonbody.Canonical(nil, []byte(in))
		if err != nil {
			t.Fatalf("body %d: %v", i, err)
		}
		var got chunks
		if err := jsonbody.WriteCanonical(&got, []byte(in)); err != nil {
			t.Fatalf("body %d: %v", i, err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("body %d (%d bytes): WriteCanonical wrote %d bytes in %d writes, Canonical %d; differ",
				i, len(in), got.Len(), got.n, len(want))
		}
		if len(want) > 200<<10 && got.n < 2 {
			t.Errorf("body %d: %d bytes of form in %d write(s): not written in pieces", i, len(want), got.n)
		}
	}
}

// BenchmarkWriteCanonical hashes a create's body, as the idempotency fingerprint does;
// its B/op is the figure to watch: a few hundred bytes, not a 64 KiB buffer per body
// (a replay's garbage, docs/performance.md, "What a replay costs").
func BenchmarkWriteCanonical(b *testing.B) {
	body := []byte(`{"title":"Vendor contract missing a DPA","description":"` + strings.Repeat("d", 149) +
		`","category":"Third-Party","likelihood":3,"impact":4,"owner":"loadgen"}`)
	h := sha256.New()
	b.ReportAllocs()
	for b.Loop() {
		h.Reset()
		if err := jsonbody.WriteCanonical(h, body); err != nil {
			b.Fatal(err)
		}
	}
}
