package e2e

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// A child that burns CPU and is waited for adds its CPU to its parent's exited
// children's, which is how loadgen reads a pgbench run's backends off the postmaster.
func TestExitedChildrenCPUCountsAWaitedChild(t *testing.T) {
	before, err := ExitedChildrenCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `end=$(($(date +%s%N) + 300000000)); while [ "$(date +%s%N)" -lt "$end" ]; do :; done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if ppid, err := ParentPID(cmd.Process.Pid); err != nil || ppid != os.Getpid() {
		t.Errorf("ParentPID(child) = %d, %v; want this process, %d", ppid, err, os.Getpid())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	after, err := ExitedChildrenCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// The loop spins for 300 ms of wall clock; on a loaded machine it gets less CPU.
	if got := after - before; got < 50*time.Millisecond {
		t.Errorf("exited children's CPU grew by %v across a child that spun for 300 ms; want at least 50 ms", got)
	}
}

// A process's own CPU grows with the work it does, and not with its children's.
func TestProcessCPUCountsOwnWork(t *testing.T) {
	before, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	after, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got := after - before; got < 50*time.Millisecond {
		t.Errorf("own CPU grew by %v across 300 ms of spinning; want at least 50 ms", got)
	}
}
