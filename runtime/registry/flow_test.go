package registry

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
		err  string
	}{
		{"100/s", Rate{100, time.Second}, ""},
		{"5/1m", Rate{5, time.Minute}, ""},
		{"20000/1s", Rate{20000, time.Second}, ""},
		{"3/500ms", Rate{3, 500 * time.Millisecond}, ""},
		{"1/h", Rate{1, time.Hour}, ""},
		{"1/24h", Rate{1, 24 * time.Hour}, ""},
		{"100", Rate{}, `rate "100": want N/D`},
		{"0/s", Rate{}, `count "0": want a positive integer`},
		{"-1/s", Rate{}, `count "-1"`},
		{"x/s", Rate{}, `count "x"`},
		{"1/day", Rate{}, `window "day": want a duration`},
		{"1/25h", Rate{}, "window 25h0m0s: want 1ms to 24h0m0s"},
		{"1/100us", Rate{}, "window 100µs: want 1ms to 24h0m0s"},
		{"1/1500us", Rate{}, "want whole milliseconds"},
		{"2000000/s", Rate{}, "count 2000000: want 1 to 1048576"},
	} {
		got, err := ParseRate(tc.in)
		if tc.err == "" {
			if err != nil || got != tc.want {
				t.Errorf("ParseRate(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			if back, err := ParseRate(got.String()); err != nil || back != got {
				t.Errorf("ParseRate(%q.String() = %q) = %v, %v", tc.in, got.String(), back, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseRate(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.err)
		}
	}
}

func TestAddChecksFlowControl(t *testing.T) {
	for _, tc := range []struct {
		cfg  TaskConfig
		want string
	}{
		{TaskConfig{MaxRunning: -1}, `task "x": max_running -1: want 0 (no cap) to 1048576`},
		{TaskConfig{MaxRunning: MaxMaxRunning + 1}, "max_running 1048577"},
		{TaskConfig{Priority: 1001}, `task "x": priority 1001: want -1000 to 1000`},
		{TaskConfig{Priority: -1001}, "priority -1001"},
		{TaskConfig{Rate: Rate{N: 0, Per: time.Second}}, `task "x": rate 0/1s: count 0`},
		{TaskConfig{Rate: Rate{N: 1}}, `task "x": rate 1/0s: window 0s`},
	} {
		tc.cfg.Name, tc.cfg.New = "x", newSendSMS
		if err := NewRegistry().Add(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v; want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	for _, tc := range []struct {
		cfg  TaskConfig
		want string
	}{
		{TaskConfig{Expression: "every:1s", Rate: Rate{5, time.Second}}, `task "x": rate 5/1s: only job types (no Expression) are rate-limited`},
		{TaskConfig{Expression: "every:1s", Priority: -3}, `task "x": priority -3: only job types (no Expression) have a priority`},
	} {
		tc.cfg.Name, tc.cfg.New = "x", newSendSMS
		if err := NewRegistry().Add(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v; want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	ok := TaskConfig{Name: "x", New: newSendSMS, MaxRunning: 50, Rate: Rate{20000, time.Second}}
	r := NewRegistry()
	if err := r.Add(ok); err != nil {
		t.Fatal(err)
	}
	if r.Prioritized() {
		t.Error("Prioritized() with no priority set")
	}
	if err := r.Add(TaskConfig{Name: "y", New: func() TaskInterface { return new(urgent) }, Priority: -3}); err != nil {
		t.Fatal(err)
	}
	if !r.Prioritized() {
		t.Error("Prioritized() = false with a type at priority -3")
	}
	if got, _ := r.Lookup("x"); got.MaxRunning != 50 || got.Rate != ok.Rate {
		t.Errorf("Lookup: %+v", got)
	}
}

// urgent is a second job type, for a registry of two.
type urgent struct{}

func (urgent) Handle(context.Context) error { return nil }
