package bench

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// setDeathSignal has the kernel kill a worker when the bench dies.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// procCPU is the CPU time (user + system) process pid used so far, from
// /proc/<pid>/stat; 0 when it cannot be read.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command may hold spaces
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:]) // f[0] is the state, field 3 of stat
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)        // utime, field 14
	st, _ := strconv.ParseInt(f[12], 10, 64)        // stime, field 15
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}
