package runtime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/redis/go-redis/v9"
)

// ErrNotFound is wrapped by errors about a job or task that does not exist
// (any more): a job that already ran, was cancelled or never existed.
var ErrNotFound = errors.New("crontab: not found")

// ErrDuplicate is wrapped by the error of an Enqueue whose WithID names a
// job that is already pending, running or dead.
var ErrDuplicate = errors.New("crontab: duplicate job id")

// Client enqueues and cancels delayed jobs, manages run-time tasks and
// reads history. Producers that run no scheduler use it alone. It is safe
// for concurrent use.
type Client struct {
	db   *rdb.RDB
	reg  *Registry
	opts options
	err  error // a bad option or a nil client: every method returns it
}

// NewClient returns a client for the job types of reg on client. An option
// with a bad value, or one only a Scheduler uses, makes every method of the
// client return an error that names it (see Err).
func NewClient(client redis.UniversalClient, reg *Registry, opts ...Option) *Client {
	o, err := buildOptions(scopeClient, opts)
	if client == nil {
		err = errors.Join(errors.New("crontab: nil redis client"), err)
	}
	if reg == nil {
		reg = NewRegistry()
	}
	return &Client{db: rdb.New(client, o.namespace), reg: reg, opts: o, err: err}
}

// Err returns the error that every method of c returns: a bad option given
// to NewClient, or a nil Redis client. It is nil for a usable client.
func (c *Client) Err() error { return c.err }

// EnqueueOption configures one enqueued job.
type EnqueueOption func(*enqueueOptions)

type enqueueOptions struct {
	at      time.Time
	delay   time.Duration
	id      string
	retries int       // -1: the type's default
	fire    time.Time // the scheduled instant its runs report, when not its first due
	rateKey string    // RateKey: "" for the type's own window
}

// MaxRateKey bounds the length of a RateKey in bytes.
const MaxRateKey = 200

// RateKey puts the job in a rate window of its own for key (for example a
// tenant): its type's Rate (TaskConfig.Rate) applies per key instead of
// per type, so each key gets the whole rate, and jobs without a key share
// the type's window. MaxRunning stays per type. A type without a Rate
// ignores the key; an empty key is none. At most MaxRateKey bytes.
func RateKey(key string) EnqueueOption { return func(o *enqueueOptions) { o.rateKey = key } }

// scheduledAt makes the job's runs report fire as their scheduled instant
// (RunInfo.Fire) instead of the job's first due time: the retry of a
// scheduled fire (retryFire).
func scheduledAt(fire time.Time) EnqueueOption { return func(o *enqueueOptions) { o.fire = fire } }

// At runs the job at t (Redis server time). Without At or In the job is due
// at once.
func At(t time.Time) EnqueueOption { return func(o *enqueueOptions) { o.at = t } }

// In runs the job after d, measured on the Redis server's clock.
func In(d time.Duration) EnqueueOption { return func(o *enqueueOptions) { o.delay = d } }

// WithID gives the job its id, making Enqueue idempotent: a second enqueue
// with an id that is pending, running or dead fails with ErrDuplicate. The
// default is a random id. An id is at most 200 bytes.
func WithID(id string) EnqueueOption { return func(o *enqueueOptions) { o.id = id } }

// MaxRetries overrides the type's retries (TaskConfig.Retries) for this
// job: how many more attempts a failed run gets, with exponential backoff.
func MaxRetries(n int) EnqueueOption { return func(o *enqueueOptions) { o.retries = n } }

// Enqueue schedules job, a value of a registered type, and returns its id.
// Its payload is job JSON-encoded; the scheduler decodes it into a new value
// of the type and calls Handle, once, at its time.
func (c *Client) Enqueue(ctx context.Context, job TaskInterface, opts ...EnqueueOption) (string, error) {
	if c.err != nil {
		return "", c.err
	}

	name, payload, err := c.encodeJob(job)
	if err != nil {
		return "", err
	}
	return c.EnqueueRaw(ctx, name, payload, opts...)
}

// encodeJob resolves job's registered name and encodes its payload.
func (c *Client) encodeJob(job TaskInterface) (string, json.RawMessage, error) {
	name, ok := c.reg.NameOf(job)
	if !ok {
		return "", nil, fmt.Errorf("crontab: enqueue %T: type is not registered (annotate it and run go generate)", job)
	}
	payload, err := json.Marshal(job)
	if err != nil {
		return "", nil, fmt.Errorf("crontab: enqueue %q: encode payload: %w", name, err)
	}
	return name, payload, nil
}

// EnqueueRaw schedules a job by its registered name with a raw JSON
// payload: what a producer without the Go types does. The name is not
// checked against a registry; a job whose name no scheduler knows is kept
// and logged until a process that knows it runs it.
func (c *Client) EnqueueRaw(ctx context.Context, name string, payload json.RawMessage, opts ...EnqueueOption) (string, error) {
	if c.err != nil {
		return "", c.err
	}

	id, env, o, err := c.prepare(name, payload, opts)
	if err != nil {
		return "", err
	}
	res, err := c.db.Enqueue(ctx, []rdb.NewJob{{ID: id, Envelope: env, AtMS: ms(o.at), Delay: o.delay, Check: o.id != ""}})
	if err != nil {
		return "", fmt.Errorf("crontab: enqueue %q: %w", name, err)
	}
	if len(res) != 1 || res[0] < 0 {
		return id, fmt.Errorf("crontab: enqueue %q: id %q: %w", name, id, ErrDuplicate)
	}
	return id, nil
}

// prepare validates one job and builds its id and envelope.
func (c *Client) prepare(name string, payload json.RawMessage, opts []EnqueueOption) (string, string, enqueueOptions, error) {
	o := enqueueOptions{retries: -1}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if name == "" {
		return "", "", o, errors.New("crontab: enqueue: empty task name")
	}
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	if !json.Valid(payload) {
		return "", "", o, fmt.Errorf("crontab: enqueue %q: payload is not valid JSON", name)
	}
	if len(payload) > c.opts.maxPayload {
		return "", "", o, fmt.Errorf("crontab: enqueue %q: payload is %d bytes; the limit is %d (WithMaxPayload)", name, len(payload), c.opts.maxPayload)
	}
	if o.retries > MaxRetryLimit {
		return "", "", o, fmt.Errorf("crontab: enqueue %q: MaxRetries(%d): at most %d", name, o.retries, MaxRetryLimit)
	}
	if o.delay < 0 {
		o.delay = 0
	}
	id := o.id
	if id == "" {
		id = newJobID()
	} else if len(id) > 200 {
		return "", "", o, fmt.Errorf("crontab: enqueue %q: id is %d bytes; the limit is 200", name, len(id))
	}
	if len(o.rateKey) > MaxRateKey {
		return "", "", o, fmt.Errorf("crontab: enqueue %q: RateKey is %d bytes; the limit is %d", name, len(o.rateKey), MaxRateKey)
	}
	env := envelope{Task: name, Payload: payload, RateKey: o.rateKey}
	if o.retries >= 0 {
		env.Retries = &o.retries
	}
	if !o.fire.IsZero() {
		env.Fire = ms(o.fire)
	}
	b, err := json.Marshal(env)
	if err != nil {
		return "", "", o, fmt.Errorf("crontab: enqueue %q: %w", name, err)
	}
	return id, string(b), o, nil
}

// Job is one job for EnqueueMany.
type Job struct {
	// Value is the job, a value of a registered type.
	Value TaskInterface
	// Options are as for Enqueue.
	Options []EnqueueOption
}

// EnqueueMany enqueues jobs in one pipeline and returns their ids in
// order. It stops at the first invalid job, before sending anything; a
// Redis error fails the whole call (some jobs may have been enqueued: use
// WithID to make a retry safe).
func (c *Client) EnqueueMany(ctx context.Context, jobs []Job) ([]string, error) {
	if c.err != nil {
		return nil, c.err
	}

	ids := make([]string, len(jobs))
	envs := make([]string, len(jobs))
	os := make([]enqueueOptions, len(jobs))
	for i, j := range jobs {
		name, payload, err := c.encodeJob(j.Value)
		if err != nil {
			return nil, fmt.Errorf("job %d: %w", i, err)
		}
		if ids[i], envs[i], os[i], err = c.prepare(name, payload, j.Options); err != nil {
			return nil, fmt.Errorf("job %d: %w", i, err)
		}
	}
	batch := make([]rdb.NewJob, len(jobs))
	for i := range jobs {
		batch[i] = rdb.NewJob{ID: ids[i], Envelope: envs[i], AtMS: ms(os[i].at), Delay: os[i].delay, Check: os[i].id != ""}
	}
	dues, err := c.db.Enqueue(ctx, batch)
	if err != nil {
		return nil, fmt.Errorf("crontab: enqueue many: %w", err)
	}
	for i, due := range dues {
		if due < 0 {
			return ids, fmt.Errorf("crontab: enqueue many: job %d: id %q: %w", i, ids[i], ErrDuplicate)
		}
	}
	return ids, nil
}

// Cancel removes a pending job, so it never runs. It returns an error
// wrapping ErrNotFound when the job already ran, is running, was cancelled
// or never existed.
func (c *Client) Cancel(ctx context.Context, id string) error {
	if c.err != nil {
		return c.err
	}
	return cancelJob(ctx, c.db, id)
}

// cancelJob is Cancel, for a Client or an Inspector.
func cancelJob(ctx context.Context, db *rdb.RDB, id string) error {
	n, err := db.Cancel(ctx, id)
	switch {
	case err != nil:
		return fmt.Errorf("crontab: cancel %q: %w", id, err)
	case n == rdb.CancelRunning:
		return fmt.Errorf("crontab: cancel %q: the job is running: %w", id, ErrNotFound)
	case n == rdb.CancelNotFound:
		return fmt.Errorf("crontab: cancel %q: no pending job: %w", id, ErrNotFound)
	}
	return nil
}

func newJobID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
