package bench

import (
	"bufio"
	"context"
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

// fireLine is one run reported by a worker.
type fireLine struct {
	task    string
	fireMS  int64
	startNS int64
	proc    string
}

func (f fireLine) lag() time.Duration {
	return time.Duration(f.startNS - f.fireMS*int64(time.Millisecond))
}

// skipLine is one skipped fire reported by a worker.
type skipLine struct {
	task   string
	fireMS int64
	reason string
	proc   string
}

// fleet is a set of worker processes and what they reported.
type fleet struct {
	e   *env
	dir string // worker logs

	mu     sync.Mutex
	fires  []fireLine
	skips  []skipLine
	notify chan fireLine // every fire, when not nil (never blocks the reader)
	// rec, when set before the workers start, receives the runs and
	// completions of bench jobs they report.
	rec   *recorder
	procs map[string]*proc
	seq   int
}

// proc is one worker process.
type proc struct {
	id   string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

func (e *env) newFleet() (*fleet, error) {
	dir, err := os.MkdirTemp("", "crontabbench")
	if err != nil {
		return nil, err
	}
	return &fleet{e: e, dir: dir, procs: map[string]*proc{}}, nil
}

// spawn starts a worker with tasks every:1s tasks and waits until it is
// heart-beating.
func (f *fleet) spawn(ctx context.Context, tasks int, extra ...string) (*proc, error) {
	f.mu.Lock()
	id := fmt.Sprintf("w%d", f.seq)
	f.seq++
	f.mu.Unlock()
	args := append([]string{WorkerArg, "-redis", f.e.srv.URL(), "-id", id, "-tasks", strconv.Itoa(tasks),
		"-workers", strconv.Itoa(f.e.cfg.Workers), "-batch", strconv.Itoa(f.e.cfg.Batch)}, extra...)
	cmd := exec.Command(f.e.cfg.Self, args...)
	setDeathSignal(cmd)
	logPath := filepath.Join(f.dir, id+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &proc{id: id, cmd: cmd, done: make(chan struct{}), log: logPath}
	f.mu.Lock()
	f.procs[id] = p
	f.mu.Unlock()
	var reading sync.WaitGroup
	reading.Go(func() { f.read(id, bufio.NewScanner(out)) })
	go func() {
		reading.Wait() // all output read before Wait closes the pipe
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := f.e.admin.ZScore(ctx, "{"+namespace+"}:processes", id).Result(); err == nil {
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("worker %s exited at start: %s", id, tail(logPath))
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			p.kill()
			return nil, fmt.Errorf("worker %s did not start within 20s: %s", id, tail(logPath))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *fleet) read(id string, sc *bufio.Scanner) {
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 0 && f.rec != nil && f.readJob(fields) {
			continue
		}
		if len(fields) != 4 {
			continue
		}
		fire, _ := strconv.ParseInt(fields[2], 10, 64)
		switch fields[0] {
		case "F":
			start, _ := strconv.ParseInt(fields[3], 10, 64)
			l := fireLine{task: fields[1], fireMS: fire, startNS: start, proc: id}
			f.mu.Lock()
			f.fires = append(f.fires, l)
			ch := f.notify
			f.mu.Unlock()
			if ch != nil {
				select {
				case ch <- l:
				default:
				}
			}
		case "S":
			f.mu.Lock()
			f.skips = append(f.skips, skipLine{task: fields[1], fireMS: fire, reason: fields[3], proc: id})
			f.mu.Unlock()
		}
	}
}

// readJob passes a "J" or "C" line of a worker running bench jobs to
// f.rec and tells whether the line was one.
func (f *fleet) readJob(fields []string) bool {
	var v [4]int64
	if len(fields) > len(v)+1 {
		return false
	}
	for i, s := range fields[1:] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return false
		}
		v[i] = n
	}
	switch {
	case fields[0] == "J" && len(fields) == 5:
		f.rec.record(int(v[0]), v[1], v[2], v[3])
	case fields[0] == "C" && len(fields) == 2:
		f.rec.completed(v[0])
	default:
		return false
	}
	return true
}

// kill sends SIGKILL and waits until the process is reaped.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM to every worker still running, waits for them
// (killing any that take over 20s) and removes the logs.
func (f *fleet) stop() {
	f.mu.Lock()
	procs := make([]*proc, 0, len(f.procs))
	for _, p := range f.procs {
		procs = append(procs, p)
	}
	f.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			f.e.logf("worker %s ignored SIGTERM for 20s; killing it", p.id)
			p.kill()
		}
	}
	if os.Getenv("CRONTABBENCH_KEEP") == "" {
		_ = os.RemoveAll(f.dir)
	} else {
		f.e.logf("worker logs kept in %s", f.dir)
	}
}

// awaitFires waits (at most 10s) until each of the first tasks tick tasks
// has fired or skipped its instant lastMS, so that a late fire at the end of
// a run counts as lag, not as a miss.
func (f *fleet) awaitFires(ctx context.Context, tasks int, lastMS int64) {
	deadline := time.Now().Add(10 * time.Second)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		done := map[string]bool{}
		f.mu.Lock()
		for _, l := range f.fires {
			if l.fireMS >= lastMS {
				done[l.task] = true
			}
		}
		for _, l := range f.skips {
			if l.fireMS >= lastMS {
				done[l.task] = true
			}
		}
		f.mu.Unlock()
		if len(done) >= tasks {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (f *fleet) snapshot() ([]fireLine, []skipLine) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fireLine(nil), f.fires...), append([]skipLine(nil), f.skips...)
}

// tail is the end of a worker log, for errors.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	s := string(b)
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	if s == "" {
		return "(empty log)"
	}
	return s
}
