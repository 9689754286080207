package chaos

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// FaultKind is one kind of fault the soak injects.
type FaultKind string

// The fault kinds, in the order of the summary table.
const (
	// KillWorker: SIGKILL of a worker process, restarted after Fault.After.
	KillWorker FaultKind = "sigkill"
	// StopWorker: SIGSTOP of a worker process for Fault.For, then SIGCONT.
	StopWorker FaultKind = "sigstop"
	// TermWorker: SIGTERM of a worker process (a graceful stop, waited for),
	// restarted after Fault.After.
	TermWorker FaultKind = "sigterm"
	// RestartRedis: SIGKILL of redis-server (a crash), started again from its
	// AOF after Fault.For.
	RestartRedis FaultKind = "redis-restart"
	// StallRedis: SIGSTOP of redis-server for Fault.For, then SIGCONT.
	StallRedis FaultKind = "redis-stall"
	// Latency: a latency toxic (Fault.Latency ± Fault.Jitter on every reply)
	// on one worker's proxy, the producer's, or all of them, for Fault.For.
	Latency FaultKind = "latency"
	// Cut: one worker's proxy (or the producer's) closes every connection and
	// refuses new ones for Fault.For.
	Cut FaultKind = "cut"
)

// Kinds lists every fault kind.
var Kinds = []FaultKind{KillWorker, StopWorker, TermWorker, RestartRedis, StallRedis, Latency, Cut}

// Target values of a fault that does not hit one worker.
const (
	// TargetProducer is the producer's proxy.
	TargetProducer = -1
	// TargetAll is every proxy at once.
	TargetAll = -2
)

// Fault is one planned fault.
type Fault struct {
	// Gap is the wait after the previous fault ended.
	Gap time.Duration
	// Kind is what is done.
	Kind FaultKind
	// Target is the worker slot (0 to workers-1), TargetProducer or
	// TargetAll. A worker fault whose slot is not healthy when its turn
	// comes hits the next healthy slot, or is skipped when sparing one would
	// leave fewer than one healthy worker.
	Target int
	// For is how long the fault lasts (stop, stall, restart, latency, cut).
	For time.Duration
	// After is how long a killed or terminated worker stays down.
	After time.Duration
	// Latency and Jitter are the latency toxic's.
	Latency, Jitter time.Duration
}

// String is the fault as the progress log prints it.
func (f Fault) String() string {
	target := fmt.Sprintf("w%d", f.Target)
	switch f.Target {
	case TargetProducer:
		target = "producer"
	case TargetAll:
		target = "all"
	}
	switch f.Kind {
	case KillWorker, TermWorker:
		return fmt.Sprintf("%s %s, restarted after %v", f.Kind, target, f.After)
	case StopWorker:
		return fmt.Sprintf("%s %s for %v", f.Kind, target, f.For)
	case RestartRedis:
		return fmt.Sprintf("%s (SIGKILL, down %v)", f.Kind, f.For)
	case StallRedis:
		return fmt.Sprintf("%s (SIGSTOP) for %v", f.Kind, f.For)
	case Latency:
		return fmt.Sprintf("%s %v±%v on %s for %v", f.Kind, f.Latency, f.Jitter, target, f.For)
	default:
		return fmt.Sprintf("%s %s for %v", f.Kind, target, f.For)
	}
}

// between returns a random duration in [lo, hi) rounded to the millisecond.
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return (lo + time.Duration(r.Int64N(int64(hi-lo)))).Round(time.Millisecond)
}

// Plan returns the faults of a soak of the given length with workers
// worker slots and process TTL ttl: a pure function of its arguments. The
// kinds come in rounds, each a shuffle of every kind, so a run of a minute
// sees each kind at least once. Gaps are 0.5-3 s. Worker stops last 0.2 s to
// 2 TTL, so some outlast the TTL (the stopped process's runs are then
// recorded abandoned); cuts likewise; a Redis stall lasts under 2 s and a
// Redis restart keeps it down 0.2-1.5 s.
func Plan(seed uint64, length time.Duration, workers int, ttl time.Duration) []Fault {
	r := rand.New(rand.NewPCG(seed, 0x6368616f73)) // "chaos"
	var plan []Fault
	var round []FaultKind
	var total time.Duration
	for len(plan) < 10000 { // bound: a plan of days is still finite
		if len(round) == 0 {
			round = append([]FaultKind(nil), Kinds...)
			r.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		}
		f := Fault{Gap: between(r, 500*time.Millisecond, 3*time.Second), Kind: round[0], Target: r.IntN(workers)}
		round = round[1:]
		switch f.Kind {
		case KillWorker, TermWorker:
			f.After = between(r, 200*time.Millisecond, 2*time.Second)
		case StopWorker:
			f.For = between(r, 200*time.Millisecond, 2*ttl)
		case RestartRedis:
			f.For = between(r, 200*time.Millisecond, 1500*time.Millisecond)
		case StallRedis:
			f.For = between(r, 200*time.Millisecond, 1900*time.Millisecond)
		case Latency:
			f.For = between(r, time.Second, 4*time.Second)
			f.Latency = between(r, 10*time.Millisecond, 300*time.Millisecond)
			f.Jitter = f.Latency / 2
			switch n := r.IntN(workers + 2); {
			case n == workers:
				f.Target = TargetProducer
			case n == workers+1:
				f.Target = TargetAll
			}
		case Cut:
			f.For = between(r, 200*time.Millisecond, 2*ttl)
			if r.IntN(workers+1) == workers {
				f.Target = TargetProducer
			}
		}
		if total+f.Gap >= length {
			break
		}
		total += f.Gap + f.For
		plan = append(plan, f)
	}
	return plan
}
