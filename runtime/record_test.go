package runtime

import (
	"encoding/json"
	"testing"
	"time"
)

// encodeByReflection is the reference encoding of a record: encoding/json
// of its wireRecord.
func encodeByReflection(r Record) string {
	b, _ := json.Marshal(wireRecord{Task: r.Task, JobID: r.JobID, Fire: ms(r.Fire), Start: ms(r.Start),
		End: ms(r.End), Outcome: string(r.Outcome), Error: r.Error, Process: r.Process, Attempt: r.Attempt})
	return string(b)
}

func TestRecordEncodeMatchesEncodingJSON(t *testing.T) {
	at := time.UnixMilli(1719590400123)
	for _, r := range []Record{
		{Task: "send sms", JobID: "0a1b", Fire: at, Start: at, End: at.Add(time.Second), Outcome: OutcomeOK, Process: "h:1:ab", Attempt: 1},
		{Task: "t", Fire: at, Start: at, End: at, Outcome: OutcomeSkipped, Error: "previous run still running", Process: "p"},
		{Task: `q"uote\\`, Outcome: OutcomeFailed, Error: "line\nbreak <b> & \x00 \xff ünï", Process: "p", Attempt: -3},
		{},
	} {
		if got, want := r.encode(), encodeByReflection(r); got != want {
			t.Errorf("encode:\n got %s\nwant %s", got, want)
		}
	}
}

func FuzzRecordEncode(f *testing.F) {
	f.Add("task", "job", "boom", "proc", int64(1719590400123), 2)
	f.Add("t\"<>&\\", "", "\x00\xff\u2028", "", int64(-1), 0)
	f.Fuzz(func(t *testing.T, task, job, errText, process string, at int64, attempt int) {
		r := Record{Task: task, JobID: job, Fire: time.UnixMilli(at), Start: time.UnixMilli(at), End: time.UnixMilli(at),
			Outcome: OutcomeFailed, Error: errText, Process: process, Attempt: attempt}
		if got, want := r.encode(), encodeByReflection(r); got != want {
			t.Fatalf("encode:\n got %s\nwant %s", got, want)
		}
	})
}
