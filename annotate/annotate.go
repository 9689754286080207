package annotate

import (
	"strconv"
	"strings"
	"time"

	"github.com/gocrontab/crontab/runtime/registry"
	"github.com/gocrontab/crontab/runtime/schedule"
)

// Prefix starts every directive line. There is no space after the //.
const Prefix = "//crontab:"

// Defaults applied by [Parse] to the keys a directive leaves out.
const (
	DefaultStatus  = StatusActive
	DefaultTimeout = 300 * time.Second
	DefaultTZ      = "UTC"
	DefaultMisfire = MisfireOnce
	DefaultRetries = 0
	// DefaultMaxRunning is no cap on the runs in progress at once.
	DefaultMaxRunning = 0
	// DefaultPriority is the priority of a type that sets none.
	DefaultPriority = 0
	// DefaultJitter is no jitter: a task fires at its expression's
	// instants.
	DefaultJitter = time.Duration(0)
)

// Limits enforced by [Parse].
const (
	// MaxNameLen is the maximum length of a name, in bytes.
	MaxNameLen = 200
	// MinTimeout is the shortest timeout: locks are kept in milliseconds.
	MinTimeout = time.Millisecond
	// MaxTimeout is the longest timeout.
	MaxTimeout = 24 * time.Hour
	// MaxRetries is the largest number of retries of a run.
	MaxRetries = 100
	// MaxMaxRunning is the largest max_running (the runtime's
	// registry.MaxMaxRunning).
	MaxMaxRunning = registry.MaxMaxRunning
	// MinPriority and MaxPriority bound priority (the runtime's
	// registry.MinPriority and registry.MaxPriority).
	MinPriority, MaxPriority = registry.MinPriority, registry.MaxPriority
	// MaxJitter is the largest jitter (the runtime's schedule.MaxJitter,
	// 24h).
	MaxJitter = schedule.MaxJitter
)

// The values of the status key.
const (
	StatusActive   = "active"
	StatusPaused   = "paused"
	StatusDisabled = "disabled"
)

// The values of the misfire key.
const (
	// MisfireOnce fires one catch-up run for any number of missed instants.
	MisfireOnce = "once"
	// MisfireSkip drops missed instants and waits for the next one.
	MisfireSkip = "skip"
)

// The keys, in the canonical order of [Directive.String].
const (
	keyName       = "name"
	keyExpression = "expression"
	keyStatus     = "status"
	keyTimeout    = "timeout"
	keyConcurrent = "concurrent"
	keyTZ         = "tz"
	keyMisfire    = "misfire"
	keyRetries    = "retries"
	keyMaxRunning = "max_running"
	keyRate       = "rate"
	keyPriority   = "priority"
	keyJitter     = "jitter"
)

var keys = [...]string{keyName, keyExpression, keyStatus, keyTimeout, keyConcurrent, keyTZ, keyMisfire, keyRetries,
	keyMaxRunning, keyRate, keyPriority, keyJitter}

// IsDirective reports whether a raw comment line (as in ast.Comment.Text) is
// a crontab directive, that is whether it starts with [Prefix].
func IsDirective(comment string) bool {
	return strings.HasPrefix(comment, Prefix)
}

// Directive is a parsed, valid //crontab: directive. [Parse] fills every
// field, applying the documented default of each key that was left out.
type Directive struct {
	// Name is the task's name; never empty.
	Name string
	// Expression is the schedule expression, not validated here; empty for
	// a job type.
	Expression string
	// Status is StatusActive, StatusPaused or StatusDisabled.
	Status string
	// TZ is the syntax-checked IANA zone name; default "UTC".
	TZ string
	// Misfire is MisfireOnce or MisfireSkip.
	Misfire string
	// Timeout is in [MinTimeout, MaxTimeout]; default 300s.
	Timeout time.Duration
	// Concurrent reports whether runs may overlap; default false.
	Concurrent bool
	// Retries is the number of extra attempts of a failed or abandoned
	// run, in [0, MaxRetries].
	Retries int
	// MaxRunning caps the runs of the type in progress at once across the
	// cluster, in [0, MaxMaxRunning]; 0 (the default) is no cap.
	MaxRunning int
	// Rate caps the starts of the type across the cluster: at most Rate.N
	// in any window of length Rate.Per. The zero Rate (the default) is no
	// limit; otherwise it is valid as registry.Rate.Validate checks.
	Rate registry.Rate
	// Priority orders the type's due jobs when they back up, higher first,
	// in [MinPriority, MaxPriority]; default 0.
	Priority int
	// Jitter moves a scheduled task's instants by a stable offset in [0,
	// Jitter) of its name, in [0, MaxJitter], whole milliseconds; default
	// 0 (none).
	Jitter time.Duration

	// Offsets holds the byte offset in the comment line of each key that
	// was present, and ValueOffsets the offset of its value (of the opening
	// quote when the value is quoted), so callers can point later errors,
	// such as a bad expression, at the right column. Keys left out have no
	// entry. Offsets count from the start of the line, that is from the
	// "//" at ast.Comment.Slash.
	Offsets, ValueOffsets map[string]int
}

// IsJob reports whether d declares a job type: a type without an expression,
// which runs only when enqueued.
func (d *Directive) IsJob() bool { return d.Expression == "" }

// String renders d as a canonical directive line that [Parse] turns back
// into an equal Directive (offsets aside). Keys come in a fixed order: name,
// expression, status, timeout, concurrent, tz, misfire, retries,
// max_running, rate, priority, jitter. Name,
// expression, tz and rate are rendered as Go-quoted strings, the other
// values bare.
// A key whose value is its default, or the zero value, is left out.
func (d *Directive) String() string {
	var b strings.Builder
	b.Grow(len(Prefix) + 16 + len(d.Name) + len(d.Expression))
	b.WriteString(Prefix)
	b.WriteString(keyName)
	b.WriteByte('=')
	b.WriteString(strconv.Quote(d.Name))
	pair := func(key, value string) {
		b.WriteByte(' ')
		b.WriteString(key)
		b.WriteByte('=')
		b.WriteString(value)
	}
	if d.Expression != "" {
		pair(keyExpression, strconv.Quote(d.Expression))
	}
	if d.Status != "" && d.Status != DefaultStatus {
		pair(keyStatus, d.Status)
	}
	if d.Timeout != 0 && d.Timeout != DefaultTimeout {
		pair(keyTimeout, formatDuration(d.Timeout))
	}
	if d.Concurrent {
		pair(keyConcurrent, "true")
	}
	if d.TZ != "" && d.TZ != DefaultTZ {
		pair(keyTZ, strconv.Quote(d.TZ))
	}
	if d.Misfire != "" && d.Misfire != DefaultMisfire {
		pair(keyMisfire, d.Misfire)
	}
	if d.Retries != DefaultRetries {
		pair(keyRetries, strconv.Itoa(d.Retries))
	}
	if d.MaxRunning != DefaultMaxRunning {
		pair(keyMaxRunning, strconv.Itoa(d.MaxRunning))
	}
	if !d.Rate.IsZero() {
		pair(keyRate, strconv.Quote(strconv.Itoa(d.Rate.N)+"/"+formatDuration(d.Rate.Per)))
	}
	if d.Priority != DefaultPriority {
		pair(keyPriority, strconv.Itoa(d.Priority))
	}
	if d.Jitter != DefaultJitter {
		pair(keyJitter, formatDuration(d.Jitter))
	}
	return b.String()
}

// formatDuration is d.String() without the zero units it ends with:
// 5m rather than 5m0s, 1h rather than 1h0m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
