package bench

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	crontab "github.com/gocrontab/crontab/runtime"
)

// WorkerArg, as the first argument, runs the bench binary as a scheduler
// process of S3, S5 and the limited and priority S1 (see WorkerMain).
const WorkerArg = "__worker"

// WorkerMain is the worker mode: a scheduler process with -tasks every:1s
// tasks ("tick-000", ...) registered programmatically, on the namespace the
// bench uses. For every run it prints "F <task> <fire unix ms> <start unix
// ns>" to stdout at handler start, and "S <task> <fire unix ms> <reason>" for
// every skipped fire, each line written at once (so a SIGKILL loses none).
//
// With -jobs plain or -jobs priority it also registers the bench job types
// of S1 or of the priority backlog (with -max-running and -rate), and
// prints "J <job number> <start unix ns> <end unix ns> <fire unix ns>" for
// every run and "C <unix ns>" for every job completed (after its ack),
// buffered and flushed every 20 ms and at exit: the times are in the lines,
// so the buffering delays no figure.
//
// It stops gracefully on SIGTERM.
func WorkerMain(args []string) error {
	fs := flag.NewFlagSet("crontabbench "+WorkerArg, flag.ContinueOnError)
	url := fs.String("redis", "", "redis URL")
	id := fs.String("id", "", "process id")
	tasks := fs.Int("tasks", 1, "every:1s tasks to register")
	sleepFor := fs.Duration("sleep", 0, "how long each run lasts")
	ttl := fs.Duration("ttl", 0, "WithProcessTTL (0: the default)")
	lease := fs.Duration("run-lease", 0, "WithRunLease (0: the default)")
	workers := fs.Int("workers", 0, "WithWorkers (0: the default)")
	batch := fs.Int("batch", 0, "WithBatch (0: the default)")
	jobs := fs.String("jobs", "", `bench job types to run: "plain" (S1's) or "priority" ("": none)`)
	maxRunning := fs.Int("max-running", 0, "MaxRunning of the job types")
	rate := fs.String("rate", "", "Rate of the job types, N/D")
	withTasks := fs.Bool("with-tasks", false, "WithTasks(the job types)")
	schedules := fs.Bool("schedules", false, "register S6's run-time task type (tenant)")
	noHistory := fs.Bool("no-history", false, "WithHistory(0, time.Hour): keep no run history")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	lo := 1
	if *jobs != "" {
		lo = 0
	}
	if *tasks < lo || *tasks > len(tickFactories) {
		return fmt.Errorf("-tasks %d: want %d to %d", *tasks, lo, len(tickFactories))
	}
	var w workload
	if *jobs != "" {
		kinds, ok := kindSets[*jobs]
		if !ok {
			return fmt.Errorf("-jobs %q: want plain or priority", *jobs)
		}
		w = workload{kinds: kinds, maxRunning: *maxRunning, withTasks: *withTasks}
		if *rate != "" {
			r, err := crontab.ParseRate(*rate)
			if err != nil {
				return fmt.Errorf("-rate: %w", err)
			}
			w.rate = r
		}
	}
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer func() {
			pprof.StopCPUProfile()
			pf.Close()
		}()
	}
	opt, err := redis.ParseURL(*url)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	workerSleep = *sleepFor
	reg := crontab.NewRegistry()
	var out *lineWriter
	if *jobs != "" || *schedules {
		out = newLineWriter(os.Stdout)
		defer out.close()
	}
	if *jobs != "" {
		if reg, err = w.registry(out); err != nil {
			return err
		}
	}
	if *schedules {
		if err := tenantRegistry(reg, out); err != nil {
			return err
		}
	}
	for i := range *tasks {
		if err := reg.Add(crontab.TaskConfig{Name: tickName(i), Expression: "every:1s", Timeout: 30 * time.Second,
			New: tickFactories[i]}); err != nil {
			return err
		}
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts := []crontab.Option{crontab.WithNamespace(namespace), crontab.WithLogger(logger),
		crontab.WithProcessID(*id), crontab.WithGracePeriod(5 * time.Second),
		crontab.WithHooks(crontab.Hooks{Skipped: func(_ context.Context, run crontab.RunInfo, reason crontab.SkipReason) {
			emit("S %s %d %s\n", run.Task, run.Fire.UnixMilli(), reason)
		}})}
	if *ttl > 0 {
		opts = append(opts, crontab.WithProcessTTL(*ttl))
	}
	if *noHistory {
		opts = append(opts, crontab.WithHistory(0, time.Hour))
	}
	if *lease > 0 {
		opts = append(opts, crontab.WithRunLease(*lease))
	}
	// 0 means the runtime's default: the options refuse 0 itself.
	if *workers > 0 {
		opts = append(opts, crontab.WithWorkers(*workers))
	}
	if *batch > 0 {
		opts = append(opts, crontab.WithBatch(*batch))
	}
	if out != nil {
		opts = append(opts, crontab.WithListener(out))
		if w.withTasks {
			opts = append(opts, crontab.WithTasks(append(w.typeNames(), tickNames(*tasks)...)...))
		}
	}
	s, err := crontab.NewScheduler(rdb, reg, opts...)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return s.Run(ctx)
}

func tickName(i int) string { return fmt.Sprintf("tick-%03d", i) }

func tickNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = tickName(i)
	}
	return names
}

// lineWriter is the stdout of a worker running bench jobs: "J" and "C"
// lines (see WorkerMain), buffered, flushed every 20 ms and by close.
type lineWriter struct {
	mu   sync.Mutex
	w    *bufio.Writer
	buf  []byte
	stop chan struct{}
	done chan struct{}
}

func newLineWriter(f *os.File) *lineWriter {
	l := &lineWriter{w: bufio.NewWriterSize(f, 64<<10), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(l.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				l.mu.Lock()
				_ = l.w.Flush()
				l.mu.Unlock()
			}
		}
	}()
	return l
}

// line writes fields, space-separated, as one line.
func (l *lineWriter) line(kind byte, fields ...int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := append(l.buf[:0], kind)
	for _, f := range fields {
		b = strconv.AppendInt(append(b, ' '), f, 10)
	}
	l.buf = append(b, '\n')
	_, _ = l.w.Write(l.buf)
}

// fire writes "F <task> <fire unix ms> <start unix ns>", as emit does for
// the tick tasks, buffered.
func (l *lineWriter) fire(task string, fireMS, startNS int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := append(append(l.buf[:0], "F "...), task...)
	b = strconv.AppendInt(append(b, ' '), fireMS, 10)
	b = strconv.AppendInt(append(b, ' '), startNS, 10)
	l.buf = append(b, '\n')
	_, _ = l.w.Write(l.buf)
}

func (l *lineWriter) ran(n int, start, end, fire time.Time) {
	l.line('J', int64(n), start.UnixNano(), end.UnixNano(), fire.UnixNano())
}

// OnComplete reports a completed job (the runs of tick tasks are not).
func (l *lineWriter) OnComplete(_ context.Context, res crontab.Result) {
	if res.JobID != "" {
		l.line('C', time.Now().UnixNano())
	}
}

// close stops the flushes and writes what is buffered.
func (l *lineWriter) close() {
	close(l.stop)
	<-l.done
	l.mu.Lock()
	_ = l.w.Flush()
	l.mu.Unlock()
}

// workerSleep is how long a tick run lasts (worker mode only).
var workerSleep time.Duration

var emitMu sync.Mutex

// emit writes one line to stdout with one write.
func emit(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	emitMu.Lock()
	_, _ = os.Stdout.WriteString(line)
	emitMu.Unlock()
}

// tick is the every:1s task of the worker. The type parameters only make
// distinct types, as a registry wants one type per task.
type tick[A, B, C any] struct{}

// Handle reports the run, then lasts workerSleep.
func (tick[A, B, C]) Handle(ctx context.Context) error {
	now := time.Now()
	run, _ := crontab.Run(ctx)
	emit("F %s %d %s\n", run.Task, run.Fire.UnixMilli(), strconv.FormatInt(now.UnixNano(), 10))
	if workerSleep > 0 {
		sleep(ctx, workerSleep)
	}
	return nil
}

type factory = func() crontab.TaskInterface

type (
	d0 struct{}
	d1 struct{}
	d2 struct{}
	d3 struct{}
	d4 struct{}
	d5 struct{}
	d6 struct{}
	d7 struct{}
	d8 struct{}
	d9 struct{}
)

func newTick[A, B, C any]() crontab.TaskInterface { return new(tick[A, B, C]) }

func units[A, B any](f []factory) []factory {
	return append(f, newTick[A, B, d0], newTick[A, B, d1], newTick[A, B, d2], newTick[A, B, d3], newTick[A, B, d4],
		newTick[A, B, d5], newTick[A, B, d6], newTick[A, B, d7], newTick[A, B, d8], newTick[A, B, d9])
}

func tens[A any](f []factory) []factory {
	f = units[A, d0](f)
	f = units[A, d1](f)
	f = units[A, d2](f)
	f = units[A, d3](f)
	f = units[A, d4](f)
	f = units[A, d5](f)
	f = units[A, d6](f)
	f = units[A, d7](f)
	f = units[A, d8](f)
	return units[A, d9](f)
}

// tickFactories make 1000 distinct task types.
var tickFactories = func() []factory {
	var f []factory
	f = tens[d0](f)
	f = tens[d1](f)
	f = tens[d2](f)
	f = tens[d3](f)
	f = tens[d4](f)
	f = tens[d5](f)
	f = tens[d6](f)
	f = tens[d7](f)
	f = tens[d8](f)
	return tens[d9](f)
}()
