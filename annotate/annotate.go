package annotate

import (
	"strconv"
	"strings"
	"time"
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
)

var keys = [...]string{keyName, keyExpression, keyStatus, keyTimeout, keyConcurrent, keyTZ, keyMisfire, keyRetries}

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
// expression, status, timeout, concurrent, tz, misfire, retries. Name,
// expression and tz are rendered as Go-quoted strings, the other values bare.
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
