package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/runtime/schedule"
	"github.com/redis/go-redis/v9"
)

// Scheduler fires the tasks of a Registry on Redis. Any number of
// schedulers, in any number of processes, may share one Redis namespace:
// each scheduled instant fires once. See the package documentation for the
// design.
//
// A Scheduler composes four components, each with its own state, goroutines
// and tests: the dispatcher (dispatch.go: the claim loop, and the instant
// split among peers, share.go), the task runner (execute.go,
// finishbatch.go: fires in flight, their batched finishes), the job runner
// (jobrun.go: claimed jobs, job goroutines, batched acks) and the
// maintainer (maintain.go: heartbeat, renewals, master duties). What they
// share is the engine.
type Scheduler struct {
	*engine
}

// engine is what the components share: the data model, the registry, the
// settings, Redis time, the worker slots, the runs in progress, and each
// other.
type engine struct {
	rdb redis.UniversalClient
	db  *rdb.RDB  // every key, script and stored format
	reg *Registry // the tasks this process runs: all's, or its WithTasks set (roles.go)
	all *Registry // every registered task, for enqueueing (a task's retry)
	// runTypes are the names of reg's tasks, sorted, taken at Run: the set
	// this process publishes for the instant split (share.go) and claims
	// jobs of.
	runTypes []string
	opts     options
	keys     keys
	log      *slog.Logger
	clock    *serverClock
	cache    schedule.Cache
	id       string
	start    time.Time
	wakeCh   chan struct{}
	slots    chan struct{} // one token per free worker

	// provided builds the handler values of the types given to Provide,
	// by task name (provide.go); other types use New.
	provided map[string]*providedValue

	running  sync.WaitGroup  // handlers, and runs not yet reported
	runCtx   context.Context // parent of handler contexts; cancelled after the grace period
	stopRuns context.CancelFunc
	started  chan struct{} // closed once tasks are registered and dispatch begins
	health   *healthState  // what the probes read (health.go)

	tasks *taskRunner
	jobs  *jobRunner
	disp  *dispatcher
	maint *maintainer
}

// NewScheduler returns a scheduler for the tasks of reg on client.
func NewScheduler(client redis.UniversalClient, reg *Registry, opts ...Option) (*Scheduler, error) {
	if client == nil {
		return nil, errors.New("crontab: nil redis client")
	}
	if reg == nil {
		return nil, errors.New("crontab: nil registry")
	}
	o, err := buildOptions(scopeScheduler, opts)
	if err != nil {
		return nil, err
	}
	provided, err := resolveProvided(reg, o.provide) // against every registered type
	if err != nil {
		return nil, err
	}
	run, err := runSet(reg, o)
	if err != nil {
		return nil, err
	}
	if err := checkLevels(priorities(run)); err != nil {
		return nil, err
	}
	if o.processID == "" {
		o.processID = defaultProcessID()
	}
	e := &engine{
		rdb:     client,
		db:      rdb.New(client, o.namespace),
		reg:     run,
		all:     reg,
		opts:    o,
		keys:    newKeys(o.namespace),
		log:     o.logger.With("process", o.processID),
		clock:   newServerClock(client, o.localClock),
		id:      o.processID,
		wakeCh:  make(chan struct{}, 1),
		slots:   make(chan struct{}, o.workers),
		started: make(chan struct{}),
		health:  newHealthState(),
	}
	e.provided = provided
	for range o.workers {
		e.slots <- struct{}{}
	}
	e.tasks = newTaskRunner(e)
	e.jobs = newJobRunner(e)
	e.disp = newDispatcher(e)
	e.maint = newMaintainer(e)
	return &Scheduler{e}, nil
}

// ID returns the process id this scheduler uses in locks, history and
// heartbeats.
func (s *Scheduler) ID() string { return s.id }

// Ready returns a channel that is closed once Run has registered the tasks
// and dispatch runs: from then on the scheduler claims due tasks and jobs.
// It is never closed when Run fails to start.
func (s *Scheduler) Ready() <-chan struct{} { return s.started }

// Run registers the tasks and fires them until ctx ends, then shuts down
// gracefully: it stops claiming, lets running handlers finish within the
// grace period (then cancels their ctx), and releases its locks.
//
// At start Run waits for Redis: every step that talks to it (the clock
// sync with Redis TIME, the quarantine of foreign values, the first
// heartbeat, the registration of the tasks) is tried again, all of them
// from the first, while it fails with a transient error: Redis refuses,
// resets or times out connections, or replies LOADING, BUSY, MASTERDOWN,
// CLUSTERDOWN, TRYAGAIN, READONLY, NOREPLICAS or max clients. The retries back off from
// 100ms, doubling up to 5s, with ±20% jitter; each failed attempt is logged
// at warning level with the address of Redis, the attempt and the delay.
// A permanent error (NOAUTH, WRONGPASS, NOPERM, WRONGTYPE, OOM, a script
// error, a closed client) is returned at once. With WithStartTimeout, Run
// gives up after that long and returns the last error, wrapped with the
// address and the attempts. Ready is closed once the start succeeds.
//
// Run returns nil after a graceful shutdown, and also when ctx ends before
// the start succeeds (a supervisor stopping a process that never got Redis
// is not a failure); else the error that kept it from starting.
func (s *Scheduler) Run(ctx context.Context) error {
	s.health.state.Store(runStarting)
	defer s.health.state.Store(runReturned)
	if err := s.startup(ctx); err != nil {
		if errors.Is(err, errStopped) {
			s.log.Info("scheduler stopped before it started: its ctx ended")
			return nil
		}
		return err
	}
	runCtx, stopRuns := context.WithCancel(context.WithoutCancel(ctx))
	s.runCtx, s.stopRuns = runCtx, stopRuns
	defer stopRuns()
	// Run leases are renewed until the handlers are done, after ctx ends
	// (runlease.go).
	leaseCtx, stopLeases := context.WithCancel(context.WithoutCancel(ctx))
	var leases sync.WaitGroup
	leases.Go(func() { s.tasks.runLeaseRenewer(leaseCtx) })
	defer leases.Wait()
	defer stopLeases()

	sub := s.db.SubscribeWake(ctx)
	defer sub.Close()
	var bg sync.WaitGroup
	bg.Go(func() { s.listenWake(ctx, sub) })
	bg.Go(func() { s.maint.maintain(ctx) })
	s.log.Info("scheduler started", "tasks", len(s.reg.Entries()), "namespace", s.opts.namespace,
		"clock_offset", s.clock.Offset().String())
	s.health.state.Store(runRunning) // before Ready: a probe after Ready sees it
	close(s.started)
	stopWatch := context.AfterFunc(ctx, func() { s.health.state.CompareAndSwap(runRunning, runStopping) })
	defer stopWatch()

	s.disp.dispatch(ctx)
	s.jobs.closing.Store(true)
	bg.Wait()
	s.jobs.giveBackWaiting(true)
	return s.shutdown()
}

// shutdown waits for running handlers within the grace period, cancels the
// rest, and removes this process's heartbeat, master lock and job slots.
func (s *Scheduler) shutdown() error {
	done := make(chan struct{})
	go func() { s.running.Wait(); close(done) }()
	alive, stopAlive := context.WithCancel(context.Background())
	kept := make(chan struct{})
	go func() { s.maint.keepAlive(alive); close(kept) }()
	defer func() { stopAlive(); <-kept }()
	grace := time.NewTimer(s.opts.grace)
	defer grace.Stop()
	ended := true
	select {
	case <-done:
	case <-grace.C:
		s.log.Warn("grace period over; cancelling running handlers", "grace", s.opts.grace.String())
		s.stopRuns()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			ended = false
			s.log.Error("handlers ignore cancellation; leaving their runs to be recorded as abandoned")
		}
	}
	stopAlive()
	<-kept
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ended {
		s.jobs.releaseJobSlots(ctx) // its jobs have ended (a handler still running keeps its slot to the lease's end)
	}
	err := s.db.Leave(ctx, s.id)
	if rerr := s.db.ReleaseMaster(ctx, s.id); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		s.log.Warn("shutdown: could not remove heartbeat", "err", err)
	}
	s.log.Info("scheduler stopped")
	return nil
}

// listenWake turns messages on the wake channel into non-blocking signals
// for the dispatch loop.
func (e *engine) listenWake(ctx context.Context, sub *redis.PubSub) {
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			e.wake()
		}
	}
}

// wake makes the dispatch loop look at the queue now.
func (e *engine) wake() {
	select {
	case e.wakeCh <- struct{}{}:
	default:
	}
}

func defaultProcessID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}
