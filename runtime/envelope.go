package runtime

import "encoding/json"

// badEnvelope is the envelope kept in the dead letters for a job whose
// stored envelope does not decode: the stored text, as a JSON string, is
// its payload. (Invalid UTF-8 becomes U+FFFD, so the dead letter is valid
// JSON that DeadJobs and operators can read; strconv.Quote's \x escapes
// are not JSON, and such a dead letter was written empty.)
func badEnvelope(raw string) envelope {
	b, _ := json.Marshal(raw) // a string always encodes
	return envelope{Task: "?", Payload: b}
}
