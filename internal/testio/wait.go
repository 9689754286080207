package testio

import (
	"testing"
	"time"
)

// WaitFor polls cond every 10ms until it holds, and fails t (Fatalf) when d
// passes first. Tests wait for a condition with it, never for a fixed time
// with a margin.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
