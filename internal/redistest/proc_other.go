//go:build unix && !linux

package redistest

import (
	"os/exec"
	"syscall"
)

// newCommand returns a command for a server process in its own process group
// (so a terminal's ^C reaches only the test binary, and Kill can signal the
// whole group). Only Linux can also have it killed when the test binary dies.
func newCommand(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

func startCommand(cmd *exec.Cmd) error { return cmd.Start() }
