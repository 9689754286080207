package bench

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	crontab "github.com/gocrontab/crontab/runtime"
)

// WorkerArg, as the first argument, runs the bench binary as a scheduler
// process of S3 and S5 (see WorkerMain).
const WorkerArg = "__worker"

// WorkerMain is the worker mode: a scheduler process with -tasks every:1s
// tasks ("tick-000", ...) registered programmatically, on the namespace the
// bench uses. For every run it prints "F <task> <fire unix ms> <start unix
// ns>" to stdout at handler start, and "S <task> <fire unix ms> <reason>" for
// every skipped fire, each line written at once (so a SIGKILL loses none).
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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tasks < 1 || *tasks > len(tickFactories) {
		return fmt.Errorf("-tasks %d: want 1 to %d", *tasks, len(tickFactories))
	}
	opt, err := redis.ParseURL(*url)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	workerSleep = *sleepFor
	reg := crontab.NewRegistry()
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
	s, err := crontab.NewScheduler(rdb, reg, opts...)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return s.Run(ctx)
}

func tickName(i int) string { return fmt.Sprintf("tick-%03d", i) }

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
