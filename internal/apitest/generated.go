package apitest

import (
	"io"
	"math/rand/v2"
)

// generatedPattern is 1 MiB plus an odd tail of pseudo-random bytes (nothing
// compresses or short-cuts them), so read chunks never line up with it.
var generatedPattern = func() []byte {
	b := make([]byte, 1<<20+4093)
	rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}()

// Generated returns a reader of n deterministic pseudo-random bytes, made as they
// are read: however large n is, it holds nothing but a 1 MiB pattern. Tests stream
// gigabyte uploads from it without holding them in memory.
func Generated(n int64) io.Reader { return &generator{left: n} }

type generator struct{ off, left int64 }

func (g *generator) Read(p []byte) (int, error) {
	if g.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > g.left {
		p = p[:g.left]
	}
	n := copy(p, generatedPattern[g.off%int64(len(generatedPattern)):])
	g.off += int64(n)
	g.left -= int64(n)
	return n, nil
}
