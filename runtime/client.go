package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotFound is wrapped by errors about a job or task that does not exist
// (any more).
var ErrNotFound = errors.New("crontab: not found")

// Client enqueues and cancels delayed jobs. Producers that run no scheduler
// use it alone.
type Client struct {
	rdb  redis.UniversalClient
	reg  *Registry
	opts options
	keys keys
}

// NewClient returns a client for the job types of reg on client.
func NewClient(client redis.UniversalClient, reg *Registry, opts ...Option) *Client {
	o := buildOptions(opts)
	return &Client{rdb: client, reg: reg, opts: o, keys: newKeys(o.namespace)}
}

// EnqueueOption configures one Enqueue.
type EnqueueOption func(*enqueueOptions)

type enqueueOptions struct {
	at    time.Time
	delay time.Duration
	id    string
}

// At runs the job at t.
func At(t time.Time) EnqueueOption { return func(o *enqueueOptions) { o.at = t } }

// In runs the job after d.
func In(d time.Duration) EnqueueOption { return func(o *enqueueOptions) { o.delay = d } }

// Enqueue schedules job and returns its id.
func (c *Client) Enqueue(ctx context.Context, job TaskInterface, opts ...EnqueueOption) (string, error) {
	return "", errors.New("crontab: Enqueue: not implemented")
}

// Cancel removes a pending job. It returns an error wrapping ErrNotFound when
// the job already ran or never existed.
func (c *Client) Cancel(ctx context.Context, id string) error {
	return errors.New("crontab: Cancel: not implemented")
}
