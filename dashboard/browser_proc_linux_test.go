package dashboard_test

import (
	"os/exec"
	"syscall"
)

// ownGroup starts cmd in a process group of its own, killed with the test
// binary (chromedriver; the browser it starts joins its group), so that
// killGroup stops chromium too.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills cmd's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
