// Command crontabchaos is the chaos soak of the scheduler (make chaos): real
// worker processes (this binary, run again as a worker) and a producer of
// delayed jobs work on a private redis-server (appendonly yes, appendfsync
// always) while random faults, fixed by -seed, hit them: SIGKILL, SIGSTOP
// and SIGTERM of workers, a Redis crash and restart from its AOF, a Redis
// stall, and latency and cut connections through in-process toxiproxy
// proxies. A checker then asserts what runtime/doc.go guarantees:
//
//   - every instant of every periodic task ran once, or is recorded in the
//     history (skipped, abandoned or failed), and none ran twice or early;
//   - no two runs of a non-concurrent task overlap (but for the documented
//     limit: a run of a stopped or cut-off process recorded abandoned);
//   - every job enqueued and not cancelled ran at least once, none early,
//     and no job that Cancel removed ran;
//   - after a graceful stop of every worker, no run lease, lock, job owner
//     or claim lease is left in Redis.
//
// Usage:
//
//	crontabchaos [-seed N] [-duration D] [-workers N] [-ttl D] [-dir DIR]
//
// It prints a line per fault, then a summary table, and exits 1 when a
// guarantee was broken (each violation is printed with its evidence; the
// journals and logs are kept in the directory printed) and 2 on a usage or
// harness error. RELIABILITY.md lists the runs done and their seeds.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gocrontab/crontab/internal/chaos"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == chaos.WorkerArg {
		os.Exit(chaos.WorkerMain(os.Args[2:]))
	}
	seed := flag.Uint64("seed", 1, "seed of the fault plan and the producer")
	duration := flag.Duration("duration", time.Minute, "how long faults are injected")
	workers := flag.Int("workers", 3, "worker processes (at least 2)")
	ttl := flag.Duration("ttl", 3*time.Second, "the workers' process TTL")
	dir := flag.String("dir", "", "keep journals and logs here (default: a temporary directory, kept only after a violation)")
	flag.Parse()
	if flag.NArg() > 0 || *workers < 2 || *duration <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := chaos.Run(ctx, chaos.Config{Seed: *seed, Duration: *duration, Workers: *workers, ProcessTTL: *ttl, Dir: *dir,
		Logf: func(format string, args ...any) { fmt.Printf(format+"\n", args...) }})
	if rep != nil {
		fmt.Print("\n", rep)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crontabchaos:", err)
		os.Exit(2)
	}
	if len(rep.Violations) > 0 {
		os.Exit(1)
	}
}
