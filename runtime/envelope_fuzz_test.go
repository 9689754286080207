package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// fuzzJob is a job type with fields of many kinds, for FuzzJobEnvelope.
type fuzzJob struct {
	S string            `json:"s"`
	N int               `json:"n"`
	U uint8             `json:"u"`
	F float64           `json:"f"`
	B bool              `json:"b"`
	M map[string]any    `json:"m"`
	L []int             `json:"l"`
	A [2]string         `json:"a"`
	P *fuzzJob          `json:"p"`
	T time.Time         `json:"t"`
	D time.Duration     `json:"d"`
	R json.RawMessage   `json:"r"`
	I any               `json:"i"`
	E map[int][]float32 `json:"e"`
}

func (fuzzJob) Handle(context.Context) error { return nil }

// panickyJob's own decoder panics on a payload that mentions "boom".
type panickyJob struct{}

func (*panickyJob) UnmarshalJSON(b []byte) error {
	if bytes.Contains(b, []byte("boom")) {
		panic("boom")
	}
	return nil
}

func (panickyJob) Handle(context.Context) error { return nil }

// FuzzJobEnvelope decodes arbitrary text as a stored job envelope through
// the scheduler's own code path (decodeEnvelope, the registry lookup,
// decodePayload into a new value of the registered type) and checks that
// nothing panics, that a decoded envelope always names a task and encodes
// again (as a retry or a dead letter does), and that an envelope that does
// not decode still makes a valid dead letter that keeps its text.
func FuzzJobEnvelope(f *testing.F) {
	for _, seed := range []string{
		`{"task":"fuzz","payload":{"s":"x","n":1,"f":1.5,"b":true,"m":{"a":[1,{}]},"l":[1,2],"p":{"p":{"s":"deep"}}}}`,
		`{"task":"fuzz","payload":{"t":"2024-03-10T02:30:00-05:00","d":1000000000,"r":[1,"two"],"i":null,"e":{"1":[1.5]}}}`,
		`{"task":"fuzz","payload":{"n":1e400,"u":256,"a":["a","b","c"],"e":{"x":[]}}}`,
		`{"task":"fuzz","payload":"not an object"}`,
		`{"task":"fuzz","payload":null}`,
		`{"task":"fuzz"}`,
		`{"task":"fuzz","payload":{},"retries":3,"enqueued":1719590400000}`,
		`{"task":"fuzz","payload":{},"retries":-1}`,
		`{"task":"fuzz","payload":{},"retries":1e9}`,
		`{"task":"fuzz","payload":{},"retries":"3"}`,
		`{"task":"panicky","payload":{"x":"boom"}}`,
		`{"task":"panicky","payload":{"x":"fine"}}`,
		`{"task":"unknown","payload":{}}`,
		`{"task":"os/exec.Cmd","payload":{"Path":"/bin/sh"}}`,
		`{"task":"","payload":{}}`,
		`{"payload":{}}`,
		`{"task":null}`,
		`{"task":7}`,
		`{"task":"fuzz","task":"panicky","payload":{"x":"boom"}}`,
		`{"TASK":"fuzz"}`,
		`{"task":"fuzz","payload":{"s":"\ud800"}}`,
		"{\"task\":\"fuzz\",\"payload\":{\"s\":\"\xff\"}}",
		"\xff\xfe{",
		`[]`, `null`, `""`, `0`, ``, `{`, `{"task":"fuzz","payload":{"l":[` + strings.Repeat("[", 200) + `]}}`,
		`{"task":"fuzz","payload":` + strings.Repeat(`{"p":`, 100) + `{}` + strings.Repeat(`}`, 100) + `}`,
		`{"task":"fuzz","error":"x","failed":1,"attempts":2}`,
	} {
		f.Add(seed)
	}
	reg := NewRegistry()
	for _, c := range []TaskConfig{
		{Name: "fuzz", New: func() TaskInterface { return new(fuzzJob) }},
		{Name: "panicky", New: func() TaskInterface { return new(panickyJob) }},
	} {
		if err := reg.Add(c); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, raw string) {
		env, err := decodeEnvelope(raw)
		if err != nil {
			// Dead-lettered: the dead letter (as ackJob encodes it) is
			// valid JSON that keeps the text.
			dead := badEnvelope(raw)
			dead.Error = err.Error()
			b, merr := json.Marshal(dead)
			if merr != nil || !json.Valid(b) {
				t.Fatalf("dead letter of %q does not encode: %v", raw, merr)
			}
			var back envelope
			var text string
			if err := json.Unmarshal(b, &back); err != nil || json.Unmarshal(back.Payload, &text) != nil {
				t.Fatalf("dead letter %s of %q does not decode", b, raw)
			}
			if text != validUTF8(raw) {
				t.Fatalf("dead letter of %q keeps %q", raw, text)
			}
			return
		}
		if env.Task == "" {
			t.Fatalf("decodeEnvelope(%q) = %+v without a task name", raw, env)
		}
		// A retry or a dead letter encodes the envelope again.
		env.Error, env.Failed, env.Attempts = "failed", 1, 1
		if _, err := json.Marshal(env); err != nil {
			t.Fatalf("envelope decoded from %q does not encode again: %v", raw, err)
		}
		r := reg.Entry(env.Task)
		if r == nil {
			return // left for a process that knows the type
		}
		task, err := decodePayload(r, newFromConfig, env.Payload)
		if (task == nil) == (err == nil) {
			t.Fatalf("decodePayload of %q = %v, %v; want a task or an error", raw, task, err)
		}
		if err == nil {
			if err := safeHandle(context.Background(), task); err != nil {
				t.Fatalf("Handle of %q: %v", raw, err)
			}
		}
	})
}

// validUTF8 replaces each byte of s that is not valid UTF-8 with U+FFFD, as
// encoding/json does.
func validUTF8(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as one utf8.RuneError
	}
	return b.String()
}
