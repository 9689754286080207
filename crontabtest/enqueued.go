package crontabtest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Job is an enqueued job that RequireEnqueued found: what the Inspector
// shows of it, and its payload decoded into a T.
type Job[T crontab.TaskInterface] struct {
	crontab.JobInfo
	// Value is the job's payload decoded into a new value of T, as a
	// scheduler decodes it before it calls Handle.
	Value T
}

// JobOption narrows the jobs RequireEnqueued, RequireEnqueuedMany and
// RequireNotEnqueued look at. Without options they look at the pending
// jobs of the type in the default namespace.
type JobOption func(*jobQuery)

type jobQuery struct {
	namespace string
	state     crontab.JobState
	due       bool
	from, to  time.Time
	match     []matcher
}

// matcher is a Match predicate: ok is false when the job's type is not the
// predicate's.
type matcher struct {
	typ  reflect.Type
	pred func(v any) (match, ok bool)
}

// Namespace looks at the jobs of namespace ns (crontab.WithNamespace). The
// default is crontab.DefaultNamespace.
func Namespace(ns string) JobOption { return func(q *jobQuery) { q.namespace = ns } }

// InState looks at the jobs in state st: crontab.JobPending (the default:
// enqueued and waiting for their due time, or for a retry), JobRunning or
// JobDead; "" looks at all three.
func InState(st crontab.JobState) JobOption { return func(q *jobQuery) { q.state = st } }

// DueBetween keeps the pending jobs due from from to to, both included.
// By default the due time is not looked at.
func DueBetween(from, to time.Time) JobOption {
	return func(q *jobQuery) { q.due, q.from, q.to = true, from, to }
}

// Match keeps the jobs whose decoded value pred accepts. T must be the
// type the assertion is about: another one fails the test. Several Match
// options must all accept a job.
func Match[T crontab.TaskInterface](pred func(T) bool) JobOption {
	return func(q *jobQuery) {
		q.match = append(q.match, matcher{typ: reflect.TypeFor[T](), pred: func(v any) (bool, bool) {
			t, ok := v.(T)
			return ok && pred(t), ok
		}})
	}
}

// RequireEnqueued requires exactly one job of type T (a registered job or
// task type, such as *sms.SendSMS) among the jobs the options select,
// pending ones by default, in the namespace on client, and returns it with
// its payload decoded into a T. reg tells T's registered name
// (Registry.NameOf). It fails tb when there is none or more than one,
// listing what is enqueued; when a selected job's payload does not decode
// into a T (a scheduler's run of it would fail); and when T is not
// registered or Redis cannot be read.
func RequireEnqueued[T crontab.TaskInterface](ctx context.Context, tb testing.TB, client redis.UniversalClient, reg *crontab.Registry, opts ...JobOption) Job[T] {
	tb.Helper()
	return requireEnqueued[T](ctx, tb, "RequireEnqueued", client, reg, 1, opts)[0]
}

// RequireEnqueuedMany requires exactly n jobs of type T among the jobs the
// options select (see RequireEnqueued) and returns them in the Inspector's
// order: pending ones by due time, then running ones, then dead ones most
// recent first. It fails tb as RequireEnqueued does, and when n is
// negative.
func RequireEnqueuedMany[T crontab.TaskInterface](ctx context.Context, tb testing.TB, client redis.UniversalClient, reg *crontab.Registry, n int, opts ...JobOption) []Job[T] {
	tb.Helper()
	if n < 0 {
		tb.Fatalf("crontabtest: RequireEnqueuedMany: n is %d: want 0 or more", n)
	}
	return requireEnqueued[T](ctx, tb, "RequireEnqueuedMany", client, reg, n, opts)
}

// RequireNotEnqueued requires that no job of type T is among the jobs the
// options select (see RequireEnqueued), failing tb with a listing of what
// is enqueued otherwise.
func RequireNotEnqueued[T crontab.TaskInterface](ctx context.Context, tb testing.TB, client redis.UniversalClient, reg *crontab.Registry, opts ...JobOption) {
	tb.Helper()
	requireEnqueued[T](ctx, tb, "RequireNotEnqueued", client, reg, 0, opts)
}

// listLimit bounds the jobs of each state a failure message lists.
const listLimit = 20

// requireEnqueued finds the jobs of T that q selects and fails tb unless
// there are exactly want.
func requireEnqueued[T crontab.TaskInterface](ctx context.Context, tb testing.TB, caller string, client redis.UniversalClient, reg *crontab.Registry, want int, opts []JobOption) []Job[T] {
	tb.Helper()
	q := jobQuery{namespace: crontab.DefaultNamespace, state: crontab.JobPending}
	for _, o := range opts {
		if o != nil {
			o(&q)
		}
	}
	typ := reflect.TypeFor[T]()
	if reg == nil {
		tb.Fatalf("crontabtest: %s: nil registry", caller)
	}
	var zero T
	name, ok := reg.NameOf(zero)
	if !ok {
		tb.Fatalf("crontabtest: %s: %v is not a registered type (annotate it and run go generate, and give its Register to the registry)", caller, typ)
	}
	for _, m := range q.match {
		if m.typ != typ {
			tb.Fatalf("crontabtest: %s: Match takes a %v, the jobs asserted are %v", caller, m.typ, typ)
		}
	}
	in := crontab.NewInspector(client, crontab.WithNamespace(q.namespace))
	if err := in.Err(); err != nil {
		tb.Fatalf("crontabtest: %s: %v", caller, err)
	}
	infos, err := in.Jobs(ctx, crontab.JobFilter{State: q.state, Task: name})
	if err != nil {
		tb.Fatalf("crontabtest: %s: %v", caller, err)
	}
	var found []Job[T]
	matched := map[string]bool{}
	for _, info := range infos {
		if q.due && (info.State != crontab.JobPending || info.Due.Before(q.from) || info.Due.After(q.to)) {
			continue
		}
		v, err := decode[T](reg, name, info.Payload)
		if err != nil {
			tb.Fatalf("crontabtest: %s: job %s of %q: payload %s does not decode into %v: %v (a scheduler's run of it would fail)", caller, info.ID, name, info.Payload, typ, err)
		}
		keep := true
		for _, m := range q.match {
			if ok, _ := m.pred(v); !ok {
				keep = false
				break
			}
		}
		if keep {
			found = append(found, Job[T]{JobInfo: info, Value: v})
			matched[info.ID] = true
		}
	}
	if len(found) == want {
		return found
	}
	var b strings.Builder
	state := "job"
	if q.state != "" {
		state = string(q.state) + " job"
	}
	fmt.Fprintf(&b, "crontabtest: %s: want %d %s of %q (%v)%s, found %d in namespace %q",
		caller, want, plural(want, state), name, typ, q.describe(), len(found), q.namespace)
	if caller == "RequireEnqueued" && len(found) > 1 {
		b.WriteString(" (RequireEnqueuedMany asserts several)")
	}
	b.WriteString(listJobs(ctx, in, matched))
	tb.Fatalf("%s", b.String())
	return nil
}

// decode returns payload decoded into a new value of the registered type
// name, as a scheduler decodes it, as a T.
func decode[T crontab.TaskInterface](reg *crontab.Registry, name string, payload json.RawMessage) (T, error) {
	var zero T
	v := reg.Entry(name).Config().New()
	if v == nil {
		return zero, fmt.Errorf("New returned nil")
	}
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, v); err != nil {
			return zero, err
		}
	}
	if t, ok := v.(T); ok {
		return t, nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
		if t, ok := rv.Elem().Interface().(T); ok {
			return t, nil
		}
	}
	return zero, fmt.Errorf("the registered New returns a %T", v)
}

// describe says what the options select, for a failure message.
func (q jobQuery) describe() string {
	var parts []string
	if q.state == "" {
		parts = append(parts, "in any state")
	}
	if q.due {
		parts = append(parts, fmt.Sprintf("due between %s and %s", stamp(q.from), stamp(q.to)))
	}
	if n := len(q.match); n > 0 {
		parts = append(parts, fmt.Sprintf("accepted by %d Match %s", n, plural(n, "func")))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ", ")
}

// listJobs lists the jobs of the namespace, up to listLimit of each state,
// marking those in matched with '*'.
func listJobs(ctx context.Context, in *crontab.Inspector, matched map[string]bool) string {
	all, err := in.Jobs(ctx, crontab.JobFilter{Limit: listLimit + 1})
	if err != nil {
		return fmt.Sprintf("\n(the namespace's jobs cannot be listed: %v)", err)
	}
	if len(all) == 0 {
		return "\nno job is enqueued, running or dead in the namespace"
	}
	var b strings.Builder
	b.WriteString("\njobs in the namespace (* found):")
	counts := map[crontab.JobState]int{}
	for _, j := range all {
		if counts[j.State]++; counts[j.State] > listLimit {
			continue
		}
		mark := " "
		if matched[j.ID] {
			mark = "*"
		}
		fmt.Fprintf(&b, "\n %s %-7s %s %q", mark, j.State, j.ID, j.Task)
		switch j.State {
		case crontab.JobPending:
			fmt.Fprintf(&b, " due %s", stamp(j.Due))
		case crontab.JobRunning:
			fmt.Fprintf(&b, " on %s", j.Owner)
		case crontab.JobDead:
			fmt.Fprintf(&b, " failed %s: %s", stamp(j.Failed), j.Error)
		}
		fmt.Fprintf(&b, " attempts %d payload %s", j.Attempts, j.Payload)
	}
	for _, st := range []crontab.JobState{crontab.JobPending, crontab.JobRunning, crontab.JobDead} {
		if counts[st] > listLimit {
			fmt.Fprintf(&b, "\n   (only the first %d %s jobs are listed)", listLimit, st)
		}
	}
	return b.String()
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
