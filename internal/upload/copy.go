package upload

import (
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"sync"
)

// chunkSize is the unit the spool reads, hashes and writes; chunksInFlight bounds how
// many chunks wait between the stages. Memory per upload is therefore bounded by about
// (2·chunksInFlight+3)·chunkSize ≈ 2.8 MiB, whatever the file size.
const (
	chunkSize      = 256 << 10
	chunksInFlight = 4
)

var chunks = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// copyHashed copies src to dst and returns the byte count and SHA-256 of what it
// copied. Reading (the multipart parser and the network), hashing and writing run as a
// three-stage pipeline on different chunks, so a large file costs about the time of
// the slowest stage instead of the sum of all three. A file that fits in one chunk is
// copied without starting goroutines.
//
// Errors: src's error, or dst's first write error (reading then stops early).
func copyHashed(dst io.Writer, src io.Reader) (int64, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	first := chunks.Get().(*[]byte)
	n, err := fill(src, *first)
	if err != nil {
		defer chunks.Put(first)
		if !errors.Is(err, io.EOF) {
			return int64(n), sum, err
		}
		if _, err := dst.Write((*first)[:n]); err != nil {
			return 0, sum, err
		}
		return int64(n), sha256.Sum256((*first)[:n]), nil
	}
	p := startPipeline(dst)
	total, rerr := p.feed(src, chunk{first, n})
	close(p.toHash)
	p.wg.Wait()
	switch {
	case p.werr != nil:
		return total, sum, p.werr
	case rerr != nil:
		return total, sum, rerr
	}
	p.h.Sum(sum[:0])
	return total, sum, nil
}

// chunk is a pooled buffer and how many of its bytes are data.
type chunk struct {
	b *[]byte
	n int
}

// pipeline hashes chunks in order on one goroutine and writes them on another.
type pipeline struct {
	h       hash.Hash
	toHash  chan chunk
	toWrite chan chunk
	failed  chan struct{} // closed on dst's first error
	werr    error         // dst's first error; read after wg.Wait
	wg      sync.WaitGroup
}

func startPipeline(dst io.Writer) *pipeline {
	p := &pipeline{h: sha256.New(), toHash: make(chan chunk, chunksInFlight),
		toWrite: make(chan chunk, chunksInFlight), failed: make(chan struct{})}
	p.wg.Add(2)
	go p.hash()
	go p.write(dst)
	return p
}

// hash keeps chunk order, so the digest is the digest of the stream.
func (p *pipeline) hash() {
	defer p.wg.Done()
	defer close(p.toWrite)
	for c := range p.toHash {
		p.h.Write((*c.b)[:c.n])
		p.toWrite <- c
	}
}

// write writes every chunk until dst fails, then only returns chunks to the pool.
func (p *pipeline) write(dst io.Writer) {
	defer p.wg.Done()
	for c := range p.toWrite {
		if p.werr == nil {
			if _, p.werr = dst.Write((*c.b)[:c.n]); p.werr != nil {
				close(p.failed)
			}
		}
		chunks.Put(c.b)
	}
}

// send hands c to the hasher; false once the writer has failed (c goes back to the
// pool).
func (p *pipeline) send(c chunk) bool {
	select {
	case p.toHash <- c:
		return true
	case <-p.failed:
		chunks.Put(c.b)
		return false
	}
}

// feed sends next, then the rest of src chunk by chunk. It returns the bytes read
// and src's error, or errWriteFailed once the writer failed.
func (p *pipeline) feed(src io.Reader, next chunk) (int64, error) {
	total := int64(next.n)
	for {
		if !p.send(next) {
			return total, errWriteFailed
		}
		b := chunks.Get().(*[]byte)
		n, err := fill(src, *b)
		total += int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			chunks.Put(b)
			return total, err
		}
		if n == 0 {
			chunks.Put(b)
			return total, nil
		}
		next = chunk{b, n}
		if err != nil { // io.EOF with a last partial chunk
			p.send(next)
			return total, nil
		}
	}
}

// errWriteFailed stops reading once the writer failed; the writer's error is returned.
var errWriteFailed = errors.New("upload: write failed")

// fill reads into b until it is full or src fails. It returns io.EOF (with n ≥ 0)
// when src ended.
func fill(src io.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := src.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
