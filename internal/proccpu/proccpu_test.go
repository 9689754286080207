package proccpu

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// TestOf: the CPU time of this process grows while it spins, and a
// process that does not exist reads 0.
func TestOf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/<pid>/stat is Linux's")
	}
	before := Of(os.Getpid())
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	if after := Of(os.Getpid()); after-before < 100*time.Millisecond {
		t.Errorf("CPU time grew by %v over 300 ms of spinning", after-before)
	}
	if got := Of(1 << 30); got != 0 {
		t.Errorf("a process that does not exist: %v", got)
	}
}
