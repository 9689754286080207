// Package proccpu reads the CPU time another process used, for the
// benchmarks that report CPU per unit of work of redis-server and of
// worker processes.
package proccpu

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the clock tick of /proc/<pid>/stat's times (USER_HZ, 100 on
// Linux).
const userHZ = 100

// Of returns the user + system CPU time process pid used so far, from
// /proc/<pid>/stat; 0 when it cannot be read (no such process, or a
// system without /proc).
func Of(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command may hold spaces and parentheses
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:]) // f[0] is the state, field 3 of stat
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // utime, field 14
	st, _ := strconv.ParseInt(f[12], 10, 64) // stime, field 15
	return time.Duration(ut+st) * time.Second / userHZ
}
