package rdb

import (
	"encoding/json"
	"strconv"
)

// Record is one run record of a task's history list (history:<key>), as
// stored: JSON, times in unix ms. The Lua scripts write the same shape for
// skipped and abandoned fires, and push_history reads its end_ms (or fire)
// to drop records past the history's age, by a string match of the plain
// integer Encode writes (cjson.decode only for a record it does not read).
type Record struct {
	Task    string `json:"task"`
	JobID   string `json:"job,omitempty"`
	Fire    int64  `json:"fire"`
	Start   int64  `json:"start_ms"`
	End     int64  `json:"end_ms"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	Process string `json:"process"`
	Attempt int    `json:"attempt"`
}

// Encode returns r as stored, byte for byte what encoding/json writes for
// it, without reflection: a burst of jobs encodes a record per ack that the
// history keeps.
func (r Record) Encode() string {
	b := make([]byte, 0, 160+len(r.Error))
	b = append(b, `{"task":`...)
	b = appendJSONString(b, r.Task)
	if r.JobID != "" {
		b = append(b, `,"job":`...)
		b = appendJSONString(b, r.JobID)
	}
	b = append(b, `,"fire":`...)
	b = strconv.AppendInt(b, r.Fire, 10)
	b = append(b, `,"start_ms":`...)
	b = strconv.AppendInt(b, r.Start, 10)
	b = append(b, `,"end_ms":`...)
	b = strconv.AppendInt(b, r.End, 10)
	b = append(b, `,"outcome":`...)
	b = appendJSONString(b, r.Outcome)
	if r.Error != "" {
		b = append(b, `,"error":`...)
		b = appendJSONString(b, r.Error)
	}
	b = append(b, `,"process":`...)
	b = appendJSONString(b, r.Process)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(r.Attempt), 10)
	b = append(b, '}')
	return string(b)
}

// appendJSONString appends s as encoding/json writes it: printable ASCII
// that needs no escape is copied, anything else is left to encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// DecodeRecord decodes a stored run record.
func DecodeRecord(s string) (Record, error) {
	var r Record
	err := json.Unmarshal([]byte(s), &r)
	return r, err
}
