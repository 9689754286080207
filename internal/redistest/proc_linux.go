package redistest

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// newCommand returns a command for a server process in its own process group
// (so a terminal's ^C reaches only the test binary, and Kill can signal the
// whole group) that the kernel kills when the test binary dies.
func newCommand(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// spawner is a goroutine locked to an OS thread that never exits. Pdeathsig
// fires when the thread that forked the child exits, not the process, so
// every server is forked from this one long-lived thread.
var spawner = sync.OnceValue(func() chan<- spawnRequest {
	reqs := make(chan spawnRequest)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread lives as long as the binary
		for r := range reqs {
			r.done <- r.cmd.Start()
		}
	}()
	return reqs
})

// startCommand starts cmd from the spawner thread.
func startCommand(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	spawner() <- spawnRequest{cmd: cmd, done: done}
	return <-done
}
