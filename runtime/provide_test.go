package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// depStore is a dependency given with Provide: it records what the runs
// that hold it saw, and is safe for concurrent use.
type depStore struct {
	mu   sync.Mutex
	seen map[string][]string // by task name: one line per run
}

func (s *depStore) record(task, line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = make(map[string][]string)
	}
	s.seen[task] = append(s.seen[task], line)
}

func (s *depStore) runs(task string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen[task]...)
}

// provFire is a scheduled task with a pointer receiver that changes its
// own field: a run that sees the change of an earlier run shares its value.
type provFire struct {
	Store *depStore `json:"-"`
	Tag   string    `json:"-"`
}

func (t *provFire) Handle(ctx context.Context) error {
	t.Store.record(TaskName(ctx), t.Tag)
	t.Tag = "changed by a run"
	return nil
}

// provJob is a job type with a value receiver and a payload.
type provJob struct {
	Store *depStore `json:"-"`
	Tag   string    `json:"-"`
	To    string    `json:"to"`
}

func (j provJob) Handle(ctx context.Context) error {
	j.Store.record(TaskName(ctx), j.Tag+" "+j.To)
	return nil
}

// provParams is a type run as a run-time task with parameters; a value
// receiver, provided as a pointer.
type provParams struct {
	Store *depStore `json:"-"`
	Tag   string    `json:"-"`
	Day   string    `json:"day"`
}

func (p provParams) Handle(ctx context.Context) error {
	p.Store.record(TaskName(ctx), p.Tag+" "+p.Day)
	return nil
}

// provConcurrent is a job type with a pointer receiver whose runs overlap:
// each sets its field to its payload, waits until every run has started,
// then checks that its field is still its own.
type provConcurrent struct {
	Store *depStore       `json:"-"`
	Tag   string          `json:"-"`
	Gate  *sync.WaitGroup `json:"-"`
	To    string          `json:"to"`
}

func (j *provConcurrent) Handle(ctx context.Context) error {
	at := j.Tag
	j.Tag = j.To
	j.Gate.Done()
	waited := make(chan struct{})
	go func() { j.Gate.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(3 * time.Second):
		return errors.New("the other runs did not start")
	}
	j.Store.record(TaskName(ctx), fmt.Sprintf("%s %s->%s", j.To, at, j.Tag))
	return nil
}

// provNone has a dependency field but is not provided: it gets New's zero
// value.
type provNone struct {
	Store *depStore `json:"-"`
	To    string    `json:"to"`
}

var provNoneSeen sync.Map // To -> whether Store was nil

func (j *provNone) Handle(ctx context.Context) error {
	provNoneSeen.Store(j.To, j.Store == nil)
	return nil
}

// provRegistry registers the types above.
func provRegistry(t testing.TB) *Registry {
	return testRegistry(t,
		TaskConfig{Name: "prov fire", Expression: "every:1s", New: func() TaskInterface { return new(provFire) }},
		TaskConfig{Name: "prov job", New: func() TaskInterface { return new(provJob) }},
		TaskConfig{Name: "prov params", New: func() TaskInterface { return new(provParams) }},
		TaskConfig{Name: "prov concurrent", Concurrent: true, New: func() TaskInterface { return new(provConcurrent) }},
		TaskConfig{Name: "prov none", New: func() TaskInterface { return new(provNone) }},
	)
}

// TestProvideGivesEachRunItsOwnCopy runs a scheduled task, a job, a
// run-time task with parameters and concurrent jobs of provided types,
// given as values and as pointers, with value and pointer receivers: every
// run holds the provided dependency, in its own copy, with its payload or
// parameters decoded into that copy; a type not provided gets New's value.
func TestProvideGivesEachRunItsOwnCopy(t *testing.T) {
	t.Parallel()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	reg := provRegistry(t)
	store := &depStore{}
	const overlap = 4
	gate := new(sync.WaitGroup)
	gate.Add(overlap)
	fire := &provFire{Store: store, Tag: "provided"}
	runScheduler(t, rdb, reg, Provide(
		fire,
		provJob{Store: store, Tag: "provided"},
		&provParams{Store: store, Tag: "provided"},
	), Provide(&provConcurrent{Store: store, Tag: "provided", Gate: gate}))
	fire.Tag = "changed after NewScheduler" // the scheduler copied the value

	c := NewClient(rdb, reg)
	if _, err := c.Enqueue(ctx, provJob{To: "ann", Tag: "from the payload"}); err != nil {
		t.Fatal(err)
	}
	for i := range overlap {
		if _, err := c.Enqueue(ctx, &provConcurrent{To: fmt.Sprint("c", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.EnqueueRaw(ctx, "prov job", []byte(`{"to":"raw","Store":null,"Tag":"x"}`)); err != nil {
		t.Fatal(err)
	}
	none := unique(t)
	if _, err := c.Enqueue(ctx, &provNone{To: none}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetTask(ctx, TaskSpec{Key: "prov daily", Type: "prov params", Params: provParams{Day: "monday"}, Expression: "every:1s"}); err != nil {
		t.Fatal(err)
	}

	waitFor(t, 6*time.Second, "three fires, the jobs and two run-time fires", func() bool {
		return len(store.runs("prov fire")) >= 3 && len(store.runs("prov job")) == 2 &&
			len(store.runs("prov concurrent")) == overlap && len(store.runs("prov daily")) >= 2
	})
	for i, seen := range store.runs("prov fire") {
		if seen != "provided" {
			t.Errorf("fire %d saw Tag %q, want %q (its own copy of the provided value)", i, seen, "provided")
		}
	}
	jobs := store.runs("prov job")
	if strings.Join(jobs, ",") != "provided ann,provided raw" && strings.Join(jobs, ",") != "provided raw,provided ann" {
		t.Errorf("jobs saw %q, want the payload decoded into the provided value, its json:\"-\" fields kept", jobs)
	}
	got := store.runs("prov concurrent")
	for i := range overlap {
		want := fmt.Sprintf("c%d provided->c%d", i, i)
		if !slices.Contains(got, want) {
			t.Errorf("concurrent runs saw %q; none saw %q", got, want)
		}
	}
	for i, seen := range store.runs("prov daily") {
		if seen != "provided monday" {
			t.Errorf("run-time fire %d saw %q, want %q", i, seen, "provided monday")
		}
	}
	waitFor(t, 2*time.Second, "the unprovided job", func() bool { _, ok := provNoneSeen.Load(none); return ok })
	if isNil, _ := provNoneSeen.Load(none); isNil != true {
		t.Errorf("the unprovided type's run saw a Store: want New's zero value")
	}
}

// TestProvideErrors shows every wrong use of Provide is an error from
// NewScheduler naming the option and the type, and that a Client or an
// Inspector refuses it.
func TestProvideErrors(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer rdb.Close()
	reg := provRegistry(t)
	store := &depStore{}
	for _, tc := range []struct {
		name string
		opts []Option
		want string
	}{
		{"nil", []Option{Provide(nil)}, "crontab: Provide: value 0 is nil"},
		{"nil pointer", []Option{Provide(provJob{}, (*provFire)(nil))}, "crontab: Provide: value 1 is a nil *runtime.provFire"},
		{"unregistered", []Option{Provide(smsJob{})}, "crontab: Provide: type runtime.smsJob is not registered: give it a //crontab: directive and run go generate, or add a TaskConfig for it with Registry.Add"},
		{"unregistered pointer", []Option{Provide(&smsJob{})}, "crontab: Provide: type *runtime.smsJob is not registered"},
		{"twice", []Option{Provide(provJob{Store: store}, &provJob{})}, `crontab: Provide: type *runtime.provJob (task "prov job") is given twice`},
		{"twice across calls", []Option{Provide(&provFire{}), Provide(&provFire{})}, `crontab: Provide: type *runtime.provFire (task "prov fire") is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewScheduler(rdb, reg, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewScheduler: %v, %v; want an error containing %q", s, err, tc.want)
			}
		})
	}
	if _, err := NewScheduler(rdb, reg, Provide(), Provide(provJob{}, &provFire{})); err != nil {
		t.Errorf("NewScheduler with good values: %v", err)
	}
	// A type this process's role leaves out (WithTasks) is accepted, and
	// unused: the contract lets one option list serve every fleet.
	if s, err := NewScheduler(rdb, reg, WithTasks("prov job"), Provide(provJob{Store: store}, &provFire{})); err != nil {
		t.Errorf("NewScheduler with a provided type its role leaves out: %v", err)
	} else if s.reg.Entry("prov fire") != nil || s.provided["prov fire"] == nil {
		t.Errorf("WithTasks(\"prov job\"): runs %v, provided %v; want prov fire provided, not run", s.reg.Tasks(), s.provided)
	}
	if err := NewClient(rdb, reg, Provide(provJob{})).Err(); err == nil ||
		!strings.Contains(err.Error(), "Provide is a Scheduler option: a Client cannot use it") {
		t.Errorf("NewClient(Provide).Err(): %v", err)
	}
	if err := NewInspector(rdb, Provide(provJob{})).Err(); err == nil ||
		!strings.Contains(err.Error(), "Provide is a Scheduler option: an Inspector cannot use it") {
		t.Errorf("NewInspector(Provide).Err(): %v", err)
	}
}

// BenchmarkHandlerValue measures building a job's handler value from New
// and from a provided value, alone and with a small payload decoded.
func BenchmarkHandlerValue(b *testing.B) {
	reg := provRegistry(b)
	entry := reg.Entry("prov job")
	provided, err := resolveProvided(reg, []TaskInterface{provJob{Store: &depStore{}, Tag: "provided"}})
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		e       *engine
		payload []byte
	}{
		{"new", &engine{reg: reg}, nil},
		{"provided", &engine{reg: reg, provided: provided}, nil},
		{"new+payload", &engine{reg: reg}, []byte(`{"to":"ann"}`)},
		{"provided+payload", &engine{reg: reg, provided: provided}, []byte(`{"to":"ann"}`)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodePayload(entry, tc.e.newValue, tc.payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
