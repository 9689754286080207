package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
)

// decodeEnvelope decodes a job's envelope as stored in jobs:data. An
// envelope that is not a JSON object, or names no task, is an error: the
// job can never run and is dead-lettered.
func decodeEnvelope(raw string) (envelope, error) {
	var env envelope
	if err := json.Unmarshal([]byte(raw), &env); err != nil {
		return envelope{}, fmt.Errorf("bad job envelope %q: %v", truncate(raw, 200), err)
	}
	if env.Task == "" {
		return envelope{}, fmt.Errorf("bad job envelope %q: no task name", truncate(raw, 200))
	}
	return env, nil
}

// decodePayload returns a new value of the registered type reg with the
// JSON payload decoded into it. A panic in the type's own UnmarshalJSON is
// an error, like a panic in its handler, not a dead scheduler.
func decodePayload(reg *registered, payload json.RawMessage) (task TaskInterface, err error) {
	defer func() {
		if p := recover(); p != nil {
			task, err = nil, fmt.Errorf("decode payload into %s: panic: %v\n%s", reg.cfg.Class, p, debug.Stack())
		}
	}()
	task = reg.cfg.New()
	if task == nil {
		return nil, errors.New("New returned nil")
	}
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, task); err != nil {
			return nil, fmt.Errorf("decode payload into %s: %w", reg.cfg.Class, err)
		}
	}
	return task, nil
}

// badEnvelope is the envelope kept in the dead letters for a job whose
// stored envelope does not decode: the stored text, as a JSON string, is
// its payload. (Invalid UTF-8 becomes U+FFFD, so the dead letter is valid
// JSON that DeadJobs and operators can read; strconv.Quote's \x escapes
// are not JSON, and such a dead letter was written empty.)
func badEnvelope(raw string) envelope {
	b, _ := json.Marshal(raw) // a string always encodes
	return envelope{Task: "?", Payload: b}
}
