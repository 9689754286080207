package rdb

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzEnvelopeFastPath checks that whatever the fast path of decodeEnvelope
// accepts, encoding/json decodes to the same envelope.
func FuzzEnvelopeFastPath(f *testing.F) {
	for _, seed := range []string{
		`{"task":"a","payload":{"n":1},"retries":3}`,
		`{"task":"a","payload":[1,"]",{"x":"}\""}],"retries":-0,"enqueued":17}`,
		`{"task":"a","payload":"s\"}","enqueued":01}`,
		`{"task":"a","payload":1.5e3}`,
		`{"task":"a","payload":true,"retries":1.0}`,
		`{"task":"a","payload":null}`,
		`{"task":"a","payload":{"n":1}}x`,
		`{"task":"a\u0041"}`,
		`{"task":"a","retries":99999999999999999999}`,
		`{"task":"a","payload":{},"retries":2,"fire":1719590400000}`,
		`{"task":"a","fire":-5}`,
		`{"task":"a","fire":1e3}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		fast, ok := decodeEnvelopeFast(raw)
		if !ok {
			return
		}
		var slow Envelope
		if err := json.Unmarshal([]byte(raw), &slow); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", raw, err)
		}
		if fast.Task == "" || fast.Task != slow.Task || !bytes.Equal(fast.Payload, slow.Payload) ||
			(fast.Retries == nil) != (slow.Retries == nil) || (fast.Retries != nil && *fast.Retries != *slow.Retries) ||
			fast.Enqueued != slow.Enqueued || fast.Fire != slow.Fire || slow.Error != "" || slow.Failed != 0 || slow.Attempts != 0 {
			t.Fatalf("%q: fast path %+v, encoding/json %+v", raw, fast, slow)
		}
	})
}

// TestEnvelopeFastPathTakesClientEnvelopes checks that the envelopes the
// client writes take the fast path.
func TestEnvelopeFastPathTakesClientEnvelopes(t *testing.T) {
	three := 3
	for _, env := range []Envelope{
		{Task: "send email", Payload: json.RawMessage(`{"to":"a@b.c","n":[1,2],"s":"q\"}"}`)},
		{Task: "x", Payload: json.RawMessage(`{}`), Retries: &three, Enqueued: 1719590400000},
		{Task: "x", Payload: json.RawMessage(`{}`), Retries: &three, Fire: 1719590400000}, // a fire's retry
		{Task: "x"},
	} {
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := decodeEnvelopeFast(string(b))
		if !ok || got.Task != env.Task || !bytes.Equal(got.Payload, env.Payload) || got.Enqueued != env.Enqueued || got.Fire != env.Fire ||
			(env.Retries != nil && (got.Retries == nil || *got.Retries != *env.Retries)) {
			t.Fatalf("decodeEnvelopeFast(%s) = %+v, %v", b, got, ok)
		}
	}
}

// BenchmarkDecodeEnvelope decodes the envelope of a small job, as the
// client writes it, by the fast path and by encoding/json.
func BenchmarkDecodeEnvelope(b *testing.B) {
	raw := `{"task":"bench job","payload":{"n":12345},"retries":3}`
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeEnvelope(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var env Envelope
			if err := json.Unmarshal([]byte(raw), &env); err != nil {
				b.Fatal(err)
			}
		}
	})
}
