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
	"sync/atomic"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/runtime/schedule"
	"github.com/redis/go-redis/v9"
)

// Scheduler fires the tasks of a Registry on Redis. Any number of
// schedulers, in any number of processes, may share one Redis namespace:
// each scheduled instant fires once. See the package documentation for the
// design.
type Scheduler struct {
	rdb    redis.UniversalClient
	db     *rdb.RDB // every key, script and stored format
	reg    *Registry
	opts   options
	keys   keys
	log    *slog.Logger
	clock  *serverClock
	cache  schedule.Cache
	id     string
	start  time.Time
	wakeCh chan struct{}
	slots  chan struct{} // one token per free worker

	mu              sync.Mutex
	inflight        map[string]*inflightRun // by run id
	unknownJobTypes onceSet                 // job types seen that this process lacks
	ignored         map[string]int64        // due members this process cannot run, by score
	dataEpoch       string                  // created_at of meta when last checked (maintain goroutine only)
	badStatus       onceSet                 // "task|status" of unknown statuses logged (dispatch goroutine only)
	jobs            jobRunner               // idle job goroutines, batched acks (jobrun.go)
	finishes        batchQueue[*runEnd]     // batched finishes of task runs (finishbatch.go)
	running         sync.WaitGroup
	runCtx          context.Context // parent of handler contexts; cancelled after the grace period
	stopRuns        context.CancelFunc
	isMaster        bool
	digest          string                    // registryDigest of reg, taken at Run
	peerDigests     map[string]string         // live process id -> its registry digest (maintain goroutine only)
	share           atomic.Pointer[peerShare] // this process's share of each instant (share.go)
	started         chan struct{}             // closed once tasks are registered and dispatch begins
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
	if o.processID == "" {
		o.processID = defaultProcessID()
	}
	s := &Scheduler{
		rdb:         client,
		db:          rdb.New(client, o.namespace),
		reg:         reg,
		opts:        o,
		keys:        newKeys(o.namespace),
		log:         o.logger.With("process", o.processID),
		clock:       newServerClock(client, o.localClock),
		id:          o.processID,
		wakeCh:      make(chan struct{}, 1),
		slots:       make(chan struct{}, o.workers),
		inflight:    make(map[string]*inflightRun),
		ignored:     make(map[string]int64),
		peerDigests: make(map[string]string),
		started:     make(chan struct{}),
	}
	for range o.workers {
		s.slots <- struct{}{}
	}
	s.jobs.waiting = make(chan *jobRun, o.batch)
	s.jobs.kick = make(chan struct{}, 1)
	s.jobs.claims = make(map[string]int)
	s.jobs.acks.write = s.flushAcks
	s.finishes.linger, s.finishes.write = finishLinger, s.flushFinishes
	return s, nil
}

// ID returns the process id this scheduler uses in locks, history and
// heartbeats.
func (s *Scheduler) ID() string { return s.id }

// Run registers the tasks and fires them until ctx ends, then shuts down
// gracefully: it stops claiming, lets running handlers finish within the
// grace period (then cancels their ctx), and releases its locks. It returns
// nil after a graceful shutdown, or the error that kept it from starting.
func (s *Scheduler) Run(ctx context.Context) error {
	if err := s.clock.Sync(ctx, 5); err != nil {
		return err
	}
	s.start = s.clock.Now()
	s.quarantine(ctx)
	s.digest = registryDigest(s.reg)
	if err := s.heartbeat(ctx); err != nil {
		return fmt.Errorf("crontab: heartbeat: %w", err)
	}
	if err := s.register(ctx); err != nil {
		return err
	}
	runCtx, stopRuns := context.WithCancel(context.WithoutCancel(ctx))
	s.runCtx, s.stopRuns = runCtx, stopRuns
	defer stopRuns()
	// Run leases are renewed until the handlers are done, after ctx ends
	// (runlease.go).
	leaseCtx, stopLeases := context.WithCancel(context.WithoutCancel(ctx))
	var leases sync.WaitGroup
	leases.Go(func() { s.runLeaseRenewer(leaseCtx) })
	defer leases.Wait()
	defer stopLeases()

	sub := s.rdb.Subscribe(ctx, s.keys.Wake())
	defer sub.Close()
	var bg sync.WaitGroup
	bg.Go(func() { s.listenWake(ctx, sub) })
	bg.Go(func() { s.maintain(ctx) })
	s.log.Info("scheduler started", "tasks", len(s.reg.Entries()), "namespace", s.opts.namespace,
		"clock_offset", s.clock.Offset().String())
	close(s.started)

	s.dispatch(ctx)
	s.jobs.closing.Store(true)
	bg.Wait()
	s.giveBackWaiting(true)
	return s.shutdown()
}

// shutdown waits for running handlers within the grace period, cancels the
// rest, and removes this process's heartbeat and master lock.
func (s *Scheduler) shutdown() error {
	done := make(chan struct{})
	go func() { s.running.Wait(); close(done) }()
	grace := time.NewTimer(s.opts.grace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		s.log.Warn("grace period over; cancelling running handlers", "grace", s.opts.grace.String())
		s.stopRuns()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			s.log.Error("handlers ignore cancellation; leaving their runs to be recorded as abandoned")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pipe := s.rdb.Pipeline()
	pipe.ZRem(ctx, s.keys.Processes(), s.id)
	pipe.Del(ctx, s.keys.Process(s.id))
	_, err := pipe.Exec(ctx)
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
func (s *Scheduler) listenWake(ctx context.Context, sub *redis.PubSub) {
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			s.wake()
		}
	}
}

// wake makes the dispatch loop look at the queue now.
func (s *Scheduler) wake() {
	select {
	case s.wakeCh <- struct{}{}:
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
