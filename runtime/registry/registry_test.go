package registry

import (
	"context"
	"strings"
	"testing"
	"time"
)

type cleanLogs struct{}

func (*cleanLogs) Handle(context.Context) error { return nil }

type sendSMS struct{ To string }

func (sendSMS) Handle(context.Context) error { return nil }

func newCleanLogs() TaskInterface { return new(cleanLogs) }
func newSendSMS() TaskInterface   { return new(sendSMS) }

func TestAddAppliesDefaults(t *testing.T) {
	r := NewRegistry()
	if err := r.Add(TaskConfig{Name: "clean logs", Expression: "daily:03:00", New: newCleanLogs}); err != nil {
		t.Fatal(err)
	}
	got, ok := r.Lookup("clean logs")
	if !ok {
		t.Fatal("Lookup: not found")
	}
	if got.Status != StatusActive || got.Timeout != DefaultTimeout || got.TZ != "UTC" || got.Misfire != MisfireOnce ||
		got.Concurrent || got.Retries != 0 {
		t.Errorf("defaults not applied: %+v", got)
	}
	if want := "github.com/gocrontab/crontab/runtime/registry.cleanLogs"; got.Class != want {
		t.Errorf("Class = %q, want %q", got.Class, want)
	}
	e := r.Entry("clean logs")
	if e == nil || e.Schedule() == nil || e.Config().Name != "clean logs" {
		t.Fatalf("Entry = %+v", e)
	}
	from := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	if next, want := e.Schedule().Next(from), time.Date(2024, 6, 2, 3, 0, 0, 0, time.UTC); !next.Equal(want) {
		t.Errorf("Next(%v) = %v, want %v", from, next, want)
	}
	if _, ok := r.Lookup("nope"); ok || r.Entry("nope") != nil {
		t.Error("an unknown name resolved")
	}
}

func TestZeroRegistry(t *testing.T) {
	var r Registry
	if _, ok := r.Lookup("x"); ok || len(r.Tasks()) != 0 || len(r.Entries()) != 0 {
		t.Fatal("the zero Registry is not empty")
	}
	if err := r.Add(TaskConfig{Name: "sms", New: newSendSMS}); err != nil {
		t.Fatal(err)
	}
	if name, ok := r.NameOf(sendSMS{}); !ok || name != "sms" {
		t.Errorf("NameOf = %q, %v", name, ok)
	}
}

func TestNamesAndTypes(t *testing.T) {
	r := NewRegistry()
	for _, cfg := range []TaskConfig{
		{Name: "sms", New: newSendSMS, TZ: "Europe/London", Status: StatusPaused, Misfire: MisfireSkip, Retries: 3},
		{Name: "clean", Expression: "every:30s", New: newCleanLogs},
	} {
		if err := r.Add(cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, job := range []TaskInterface{sendSMS{}, &sendSMS{To: "+100"}} {
		if name, ok := r.NameOf(job); !ok || name != "sms" {
			t.Errorf("NameOf(%T) = %q, %v; want sms", job, name, ok)
		}
	}
	if name, ok := r.NameOf(nil); ok || name != "" {
		t.Errorf("NameOf(nil) = %q, %v", name, ok)
	}
	var names []string
	for _, c := range r.Tasks() {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "clean,sms" {
		t.Errorf("Tasks = %s, want clean,sms (sorted)", got)
	}
	entries := r.Entries()
	if len(entries) != 2 || entries[0].Schedule() == nil || entries[1].Schedule() != nil {
		t.Errorf("Entries: want clean with a schedule, then the job type sms without")
	}
	if c := entries[1].Config(); c.Status != StatusPaused || c.Misfire != MisfireSkip || c.Retries != 3 || c.TZ != "Europe/London" {
		t.Errorf("explicit fields changed: %+v", c)
	}
}

func TestAddErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  TaskConfig
		want string
	}{
		{TaskConfig{New: newSendSMS}, "task config: empty name"},
		{TaskConfig{Name: "a"}, `task "a": New is nil`},
		{TaskConfig{Name: "a", New: func() TaskInterface { return nil }}, `task "a": New returned nil`},
		{TaskConfig{Name: "a", New: newSendSMS, Status: "on"}, `task "a": status "on": want active, paused or disabled`},
		{TaskConfig{Name: "a", New: newSendSMS, Timeout: -time.Second}, `task "a": timeout -1s: must be positive`},
		{TaskConfig{Name: "a", New: newSendSMS, Misfire: "all"}, `task "a": misfire "all": want once or skip`},
		{TaskConfig{Name: "a", New: newSendSMS, Retries: -1}, `task "a": retries -1: want 0 to 100`},
		{TaskConfig{Name: "a", New: newSendSMS, Retries: MaxRetryLimit + 1}, `task "a": retries 101: want 0 to 100`},
		{TaskConfig{Name: "a", New: newSendSMS, TZ: "Nowhere/Land"}, `task "a": tz "Nowhere/Land": `},
		{TaskConfig{Name: "a", New: newSendSMS, Expression: "every:0"}, `task "a": expression "every:0": every: interval "0" must be positive`},
		{TaskConfig{Name: "a", New: newSendSMS, Expression: "every:1h", Jitter: -time.Second}, `task "a": jitter -1s: want 0 (none) to 24h0m0s`},
		{TaskConfig{Name: "a", New: newSendSMS, Expression: "every:1h", Jitter: 25 * time.Hour}, `task "a": jitter 25h0m0s: want 0 (none) to 24h0m0s`},
		{TaskConfig{Name: "a", New: newSendSMS, Expression: "every:1h", Jitter: 1500 * time.Microsecond}, `task "a": jitter 1.5ms: want a whole number of milliseconds`},
		{TaskConfig{Name: "a", New: newSendSMS, Jitter: time.Second}, `task "a": jitter 1s: only scheduled tasks`},
		{TaskConfig{Name: "sms", New: newCleanLogs}, `task "sms": registered twice`},
		{TaskConfig{Name: "other", New: newSendSMS}, `task "other": type registry.sendSMS is already registered as "sms"`},
	} {
		r := NewRegistry()
		if err := r.Add(TaskConfig{Name: "sms", New: newSendSMS}); err != nil {
			t.Fatal(err)
		}
		err := r.Add(tc.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v; want an error starting %q", tc.cfg, err, tc.want)
		}
		if len(r.Tasks()) != 1 {
			t.Errorf("Add(%+v) failed but registered it", tc.cfg)
		}
	}
}

func TestStatusAndMisfireValid(t *testing.T) {
	for s, want := range map[Status]bool{StatusActive: true, StatusPaused: true, StatusDisabled: true, "": false, "Active": false} {
		if s.Valid() != want {
			t.Errorf("Status(%q).Valid() = %v", s, !want)
		}
	}
	for m, want := range map[Misfire]bool{MisfireOnce: true, MisfireSkip: true, "": false, "all": false} {
		if m.Valid() != want {
			t.Errorf("Misfire(%q).Valid() = %v", m, !want)
		}
	}
}

// A task's schedule is its expression moved by the stable offset of its
// name for its jitter.
func TestJitterMovesTheSchedule(t *testing.T) {
	r := NewRegistry()
	if err := r.Add(TaskConfig{Name: "clean logs", New: newCleanLogs, Expression: "every:1h", Jitter: time.Hour}); err != nil {
		t.Fatal(err)
	}
	// FNV-64a("clean logs") mod 3,600,000 ms is 2,831,097 ms.
	hour := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	want := hour.Add(2831097 * time.Millisecond)
	if got := r.Entry("clean logs").Schedule().Next(hour); !got.Equal(want) {
		t.Errorf("Next(%v) = %v, want %v", hour, got, want)
	}
}
