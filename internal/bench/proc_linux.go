package bench

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill a worker when the bench dies.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
