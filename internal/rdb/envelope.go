package rdb

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Envelope is the JSON stored for each job in jobs:data. Producers in other
// languages write the same shape (see the package documentation).
type Envelope struct {
	Task     string          `json:"task"`
	Payload  json.RawMessage `json:"payload,omitempty"`
	Retries  *int            `json:"retries,omitempty"`
	Enqueued int64           `json:"enqueued,omitempty"`
	// Fire, when set (unix ms), is the job's scheduled instant, which its
	// runs report as RunInfo.Fire whatever its due time: the instant of
	// the scheduled fire a retry job re-runs, or, in a dead letter and in
	// a job retried from the dead letters, when the job was first due.
	// Omitted (0) for a job enqueued as such: its first due time is its
	// scheduled instant.
	Fire     int64  `json:"fire,omitempty"`
	Error    string `json:"error,omitempty"`
	Failed   int64  `json:"failed,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
	// Unique is the job's unique identity (Keys.UniqueKey), for a job
	// enqueued with one: Cancel frees it, Inspector.Job shows it.
	Unique string `json:"unique,omitempty"`
	// RateKey, when set (crontab.RateKey), puts the job's starts in a rate
	// window of its own per type and key instead of its type's
	// (TaskConfig.Rate). An envelope that has it takes DecodeEnvelope's
	// slow path, and the claim decodes it with cjson: jobs without it pay
	// nothing.
	RateKey string `json:"rate_key,omitempty"`
}

// DecodeEnvelope decodes a job's envelope as stored in jobs:data. An
// envelope that is not a JSON object, or names no task, is an error: the
// job can never run and is dead-lettered.
//
// Envelopes as the client writes them take a fast path that reads the
// fixed shape by hand (encoding/json's reflection was a quarter of the CPU
// of draining a burst); anything else, or anything the fast path is unsure
// of, goes through encoding/json, with the same result.
func DecodeEnvelope(raw string) (Envelope, error) {
	if env, ok := decodeEnvelopeFast(raw); ok {
		return env, nil
	}
	var env Envelope
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		return Envelope{}, fmt.Errorf("bad job envelope %q: %v", truncate(raw, 200), err)
	}
	if env.Task == "" {
		return Envelope{}, fmt.Errorf("bad job envelope %q: no task name", truncate(raw, 200))
	}
	return env, nil
}

// BadEnvelope is the envelope kept in the dead letters for a job whose
// stored envelope does not decode: the stored text, as a JSON string, is
// its payload. (Invalid UTF-8 becomes U+FFFD, so the dead letter is valid
// JSON that DeadJobs and operators can read; strconv.Quote's \x escapes
// are not JSON, and such a dead letter was written empty.)
func BadEnvelope(raw string) Envelope {
	b, _ := json.Marshal(raw) // a string always encodes
	return Envelope{Task: "?", Payload: b}
}

// decodeEnvelopeFast decodes raw when it has exactly the shape the client
// writes: {"task":"name","payload":value,"retries":n,"enqueued":n,"fire":n},
// in that order, without whitespace, payload, retries, enqueued and fire optional,
// the name plain printable ASCII without escapes, the payload any valid
// JSON but null. It reports false for anything else, without an error: the
// caller then decodes with encoding/json.
func decodeEnvelopeFast(raw string) (Envelope, bool) {
	const head = `{"task":"`
	if !strings.HasPrefix(raw, head) {
		return Envelope{}, false
	}
	i := len(head)
	start := i
	for ; i < len(raw) && raw[i] != '"'; i++ {
		if c := raw[i]; c < 0x20 || c >= 0x80 || c == '\\' {
			return Envelope{}, false
		}
	}
	if i == len(raw) || i == start {
		return Envelope{}, false
	}
	env := Envelope{Task: raw[start:i]}
	rest := raw[i+1:]
	if r, ok := strings.CutPrefix(rest, `,"payload":`); ok {
		n := jsonValueEnd(r)
		if n <= 0 || r[0] == 'n' || !json.Valid([]byte(r[:n])) {
			return Envelope{}, false
		}
		env.Payload = json.RawMessage(r[:n])
		rest = r[n:]
	}
	if r, ok := strings.CutPrefix(rest, `,"retries":`); ok {
		v, n, ok := jsonInt(r)
		if !ok || int64(int(v)) != v {
			return Envelope{}, false
		}
		retries := int(v)
		env.Retries = &retries
		rest = r[n:]
	}
	if r, ok := strings.CutPrefix(rest, `,"enqueued":`); ok {
		v, n, ok := jsonInt(r)
		if !ok {
			return Envelope{}, false
		}
		env.Enqueued = v
		rest = r[n:]
	}
	if r, ok := strings.CutPrefix(rest, `,"fire":`); ok {
		v, n, ok := jsonInt(r)
		if !ok {
			return Envelope{}, false
		}
		env.Fire = v
		rest = r[n:]
	}
	return env, rest == "}"
}

// jsonValueEnd returns the length of the JSON value at the start of s,
// assuming it is valid (the caller checks), or 0 when s ends inside it.
func jsonValueEnd(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '"':
		return jsonStringEnd(s)
	case '{', '[':
		depth := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '"':
				n := jsonStringEnd(s[i:])
				if n == 0 {
					return 0
				}
				i += n - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return 0
	case ' ', '\t', '\n', '\r':
		return 0 // encoding/json would drop the whitespace
	default: // a number, true or false: up to the next delimiter
		i := 0
		for i < len(s) && !strings.ContainsRune(",} \t\n\r", rune(s[i])) {
			i++
		}
		return i
	}
}

// jsonStringEnd returns the length of the JSON string at the start of s
// (its quotes included), or 0 when it is not closed.
func jsonStringEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return 0
}

// jsonInt reads a JSON integer of at most 18 digits at the start of s (so
// that it cannot overflow int64) and returns it and its length.
func jsonInt(s string) (int64, int, bool) {
	i, neg := 0, false
	if i < len(s) && s[i] == '-' {
		neg = true
		i++
	}
	start := i
	var v int64
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		v = v*10 + int64(s[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || (digits > 1 && s[start] == '0') {
		return 0, 0, false
	}
	if i < len(s) && (s[i] == '.' || s[i] == 'e' || s[i] == 'E') {
		return 0, 0, false
	}
	if neg {
		v = -v
	}
	return v, i, true
}

// EnvelopeType returns the job type of a stored envelope as the claim
// scripts read it (claimJobsFlowScript counts a capped type's slots by
// it): the name at its head when it starts {"task":"name" (no escape in
// the name), else its "task" decoded as JSON when a non-empty string, else
// "".
func EnvelopeType(raw string) string {
	if rest, ok := strings.CutPrefix(raw, `{"task":"`); ok {
		if i := strings.IndexAny(rest, `"\`); i >= 0 && rest[i] == '"' {
			return rest[:i]
		}
	}
	var env struct {
		Task any `json:"task"`
	}
	if json.Unmarshal([]byte(raw), &env) != nil {
		return ""
	}
	t, _ := env.Task.(string)
	return t
}
