package rdb

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/gocrontab/crontab/internal/redistest"
	"github.com/gocrontab/crontab/runtime/registry"
)

var flowFieldNames = []string{FieldMaxRunning, FieldRateN, FieldRatePerMS, FieldPriority}

// flowFields returns the flow-control fields present in a task hash.
func flowFields(t *testing.T, r *RDB, key string) map[string]string {
	t.Helper()
	h, err := r.c.HGetAll(context.Background(), r.k.Task(key)).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range flowFieldNames {
		if v, ok := h[f]; ok {
			out[f] = v
		}
	}
	return out
}

// Register and SetTask write the flow-control fields of a task hash only
// when they are set, remove them when a later declaration drops them, and
// ReadTaskStates reads them back.
func TestTaskHashFlowFields(t *testing.T) {
	srv := redistest.Start(t)
	r := New(srv.Client(t), "ns")
	ctx := context.Background()
	set := map[string]string{FieldMaxRunning: "50", FieldRateN: "100", FieldRatePerMS: "1000", FieldPriority: "-5"}
	rate := registry.Rate{N: 100, Per: time.Second}

	for _, tc := range []struct {
		name  string
		write func(d TaskDecl) error
	}{
		{"register", func(d TaskDecl) error { _, _, err := r.Register(ctx, 500, []TaskDecl{d}); return err }},
		{"settask", func(d TaskDecl) error { _, err := r.SetTask(ctx, 500, d); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := TaskDecl{Key: "plain-" + tc.name, Type: "a", Expression: "every:1s", TZ: "UTC", Status: "active",
				NextMS: 1000, Timeout: time.Minute, Misfire: "once"}
			if err := tc.write(plain); err != nil {
				t.Fatal(err)
			}
			if got := flowFields(t, r, plain.Key); len(got) != 0 {
				t.Errorf("a task without flow control has the fields %v", got)
			}

			capped := plain
			capped.Key = "capped-" + tc.name
			capped.MaxRunning, capped.Rate, capped.Priority = 50, rate, -5
			if err := tc.write(capped); err != nil {
				t.Fatal(err)
			}
			if got := flowFields(t, r, capped.Key); !maps.Equal(got, set) {
				t.Errorf("fields %v, want %v", got, set)
			}
			reads, err := r.ReadTaskStates(ctx, []string{capped.Key, plain.Key})
			if err != nil {
				t.Fatal(err)
			}
			if st := reads[0].State; reads[0].Err != nil || st.MaxRunning != 50 || st.Rate != rate || st.Priority != -5 {
				t.Errorf("capped state %+v, err %v", st, reads[0].Err)
			}
			if st := reads[1].State; reads[1].Err != nil || st.MaxRunning != 0 || !st.Rate.IsZero() || st.Priority != 0 {
				t.Errorf("plain state %+v, err %v", st, reads[1].Err)
			}

			// Dropping one key from the declaration removes its field only.
			capped.Rate = registry.Rate{}
			if err := tc.write(capped); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{FieldMaxRunning: "50", FieldPriority: "-5"}
			if got := flowFields(t, r, capped.Key); !maps.Equal(got, want) {
				t.Errorf("after dropping the rate: fields %v, want %v", got, want)
			}
			capped.MaxRunning, capped.Priority = 0, 0
			if err := tc.write(capped); err != nil {
				t.Fatal(err)
			}
			if got := flowFields(t, r, capped.Key); len(got) != 0 {
				t.Errorf("after dropping every key: fields %v", got)
			}
		})
	}
}

// ParseTaskState fails on a corrupt flow-control or jitter field, naming
// it, and reads the jitter.
func TestParseTaskStateFlowFields(t *testing.T) {
	base := []any{"a", "every:1s", "UTC", "1000", "active", "once", ""}
	for _, tc := range []struct {
		flow   []any  // max_running, rate_n, rate_per_ms, priority, jitter
		want   string // "" for no error
		jitter time.Duration
	}{
		{[]any{nil, nil, nil, nil, nil, "90000"}, "", 0},
		{[]any{nil, nil, nil, nil, nil, "x"}, `field timeout: bad value "x"`, 0},
		{[]any{nil, nil, nil, nil, nil, "-1"}, `field timeout: bad value "-1"`, 0},
		{[]any{nil, nil, nil, nil, nil, nil}, "", 0},
		{[]any{"3", "5", "60000", "1000", nil, nil}, "", 0},
		{[]any{nil, nil, nil, nil, "3600000", nil}, "", time.Hour},
		{[]any{"x", nil, nil, nil, nil, nil}, `field max_running: bad value "x"`, 0},
		{[]any{"-1", nil, nil, nil, nil, nil}, `field max_running: bad value -1`, 0},
		{[]any{nil, nil, nil, "1001", nil, nil}, `field priority: bad value 1001`, 0},
		{[]any{nil, "5", nil, nil, nil, nil}, `fields rate_n and rate_per_ms: rate 5/0s`, 0},
		{[]any{nil, "5", "1.5", nil, nil, nil}, `field rate_per_ms: bad value "1.5"`, 0},
		{[]any{nil, nil, nil, nil, "x", nil}, `field jitter: bad value "x"`, 0},
		{[]any{nil, nil, nil, nil, "-5", nil}, `field jitter: bad value "-5"`, 0},
		{[]any{nil, nil, nil, nil, "86400001", nil}, `field jitter: bad value "86400001": want 0 to 86400000`, 0},
	} {
		st, err := ParseTaskState("a", append(append([]any{}, base...), tc.flow...)) // flow fields, jitter, timeout
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.flow, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want %q (state %+v)", tc.flow, err, tc.want, st)
		case tc.want == "" && st.Jitter != tc.jitter:
			t.Errorf("%v: jitter %v, want %v", tc.flow, st.Jitter, tc.jitter)
		case tc.want == "" && tc.flow[5] == "90000" && st.Timeout != 90*time.Second:
			t.Errorf("%v: timeout %v, want 90s", tc.flow, st.Timeout)
		}
	}
}

// Register and SetTask write the jitter field only when set, and a
// changed or dropped jitter reschedules the task (next_run from the
// declaration) as a changed expression does.
func TestTaskHashJitterField(t *testing.T) {
	srv := redistest.Start(t)
	r := New(srv.Client(t), "ns")
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		write func(d TaskDecl) (bool, error)
	}{
		{"register", func(d TaskDecl) (bool, error) { ch, _, err := r.Register(ctx, 500, []TaskDecl{d}); return ch[0], err }},
		{"settask", func(d TaskDecl) (bool, error) { res, err := r.SetTask(ctx, 500, d); return res > 0, err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := TaskDecl{Key: "j-" + tc.name, Type: "a", Expression: "every:1h", TZ: "UTC", Status: "active",
				NextMS: 3_600_000 + 1234, Timeout: time.Minute, Misfire: "once", Jitter: time.Hour}
			field := func() (string, string) {
				h := r.c.HGetAll(ctx, r.k.Task(d.Key)).Val()
				return h[FieldJitter], h[FieldNextRun]
			}
			for i, step := range []struct {
				jitter  time.Duration
				next    int64
				changed bool
				field   string
				nextRun string
			}{
				{time.Hour, 3_601_234, true, "3600000", "3601234"},
				{time.Hour, 3_609_999, false, "3600000", "3601234"}, // same jitter: schedule kept
				{time.Minute, 3_600_042, true, "60000", "3600042"},
				{0, 3_600_000, true, "", "3600000"},
				{0, 7_200_000, false, "", "3600000"},
			} {
				d.Jitter, d.NextMS = step.jitter, step.next
				changed, err := tc.write(d)
				if err != nil {
					t.Fatal(err)
				}
				f, nr := field()
				if changed != step.changed || f != step.field || nr != step.nextRun {
					t.Errorf("step %d: changed %v, jitter %q, next_run %s; want %v, %q, %s", i, changed, f, nr, step.changed, step.field, step.nextRun)
				}
			}
		})
	}
}
