package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// instance is one worker process: a slot runs one at a time, and a new one
// after each kill or termination.
type instance struct {
	id      string // the scheduler's process id: "w<slot>.<n>"
	slot    int
	cmd     *exec.Cmd
	journal string
	log     string
	started time.Time
	done    chan struct{} // closed once the process is reaped

	mu       sync.Mutex
	exited   time.Time
	exitErr  error
	stops    []span // SIGSTOP to SIGCONT
	signaled string // the fault that ended it: "sigkill", "sigterm", "shutdown"
}

func (in *instance) alive() bool {
	select {
	case <-in.done:
		return false
	default:
		return true
	}
}

// stoppedDuring reports whether the instance was stopped at any time in
// [from, to].
func (in *instance) stoppedDuring(from, to time.Time) bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	for _, s := range in.stops {
		if s.overlaps(from, to) {
			return true
		}
	}
	return false
}

// end is when the process exited, or now while it runs.
func (in *instance) end() time.Time {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.exited.IsZero() {
		return time.Now()
	}
	return in.exited
}

// fleet supervises the worker processes, one slot each.
type fleet struct {
	self    string // the executable run with WorkerArg
	dir     string // journals and logs
	ttl     time.Duration
	history int
	px      *proxies
	logf    func(format string, args ...any)

	mu        sync.Mutex
	slots     []*instance // the current instance of each slot
	all       []*instance
	seq       []int // instances started per slot
	closing   bool
	restarts  sync.WaitGroup
	startErrs int      // error exits before the scheduler started (Redis unreachable)
	runErrs   []string // error exits after it started: violations
}

func newFleet(self, dir string, workers int, ttl time.Duration, history int, px *proxies, logf func(string, ...any)) *fleet {
	return &fleet{self: self, dir: dir, ttl: ttl, history: history, px: px, logf: logf,
		slots: make([]*instance, workers), seq: make([]int, workers)}
}

// start starts a new instance in slot.
func (f *fleet) start(slot int) (*instance, error) {
	f.mu.Lock()
	if f.closing {
		f.mu.Unlock()
		return nil, nil
	}
	f.seq[slot]++
	id := fmt.Sprintf("w%d.%d", slot, f.seq[slot])
	f.mu.Unlock()
	in := &instance{id: id, slot: slot, journal: filepath.Join(f.dir, id+".journal"),
		log: filepath.Join(f.dir, id+".log"), done: make(chan struct{})}
	logf, err := os.Create(in.log)
	if err != nil {
		return nil, err
	}
	in.cmd = exec.Command(f.self, WorkerArg, "-redis", f.px.url(slotProxy(slot)), "-id", id, "-journal", in.journal,
		"-ttl", f.ttl.String(), "-history", strconv.Itoa(f.history))
	in.cmd.Stdout, in.cmd.Stderr = logf, logf
	in.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := in.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start worker %s: %w", id, err)
	}
	in.started = time.Now()
	f.mu.Lock()
	f.slots[slot] = in
	f.all = append(f.all, in)
	f.mu.Unlock()
	go func() {
		err := in.cmd.Wait()
		logf.Close()
		in.mu.Lock()
		in.exited, in.exitErr = time.Now(), err
		signaled := in.signaled
		in.mu.Unlock()
		close(in.done)
		if signaled == "" {
			f.unexpectedExit(in, err)
		}
	}()
	return in, nil
}

// unexpectedExit handles a worker that exited on its own: before the
// scheduler started (Redis unreachable, or its proxy cut) it is started
// again; after, that is a violation of Run's contract (it returns only
// when its ctx ends), and it is started again too.
func (f *fleet) unexpectedExit(in *instance, err error) {
	b, _ := os.ReadFile(in.log)
	f.mu.Lock()
	if strings.Contains(string(b), `msg="scheduler started"`) {
		f.runErrs = append(f.runErrs, fmt.Sprintf("worker %s: Run returned after the scheduler started (%v): %s",
			in.id, err, lastLines(string(b), 5)))
	} else {
		f.startErrs++
	}
	f.mu.Unlock()
	f.logf("worker %s exited on its own (%v); starting it again", in.id, err)
	f.restartAfter(in.slot, 500*time.Millisecond)
}

// restartAfter starts a new instance in slot after d, in the background.
func (f *fleet) restartAfter(slot int, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		return
	}
	f.restarts.Go(func() {
		time.Sleep(d)
		if _, err := f.start(slot); err != nil {
			f.logf("restart of slot %d failed: %v", slot, err)
		}
	})
}

// healthy returns the slots whose instance runs, is not stopped and has
// run for a process TTL (so it has registered and heart-beats).
func (f *fleet) healthy() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for i, in := range f.slots {
		if in == nil || !in.alive() || time.Since(in.started) < f.ttl {
			continue
		}
		in.mu.Lock()
		stopped := len(in.stops) > 0 && in.stops[len(in.stops)-1].to.IsZero()
		in.mu.Unlock()
		if !stopped {
			out = append(out, i)
		}
	}
	return out
}

func (f *fleet) current(slot int) *instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.slots[slot]
}

// kill SIGKILLs the slot's instance and waits until it is reaped.
func (f *fleet) kill(in *instance) {
	in.mu.Lock()
	in.signaled = string(KillWorker)
	in.mu.Unlock()
	_ = in.cmd.Process.Signal(syscall.SIGKILL)
	<-in.done
}

// term SIGTERMs the instance and waits for its graceful stop, at most the
// grace period and 15 s; it reports whether the process exited in time (it
// is SIGKILLed otherwise).
func (f *fleet) term(in *instance, why string) bool {
	in.mu.Lock()
	in.signaled = why
	in.mu.Unlock()
	_ = in.cmd.Process.Signal(syscall.SIGCONT) // a stopped process cannot stop
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.done:
		return true
	case <-time.After(gracePeriod + 15*time.Second):
		_ = in.cmd.Process.Signal(syscall.SIGKILL)
		<-in.done
		return false
	}
}

// stop SIGSTOPs the instance for d, then SIGCONTs it.
func (f *fleet) stop(in *instance, d time.Duration) {
	in.mu.Lock()
	in.stops = append(in.stops, span{from: time.Now()})
	in.mu.Unlock()
	_ = in.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(d)
	_ = in.cmd.Process.Signal(syscall.SIGCONT)
	in.mu.Lock()
	in.stops[len(in.stops)-1].to = time.Now()
	in.mu.Unlock()
}

// shutdown stops every instance gracefully (SIGTERM, waited for) after the
// pending restarts, and returns the ids of those that did not stop within
// the bound.
func (f *fleet) shutdown() []string {
	f.mu.Lock()
	f.closing = true
	f.mu.Unlock()
	f.restarts.Wait()
	f.mu.Lock()
	slots := append([]*instance(nil), f.slots...)
	f.mu.Unlock()
	var late []string
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, in := range slots {
		if in == nil || !in.alive() {
			continue
		}
		wg.Go(func() {
			if !f.term(in, "shutdown") {
				mu.Lock()
				late = append(late, in.id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return late
}

// kill every process that still runs: the harness's own failure path.
func (f *fleet) killAll() {
	f.mu.Lock()
	f.closing = true
	all := append([]*instance(nil), f.all...)
	f.mu.Unlock()
	for _, in := range all {
		if in.alive() {
			f.kill(in)
		}
	}
	f.restarts.Wait()
	for _, in := range all {
		if in.alive() {
			f.kill(in)
		}
	}
}

func (f *fleet) instances() []*instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*instance(nil), f.all...)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
