package architecture_test

import (
	"strings"
	"testing"
)

// TestNestedModulesAreNotTheModule: bench/peer is a module of its own (issue 26's
// gopotency peer) that cannot use riskapi's store helpers; the rules here are for
// riskapi's own files, which must still all be read.
func TestNestedModulesAreNotTheModule(t *testing.T) {
	var peer, loadgen int
	for _, f := range sources(t) {
		switch {
		case strings.HasPrefix(f.path, "bench/peer/"):
			peer++
		case strings.HasPrefix(f.path, "cmd/loadgen/"):
			loadgen++
		}
	}
	if peer != 0 {
		t.Errorf("%d files of the nested module bench/peer were read as riskapi's", peer)
	}
	if loadgen == 0 {
		t.Error("no file of cmd/loadgen was read: the walk skips riskapi's own folders")
	}
}
