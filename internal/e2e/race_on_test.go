//go:build race

package e2e

// raceEnabled reports whether this test binary has the race detector: the
// programs it builds and runs get it too.
const raceEnabled = true
