package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The ranges of the flow-control fields of a TaskConfig (and of the
// directive keys max_running, rate and priority).
const (
	// MaxMaxRunning bounds TaskConfig.MaxRunning.
	MaxMaxRunning = 1 << 20
	// MaxRateCount bounds the N of a Rate.
	MaxRateCount = 1 << 20
	// MinRatePer and MaxRatePer bound the window of a Rate.
	MinRatePer, MaxRatePer = time.Millisecond, 24 * time.Hour
	// MinPriority and MaxPriority bound TaskConfig.Priority.
	MinPriority, MaxPriority = -1000, 1000
)

// Rate is a start rate: at most N starts in any window of length Per (a
// sliding window). The zero Rate is no limit.
type Rate struct {
	N   int
	Per time.Duration
}

// IsZero reports whether r is no limit.
func (r Rate) IsZero() bool { return r == Rate{} }

// String returns r as ParseRate reads it: "100/1s", "5/1m0s"; "" for no
// limit.
func (r Rate) String() string {
	if r.IsZero() {
		return ""
	}
	return strconv.Itoa(r.N) + "/" + r.Per.String()
}

// Validate checks that r is no limit, or within the documented ranges: N
// from 1 to MaxRateCount, Per from MinRatePer to MaxRatePer, whole
// milliseconds.
func (r Rate) Validate() error {
	switch {
	case r.IsZero():
		return nil
	case r.N < 1 || r.N > MaxRateCount:
		return fmt.Errorf("rate %d/%v: count %d: want 1 to %d", r.N, r.Per, r.N, MaxRateCount)
	case r.Per < MinRatePer || r.Per > MaxRatePer:
		return fmt.Errorf("rate %d/%v: window %v: want %v to %v", r.N, r.Per, r.Per, MinRatePer, MaxRatePer)
	case r.Per%time.Millisecond != 0:
		return fmt.Errorf("rate %d/%v: window %v: want whole milliseconds", r.N, r.Per, r.Per)
	}
	return nil
}

// ParseRate reads a rate "N/D": N a positive integer, D a Go duration
// ("1m", "500ms", "1h30m") or one of the units s, m, h alone, meaning one
// of it ("100/s" is 100/1s). The result is validated (see Rate.Validate).
func ParseRate(s string) (Rate, error) {
	n, d, ok := strings.Cut(s, "/")
	if !ok {
		return Rate{}, fmt.Errorf("rate %q: want N/D, such as 100/s or 5/1m", s)
	}
	count, err := strconv.Atoi(n)
	if err != nil || count < 1 {
		return Rate{}, fmt.Errorf("rate %q: count %q: want a positive integer", s, n)
	}
	var per time.Duration
	switch d {
	case "ms", "s", "m", "h":
		d = "1" + d
	}
	per, err = time.ParseDuration(d)
	if err != nil {
		return Rate{}, fmt.Errorf("rate %q: window %q: want a duration, such as s, 1m or 500ms", s, d)
	}
	r := Rate{N: count, Per: per}
	if err := r.Validate(); err != nil {
		return Rate{}, fmt.Errorf("rate %q: %w", s, err)
	}
	return r, nil
}
