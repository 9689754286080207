//go:build !linux

package bench

import "os/exec"

// setDeathSignal does nothing: only Linux kills children with their parent.
func setDeathSignal(*exec.Cmd) {}
