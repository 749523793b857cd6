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
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The fields after the command's closing parenthesis; utime and stime are the
	// 14th and 15th of the whole line.
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, errors.New("e2e: short /proc stat line")
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(u+st) * clockTick, nil
}
