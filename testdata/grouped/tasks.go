// Package grouped shows where a directive may stand: on a single type
// declaration (in or out of parentheses), on each type of a group, anywhere
// in the doc comment; and every key of the directive.
package grouped

import "context"

//go:generate go run github.com/gocrontab/crontab/cmd/crontabgen -o crontab_gen.go .

type (
	// Report is a type in a group with its own doc comment.
	//
	//crontab:name=report expression="cron:0 8 * * 1-5" tz=Europe/Berlin misfire=skip
	Report struct{}

	// Unannotated is in the same group, without a directive.
	Unannotated struct{}

	//crontab:name=digest expression=every:5m status=paused concurrent=true timeout=1500ms
	//
	// Digest has its directive first: gofmt leaves a directive where it is,
	// and the generator reads the raw comment lines.
	Digest int
)

// Parenthesized is the only type of its declaration: its doc comment may be
// on the declaration.
//
//crontab:name=parenthesized expression=hourly:30 status=disabled timeout=2h
type (
	Parenthesized struct{ n int }
)

// Resize is a job type with every job key.
//
//crontab:name=resize timeout=90s retries=5 concurrent=true
type Resize struct {
	Path   string            `json:"path"`
	Sizes  []int             `json:"sizes"`
	Meta   map[string]string `json:"meta,omitempty"`
	Done   chan struct{}     `json:"-"` // skipped by encoding/json
	hidden func()            // unexported: skipped by encoding/json
}

// Once fires once, at a fixed second.
//
//crontab:name=once expression=at:1893456000
type Once struct{}

func (*Report) Handle(context.Context) error        { return nil }
func (Digest) Handle(context.Context) error         { return nil }
func (*Parenthesized) Handle(context.Context) error { return nil }
func (*Resize) Handle(context.Context) error        { return nil }
func (Once) Handle(context.Context) error           { return nil }
