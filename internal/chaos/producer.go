package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/chaos/tasks"
	crontab "github.com/gocrontab/crontab/runtime"
)

// jobState is what the producer knows of one job it enqueued.
type jobState struct {
	id  string
	due time.Time
	// enqueued: Enqueue returned nil. An error leaves the job uncertain
	// (the write may have happened with its reply lost): it may run or not.
	enqueued bool
	// cancel: whether Cancel was called, and whether it returned nil. Only a
	// nil return counts as cancelled; an error (a cut connection, or
	// ErrNotFound after a retry of a cancel that had worked) leaves the job
	// uncertain.
	cancelTried, cancelled bool
}

// producer enqueues jobs through its proxy and cancels some.
type producer struct {
	client *crontab.Client
	rng    *rand.Rand
	logf   func(string, ...any)

	mu   sync.Mutex
	jobs []*jobState
	errs int
}

func newProducer(rdb redis.UniversalClient, seed uint64, logf func(string, ...any)) *producer {
	return &producer{client: tasks.NewClient(rdb, crontab.WithNamespace(Namespace)),
		rng: rand.New(rand.NewPCG(seed, 0x70726f64)), logf: logf}
}

// run enqueues a job every 100-300 ms, due 0.2-3 s later, until ctx ends;
// a quarter of them it cancels half way to their due time, if they are
// still over 300 ms from it then.
func (p *producer) run(ctx context.Context) {
	type pending struct {
		job *jobState
		at  time.Time
	}
	var cancels []pending
	for n := 0; ctx.Err() == nil && n < 1_000_000; n++ {
		delay := between(p.rng, 200*time.Millisecond, 3*time.Second)
		j := &jobState{id: fmt.Sprintf("job-%06d", n), due: time.Now().Add(delay).Truncate(time.Millisecond)}
		job := tasks.Job{N: n, Sleep: between(p.rng, time.Millisecond, 400*time.Millisecond)}
		cancel := p.rng.IntN(4) == 0
		cctx, done := context.WithTimeout(ctx, 2*time.Second)
		_, err := p.client.Enqueue(cctx, job, crontab.WithID(j.id), crontab.At(j.due))
		done()
		j.enqueued = err == nil
		p.mu.Lock()
		p.jobs = append(p.jobs, j)
		if err != nil {
			p.errs++
		}
		p.mu.Unlock()
		if cancel && j.enqueued {
			cancels = append(cancels, pending{j, time.Now().Add(time.Until(j.due) / 2)})
		}
		kept := cancels[:0]
		for _, c := range cancels {
			if time.Now().Before(c.at) {
				kept = append(kept, c)
				continue
			}
			if time.Until(c.job.due) > 300*time.Millisecond {
				p.cancel(ctx, c.job)
			}
		}
		cancels = kept
		select {
		case <-ctx.Done():
		case <-time.After(between(p.rng, 100*time.Millisecond, 300*time.Millisecond)):
		}
	}
}

func (p *producer) cancel(ctx context.Context, j *jobState) {
	cctx, done := context.WithTimeout(ctx, 2*time.Second)
	err := p.client.Cancel(cctx, j.id)
	done()
	p.mu.Lock()
	defer p.mu.Unlock()
	j.cancelTried, j.cancelled = true, err == nil
	if err != nil {
		p.errs++
	}
}

func (p *producer) snapshot() []jobState {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]jobState, len(p.jobs))
	for i, j := range p.jobs {
		out[i] = *j
	}
	return out
}
