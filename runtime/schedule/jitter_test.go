package schedule

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The offset of a key is FNV-64a of its bytes mod the jitter in ms: these
// values follow from the FNV-1a definition (offset basis 0xcbf29ce484222325,
// prime 0x100000001b3), so they hold in every release.
func TestJitterOffsetIsFNV64a(t *testing.T) {
	for _, c := range []struct {
		key  string
		d    time.Duration
		want time.Duration
	}{
		{"a", time.Hour, 3241996 * time.Millisecond},              // 0xaf63dc4c8601ec8c
		{"clean logs", time.Hour, 2831097 * time.Millisecond},     // 0xe5843510abfb60f9
		{"tenant/42/report", time.Second, 695 * time.Millisecond}, // 0x24a315e192ae055f
		{"a", 0, 0},
		{"a", time.Millisecond, 0},
	} {
		if got := JitterOffset(c.key, c.d); got != c.want {
			t.Errorf("JitterOffset(%q, %v) = %v, want %v", c.key, c.d, got, c.want)
		}
	}
}

// Another process computes the same offsets.
func TestJitterOffsetStableAcrossProcesses(t *testing.T) {
	keys := []string{"a", "b", "nightly report", "tenant/1", "tenant/2"}
	if os.Getenv("JITTER_CHILD") == "1" {
		for _, k := range keys {
			fmt.Printf("%s=%d\n", k, JitterOffset(k, time.Hour).Milliseconds())
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestJitterOffsetStableAcrossProcesses$")
	cmd.Env = append(os.Environ(), "JITTER_CHILD=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	for _, k := range keys {
		want := fmt.Sprintf("%s=%d\n", k, JitterOffset(k, time.Hour).Milliseconds())
		if !strings.Contains(string(out), want) {
			t.Errorf("the child process computed another offset for %q: want %q in\n%s", k, want, out)
		}
	}
}

// 1,000 keys with a jitter of an hour spread over the hour: no minute holds
// more than 5 times the mean, and every offset is in [0, 1h).
func TestJitterOffsetSpread(t *testing.T) {
	const n = 1000
	var buckets [60]int
	for i := range n {
		off := JitterOffset(fmt.Sprintf("task-%d", i), time.Hour)
		if off < 0 || off >= time.Hour {
			t.Fatalf("offset %v out of [0, 1h)", off)
		}
		buckets[off/time.Minute]++
	}
	mean := float64(n) / 60
	empty := 0
	for m, c := range buckets {
		if float64(c) > 5*mean {
			t.Errorf("minute %d holds %d offsets, more than 5x the mean %.1f", m, c, mean)
		}
		if c == 0 {
			empty++
		}
	}
	if empty > 3 {
		t.Errorf("%d of 60 minutes hold no offset: %v", empty, buckets)
	}
}

func TestValidateJitter(t *testing.T) {
	for _, d := range []time.Duration{0, time.Millisecond, time.Hour, MaxJitter} {
		if err := ValidateJitter(d); err != nil {
			t.Errorf("ValidateJitter(%v): %v", d, err)
		}
	}
	for _, d := range []time.Duration{-time.Second, MaxJitter + time.Millisecond, 1500 * time.Microsecond} {
		if err := ValidateJitter(d); err == nil || !strings.Contains(err.Error(), "jitter "+d.String()) {
			t.Errorf("ValidateJitter(%v) = %v, want an error naming the value", d, err)
		}
	}
}

// Offset moves every instant later by d, and Next stays the first instant
// strictly after t.
func TestOffsetNext(t *testing.T) {
	s, err := Parse("every:1h", nil)
	if err != nil {
		t.Fatal(err)
	}
	o := Offset(s, 23*time.Minute)
	base := time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct{ t, want time.Time }{
		{base, base.Add(23 * time.Minute)},
		{base.Add(22 * time.Minute), base.Add(23 * time.Minute)},
		{base.Add(23 * time.Minute), base.Add(83 * time.Minute)}, // strictly after
		{base.Add(-time.Hour + 24*time.Minute), base.Add(23 * time.Minute)},
	} {
		if got := o.Next(c.t); !got.Equal(c.want) {
			t.Errorf("Next(%v) = %v, want %v", c.t, got, c.want)
		}
	}
	if Offset(s, 0) != s {
		t.Error("Offset(s, 0) is not s")
	}
	if got, want := Describe(o), "every 1h + 23m0s"; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	at, _ := Parse("at:1700000000", nil)
	oa := Offset(at, time.Second)
	if !IsOnce(oa) {
		t.Error("an offset at: schedule is not once")
	}
	if got := oa.Next(time.Unix(1700000000, 0)); !got.Equal(time.Unix(1700000001, 0)) {
		t.Errorf("offset at: Next = %v", got)
	}
	if got := oa.Next(time.Unix(1700000001, 0)); !got.IsZero() {
		t.Errorf("offset at: Next after its instant = %v, want none", got)
	}
}

// In a daylight-saving transition the offset is added, in absolute time,
// to the instant the policy yields.
func TestOffsetInDSTGap(t *testing.T) {
	ny := loadLocation(t, "America/New_York")
	// Spring forward 2024-03-10: 02:00 EST jumps to 03:00 EDT (07:00Z). A
	// fixed-time job at 02:30 fires at the jump; with the offset, 10 minutes
	// later.
	s, err := Parse("daily:02:30", ny)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2024, 3, 10, 0, 0, 0, 0, ny)
	jump := time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC)
	if got := s.Next(from); !got.Equal(jump) {
		t.Fatalf("the policy's instant is %v, want the jump %v", got, jump)
	}
	if got := Offset(s, 10*time.Minute).Next(from); !got.Equal(jump.Add(10 * time.Minute)) {
		t.Errorf("with a 10m offset: %v, want %v", got, jump.Add(10*time.Minute))
	}
	// Fall back 2024-11-03: 02:00 EDT goes back to 01:00 EST (06:00Z). A job
	// at 01:30 fires at its first occurrence (05:30Z); 45 minutes later is
	// 06:15Z, 01:15 EST on the wall clock, not 02:15.
	s, err = Parse("daily:01:30", ny)
	if err != nil {
		t.Fatal(err)
	}
	from = time.Date(2024, 11, 3, 0, 0, 0, 0, ny)
	want := time.Date(2024, 11, 3, 6, 15, 0, 0, time.UTC)
	got := Offset(s, 45*time.Minute).Next(from)
	if !got.Equal(want) {
		t.Errorf("fall back with a 45m offset: %v, want %v", got, want)
	}
	if h, m, _ := got.In(ny).Clock(); h != 1 || m != 15 {
		t.Errorf("wall clock %02d:%02d, want 01:15 (EST)", h, m)
	}
}
