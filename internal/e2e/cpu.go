package e2e

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux riskapi runs on).
const clockTick = 10 * time.Millisecond

// CPU returns the user plus system CPU time the running process has used so far,
// read from /proc/<pid>/stat (Linux only). Errors: no process is running, or /proc
// cannot be read.
func (in *Instance) CPU() (time.Duration, error) {
	in.mu.Lock()
	p := in.proc
	in.mu.Unlock()
	if p == nil || p.cmd.Process == nil {
		return 0, errors.New("e2e: instance not running")
	}
	return ProcessCPU(p.cmd.Process.Pid)
}

// ProcessCPU returns the user plus system CPU time process pid has used so far,
// read from /proc/<pid>/stat (Linux only). Errors: no such process, or /proc cannot
// be read.
func ProcessCPU(pid int) (time.Duration, error) {
	// utime and stime: the 14th and 15th fields of the whole line.
	return cpuPair(pid, 14)
}

// ExitedChildrenCPU returns the user plus system CPU time of process pid's children
// that have exited and been waited for (cutime + cstime in /proc/<pid>/stat; Linux
// only). PostgreSQL's postmaster waits for every backend, so the difference across a
// run is the CPU of the backends that ended in it: a pgbench run's, whose
// connections close when it ends. Errors: as ProcessCPU's.
func ExitedChildrenCPU(pid int) (time.Duration, error) {
	// cutime and cstime: the 16th and 17th fields.
	return cpuPair(pid, 16)
}

// cpuPair is the sum of the two clock-tick fields of /proc/<pid>/stat that begin at
// field n of the whole line (counted from 1, as proc(5) does).
func cpuPair(pid, n int) (time.Duration, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	a, err1 := strconv.ParseInt(f[n-3], 10, 64)
	b, err2 := strconv.ParseInt(f[n-2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(a+b) * clockTick, nil
}

// ParentPID returns the process id of pid's parent (/proc/<pid>/stat; Linux only):
// a PostgreSQL backend's is its postmaster's. Errors: as ProcessCPU's.
func ParentPID(pid int) (int, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[1]) // the 4th field
}

// statFields are the fields of /proc/<pid>/stat after the command's closing
// parenthesis: f[0] is the 3rd field of the whole line (state), f[11] the 14th.
func statFields(pid int) ([]string, error) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return nil, errors.New("e2e: short /proc stat line")
	}
	return f, nil
}
