package runtime

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/runtime/schedule"
	"github.com/redis/go-redis/v9"
)

// ErrNotFound is wrapped by errors about a job or task that does not exist
// (any more): a job that already ran, was cancelled or never existed.
var ErrNotFound = errors.New("not found")

// ErrDuplicate is wrapped by the error of an Enqueue whose WithID names a
// job that is already pending, running or dead, and by the *DuplicateError
// of an Enqueue whose unique identity (Unique) is held.
var ErrDuplicate = errors.New("duplicate job id")

// DuplicateError is the error of an Enqueue (or of one job of EnqueueMany)
// whose unique identity (Unique, UniqueKey) is held by another job: ID is
// that job's id, Identity the identity (as JobInfo.Unique shows it). It
// wraps ErrDuplicate: errors.Is(err, ErrDuplicate) holds, and errors.As
// gives the existing job's id.
type DuplicateError struct {
	Task     string
	ID       string
	Identity string
}

// Error says which job holds the identity.
func (e *DuplicateError) Error() string {
	return fmt.Sprintf("crontab: enqueue %q: unique identity %q is held by job %q: duplicate job", e.Task, e.Identity, e.ID)
}

// Is reports whether target is ErrDuplicate.
func (e *DuplicateError) Is(target error) bool { return target == ErrDuplicate }

// MaxUniqueTTL is the longest ttl Unique accepts (30 days), and the
// longest delay Debounce accepts; MinUniqueTTL the shortest ttl (1 ms).
const (
	MaxUniqueTTL = 30 * 24 * time.Hour
	MinUniqueTTL = time.Millisecond
)

// MaxUniqueKey is the longest key UniqueKey accepts, in bytes.
const MaxUniqueKey = 200

// Client enqueues and cancels delayed jobs, manages run-time tasks and
// reads history. Producers that run no scheduler use it alone. It is safe
// for concurrent use.
type Client struct {
	db   *rdb.RDB
	reg  *Registry
	opts options
	err  error // a bad option or a nil client: every method returns it
	// cache parses the schedules of SetTask and SetTasks once per
	// (expression, zone).
	cache schedule.Cache
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

	unique    bool
	ttl       time.Duration
	key       string
	keySet    bool
	debounced bool
	debounce  time.Duration
	timed     bool   // At or In was given
	ident     string // the unique identity prepare found
	rateKey   string // RateKey: "" for the type's own window
}

// MaxRateKey bounds the length of a RateKey in bytes.
const MaxRateKey = 200

// RateKey puts the job in a rate window of its own for key (for example a
// tenant): its type's Rate (TaskConfig.Rate) applies per key instead of
// per type, so each key gets the whole rate, and jobs without a key share
// the type's window. MaxRunning stays per type. A key for a type that the
// client's registry has without a Rate is an error; an empty key is none.
// At most MaxRateKey bytes.
func RateKey(key string) EnqueueOption { return func(o *enqueueOptions) { o.rateKey = key } }

// scheduledAt makes the job's runs report fire as their scheduled instant
// (RunInfo.Fire) instead of the job's first due time: the retry of a
// scheduled fire (retryFire).
func scheduledAt(fire time.Time) EnqueueOption { return func(o *enqueueOptions) { o.fire = fire } }

// At runs the job at t (Redis server time). Without At or In the job is due
// at once.
func At(t time.Time) EnqueueOption { return func(o *enqueueOptions) { o.at, o.timed = t, true } }

// In runs the job after d, measured on the Redis server's clock.
func In(d time.Duration) EnqueueOption { return func(o *enqueueOptions) { o.delay, o.timed = d, true } }

// Unique makes the job unique for ttl (MinUniqueTTL..MaxUniqueTTL; outside
// that range Enqueue fails naming the option): a second enqueue with the
// same identity while the first job holds it fails with a *DuplicateError
// (wrapping ErrDuplicate) that gives the first job's id, and writes
// nothing. The identity is the job's type and its payload bytes (a SHA-256
// digest of them), or its type and the key UniqueKey gives; it is shared
// by every process of the namespace.
//
// The first job holds its identity from its enqueue until the later of
// the ttl's end and the job's end: a job that is still running, or still
// pending for its first attempt, when the ttl ends keeps it until it
// finishes, and so does a job delivered again because its process died
// (its attempt did not fail: it will still run); a job that succeeded
// inside the ttl keeps it to the ttl's end (a retried request inside the
// ttl is still a duplicate). A job whose handler failed (waiting for its
// retry, or dead) holds it no longer than the ttl, and a cancelled job
// frees it at once. A dead job retried from the dead letters
// (Inspector.RetryDead) takes its identity again if no other job holds it.
func Unique(ttl time.Duration) EnqueueOption {
	return func(o *enqueueOptions) { o.unique, o.ttl = true, ttl }
}

// UniqueKey makes key (1..MaxUniqueKey bytes), with the job's type, the
// job's unique identity instead of its payload: jobs of one type with one
// key are duplicates whatever their payloads. It needs Unique or Debounce.
func UniqueKey(key string) EnqueueOption {
	return func(o *enqueueOptions) { o.key, o.keySet = key, true }
}

// Debounce makes the job a debounced one, due d after its enqueue (0..
// MaxUniqueTTL, Redis server time; it cannot be combined with At or In). When a
// job with the same identity (see Unique) is pending, the enqueue replaces
// that job's payload (its whole envelope) with this one's and moves its due
// time to now+d: Enqueue returns the pending job's id and no error, and a
// burst of enqueues runs once, with the last payload, d after the last
// one. When the job with the identity is already running (it cannot be
// replaced) or there is none, the enqueue makes a new job, which takes the
// identity: a change that comes while a run is under way gets a run of its
// own. With Unique(ttl) too, the identity's record lasts at least ttl;
// without, it lasts while the job is pending or running.
func Debounce(d time.Duration) EnqueueOption {
	return func(o *enqueueOptions) { o.debounced, o.debounce = true, d }
}

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
	if o.unique || o.debounced {
		ids, errs, err := c.enqueueUnique(ctx, []rdb.NewJob{c.newJob(name, id, env, o)}, []string{name})
		if err != nil {
			return "", fmt.Errorf("crontab: enqueue %q: %w", name, err)
		}
		return ids[0], errs[0]
	}
	res, err := c.db.Enqueue(ctx, []rdb.NewJob{c.newJob(name, id, env, o)})
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
	identity, err := o.identity(name, payload)
	if err != nil {
		return "", "", o, fmt.Errorf("crontab: enqueue %q: %w", name, err)
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
	if e := c.reg.Entry(name); o.rateKey != "" && e != nil && e.Config().Rate.IsZero() {
		return "", "", o, fmt.Errorf("crontab: enqueue %q: RateKey(%q): the type has no rate (TaskConfig.Rate, the directive key rate) for the key to divide", name, o.rateKey)
	}
	env := envelope{Task: name, Payload: payload, RateKey: o.rateKey}
	if o.retries >= 0 {
		env.Retries = &o.retries
	}
	if !o.fire.IsZero() {
		env.Fire = ms(o.fire)
	}
	env.Unique, o.ident = identity, identity
	b, err := json.Marshal(env)
	if err != nil {
		return "", "", o, fmt.Errorf("crontab: enqueue %q: %w", name, err)
	}
	return id, string(b), o, nil
}

// identity validates the unique options and returns the job's unique
// identity: "<type>|<hex of the first 16 bytes of SHA-256 of the payload>",
// or "<type>|key:<key>" with UniqueKey; "" for a job without one.
func (o *enqueueOptions) identity(name string, payload []byte) (string, error) {
	switch {
	case !o.unique && !o.debounced:
		if o.keySet {
			return "", fmt.Errorf("UniqueKey(%q): needs Unique or Debounce", o.key)
		}
		return "", nil
	case o.unique && (o.ttl < MinUniqueTTL || o.ttl > MaxUniqueTTL):
		return "", fmt.Errorf("Unique(%s): the ttl must be %s..%s", o.ttl, MinUniqueTTL, MaxUniqueTTL)
	case o.debounced && (o.debounce < 0 || o.debounce > MaxUniqueTTL):
		return "", fmt.Errorf("Debounce(%s): must be 0..%s", o.debounce, MaxUniqueTTL)
	case o.debounced && o.timed:
		return "", fmt.Errorf("Debounce(%s): cannot be combined with At or In (the job is due d after its last enqueue)", o.debounce)
	case o.keySet && (o.key == "" || len(o.key) > MaxUniqueKey):
		return "", fmt.Errorf("UniqueKey: the key is %d bytes; it must be 1..%d", len(o.key), MaxUniqueKey)
	}
	return UniqueIdentity(name, payload, o.key), nil
}

// UniqueIdentity is the unique identity of a job of type name with the
// given payload bytes (as stored: the JSON the client encodes), or with
// key when it is not "" (UniqueKey): "<name>|<32 hex digits>", the first
// 16 bytes of SHA-256 of the payload, or "<name>|key:<key>". A producer in
// another language computes the same (see "Enqueueing from other
// languages" in the package doc).
func UniqueIdentity(name string, payload []byte, key string) string {
	if key != "" {
		return name + "|key:" + key
	}
	sum := sha256.Sum256(payload)
	return name + "|" + hex.EncodeToString(sum[:16])
}

// newJob is the rdb job of one prepared job of type name.
func (c *Client) newJob(name, id, env string, o enqueueOptions) rdb.NewJob {
	j := rdb.NewJob{ID: id, Envelope: env, AtMS: ms(o.at), Delay: o.delay, Check: o.id != ""}
	j.Level, j.Indexed = levelOf(c.reg, name)
	if o.ident != "" {
		j.Unique = rdb.UniqueJob{Identity: o.ident, TTL: o.ttl, Debounce: -1}
		if o.debounced {
			j.Unique.Debounce = o.debounce
		}
	}
	return j
}

// enqueueUnique enqueues a batch with unique jobs in it and returns each
// job's id (the holder's for a duplicate or a debounce) and error (nil
// when it was enqueued or debounced).
func (c *Client) enqueueUnique(ctx context.Context, batch []rdb.NewJob, names []string) ([]string, []error, error) {
	res, err := c.db.EnqueueUnique(ctx, batch)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]string, len(batch))
	errs := make([]error, len(batch))
	for i, r := range res {
		ids[i] = r.ID
		switch r.Outcome {
		case rdb.UniqueDupID:
			errs[i] = fmt.Errorf("crontab: enqueue %q: id %q: %w", names[i], batch[i].ID, ErrDuplicate)
		case rdb.UniqueDuplicate:
			errs[i] = &DuplicateError{Task: names[i], ID: r.ID, Identity: batch[i].Unique.Identity}
		}
	}
	return ids, errs, nil
}

// EnqueueManyError is the error of an EnqueueMany some of whose jobs were
// not enqueued (duplicates); the others were. Errs has one entry per job,
// in order: nil for a job enqueued (or debounced), else its error (a
// *DuplicateError for a held unique identity, an error wrapping
// ErrDuplicate for a WithID id that exists). errors.Is and errors.As see
// every job's error.
type EnqueueManyError struct {
	Errs []error
}

// Error lists the jobs that were not enqueued (the first ten).
func (e *EnqueueManyError) Error() string {
	var b []byte
	n := 0
	for i, err := range e.Errs {
		if err == nil {
			continue
		}
		if n++; n > 10 {
			b = fmt.Appendf(b, "; ...")
			break
		}
		if len(b) > 0 {
			b = append(b, "; "...)
		}
		b = fmt.Appendf(b, "job %d: %v", i, err)
	}
	return "crontab: enqueue many: " + string(b)
}

// Unwrap returns the errors of the jobs that were not enqueued.
func (e *EnqueueManyError) Unwrap() []error {
	var out []error
	for _, err := range e.Errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
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
// WithID or Unique to make a retry safe). Duplicates are reported per
// job: the other jobs are enqueued, and the error is an
// *EnqueueManyError whose Errs say which jobs were not; the id of a job
// whose unique identity is held is the holder's (a second job of the
// batch with the identity of an earlier one is that one's duplicate, or,
// debounced, replaces it).
func (c *Client) EnqueueMany(ctx context.Context, jobs []Job) ([]string, error) {
	if c.err != nil {
		return nil, c.err
	}

	ids := make([]string, len(jobs))
	names := make([]string, len(jobs))
	batch := make([]rdb.NewJob, len(jobs))
	anyUnique := false
	for i, j := range jobs {
		name, payload, err := c.encodeJob(j.Value)
		if err != nil {
			return nil, fmt.Errorf("job %d: %w", i, err)
		}
		id, env, o, err := c.prepare(name, payload, j.Options)
		if err != nil {
			return nil, fmt.Errorf("job %d: %w", i, err)
		}
		ids[i], names[i], batch[i] = id, name, c.newJob(name, id, env, o)
		anyUnique = anyUnique || batch[i].Unique.Identity != ""
	}
	errs := make([]error, len(jobs))
	failed := false
	if anyUnique {
		got, gotErrs, err := c.enqueueUnique(ctx, batch, names)
		if err != nil {
			return nil, fmt.Errorf("crontab: enqueue many: %w", err)
		}
		ids, errs = got, gotErrs
		for _, e := range errs {
			failed = failed || e != nil
		}
	} else {
		dues, err := c.db.Enqueue(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("crontab: enqueue many: %w", err)
		}
		for i, due := range dues {
			if due < 0 {
				errs[i] = fmt.Errorf("crontab: enqueue %q: id %q: %w", names[i], ids[i], ErrDuplicate)
				failed = true
			}
		}
	}
	if failed {
		return ids, &EnqueueManyError{Errs: errs}
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
