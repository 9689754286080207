package rdb

import (
	"encoding/json"
	"testing"
)

// encodeByReflection is the reference encoding of a record: encoding/json.
func encodeByReflection(r Record) string {
	b, _ := json.Marshal(r)
	return string(b)
}

func TestRecordEncodeMatchesEncodingJSON(t *testing.T) {
	const at = 1719590400123
	for _, r := range []Record{
		{Task: "send sms", JobID: "0a1b", Fire: at, Start: at, End: at + 1000, Outcome: "ok", Process: "h:1:ab", Attempt: 1},
		{Task: "t", Fire: at, Start: at, End: at, Outcome: "skipped", Error: "previous run still running", Process: "p"},
		{Task: `q"uote\\`, Outcome: "failed", Error: "line\nbreak <b> & \x00 \xff ünï", Process: "p", Attempt: -3},
		{},
	} {
		if got, want := r.Encode(), encodeByReflection(r); got != want {
			t.Errorf("encode:\n got %s\nwant %s", got, want)
		}
	}
}

func FuzzRecordEncode(f *testing.F) {
	f.Add("task", "job", "boom", "proc", int64(1719590400123), 2)
	f.Add("t\"<>&\\", "", "\x00\xff\u2028", "", int64(-1), 0)
	f.Fuzz(func(t *testing.T, task, job, errText, process string, at int64, attempt int) {
		r := Record{Task: task, JobID: job, Fire: at, Start: at, End: at,
			Outcome: "failed", Error: errText, Process: process, Attempt: attempt}
		if got, want := r.Encode(), encodeByReflection(r); got != want {
			t.Fatalf("encode:\n got %s\nwant %s", got, want)
		}
	})
}

// encodeLeaseByReflection is the reference encoding of a lease.
func encodeLeaseByReflection(l Lease) string {
	b, _ := json.Marshal(l)
	return string(b)
}

func TestLeaseEncodeMatchesEncodingJSON(t *testing.T) {
	for _, l := range []Lease{
		{Process: "h:1:ab", Task: "s-99999", Fire: 1719590400123, Start: 1719590400125},
		{Process: `p"<>&\\`, Task: "t\n\x00\xff\u2028 ünï", Fire: -1, Start: 0},
		{},
	} {
		if got, want := l.Encode(), encodeLeaseByReflection(l); got != want {
			t.Errorf("encode:\n got %s\nwant %s", got, want)
		}
	}
}

func FuzzLeaseEncode(f *testing.F) {
	f.Add("proc", "task", int64(1719590400123), int64(1719590400125))
	f.Add("p\"<>&\\", "\x00\xff\u2028", int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, process, task string, fire, start int64) {
		l := Lease{Process: process, Task: task, Fire: fire, Start: start}
		if got, want := l.Encode(), encodeLeaseByReflection(l); got != want {
			t.Fatalf("encode:\n got %s\nwant %s", got, want)
		}
	})
}
