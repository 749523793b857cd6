package upload

import (
	"crypto/sha256"
	"errors"
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
	h := sha256.New()
	first := chunks.Get().(*[]byte)
	n, err := fill(src, *first)
	if err != nil {
		defer chunks.Put(first)
		if !errors.Is(err, io.EOF) {
			return int64(n), sum, err
		}
		h.Write((*first)[:n])
		if _, err := dst.Write((*first)[:n]); err != nil {
			return 0, sum, err
		}
		h.Sum(sum[:0])
		return int64(n), sum, nil
	}

	type chunk struct {
		b *[]byte
		n int
	}
	toHash := make(chan chunk, chunksInFlight)
	toWrite := make(chan chunk, chunksInFlight)
	failed := make(chan struct{}) // closed on dst's first error
	var werr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // hasher: keeps chunk order, so the digest is the digest of the stream
		defer wg.Done()
		defer close(toWrite)
		for c := range toHash {
			h.Write((*c.b)[:c.n])
			toWrite <- c
		}
	}()
	go func() { // writer
		defer wg.Done()
		for c := range toWrite {
			if werr == nil {
				if _, werr = dst.Write((*c.b)[:c.n]); werr != nil {
					close(failed)
				}
			}
			chunks.Put(c.b)
		}
	}()

	total := int64(n)
	next := chunk{first, n}
	var rerr error
	for {
		select {
		case toHash <- next:
		case <-failed:
			chunks.Put(next.b)
			rerr = errWriteFailed
		}
		if rerr != nil {
			break
		}
		b := chunks.Get().(*[]byte)
		n, err := fill(src, *b)
		total += int64(n)
		if err != nil && !errors.Is(err, io.EOF) {
			chunks.Put(b)
			rerr = err
			break
		}
		if n == 0 {
			chunks.Put(b)
			break
		}
		next = chunk{b, n}
		if err != nil { // io.EOF with a last partial chunk
			select {
			case toHash <- next:
			case <-failed:
				chunks.Put(next.b)
			}
			break
		}
	}
	close(toHash)
	wg.Wait()
	switch {
	case werr != nil:
		return total, sum, werr
	case rerr != nil:
		return total, sum, rerr
	}
	h.Sum(sum[:0])
	return total, sum, nil
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
