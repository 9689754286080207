package runtime

import (
	"syscall"
	"time"
)

// preciseSleep sleeps d with nanosleep(2), which wakes within tens of
// microseconds; the goroutine's thread blocks, and Go gives its processor
// to other goroutines meanwhile.
func preciseSleep(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
