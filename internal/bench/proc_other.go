//go:build !linux

package bench

import (
	"os/exec"
	"time"
)

// setDeathSignal does nothing: only Linux kills children with their parent.
func setDeathSignal(*exec.Cmd) {}

// procCPU is not measured here: 0.
func procCPU(int) time.Duration { return 0 }
