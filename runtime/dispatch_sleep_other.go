//go:build !linux

package runtime

import "time"

// preciseSleep sleeps d; only Linux gets the nanosecond timer.
func preciseSleep(d time.Duration) { time.Sleep(d) }
