package testio

import (
	"testing"
	"time"
)

func TestWaitForPolls(t *testing.T) {
	n := 0
	WaitFor(t, 5*time.Second, "the third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("cond called %d times, want 3", n)
	}
}
