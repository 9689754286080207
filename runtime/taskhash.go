package runtime

import (
	"fmt"
	"strconv"
	"time"
)

// The fields of a task hash that the engine reads. The seed design's fields
// (class, name, expression, next_run, last_run, status, interval,
// created_at) are all present; the rest are this engine's.
const (
	fieldType       = "type"       // the registered type name that runs it
	fieldExpression = "expression" // the schedule expression
	fieldTZ         = "tz"         // the zone the schedule is computed in
	fieldNextRun    = "next_run"   // the next scheduled instant, unix ms; 0 means none
	fieldStatus     = "status"     // active, paused or disabled
	fieldMisfire    = "misfire"    // once or skip
	fieldParams     = "params"     // JSON parameters of a run-time task
	fieldTimeout    = "timeout"    // ms
	fieldRetries    = "retries"    // one-off re-runs of a failed or abandoned fire
)

// taskState is what the dispatcher reads of a due task.
type taskState struct {
	member     string
	typ        string
	expression string
	tz         string
	nextRun    int64
	status     Status
	misfire    Misfire
	params     string
}

// taskStateFields lists the fields parseTaskState expects, in order.
var taskStateFields = []string{fieldType, fieldExpression, fieldTZ, fieldNextRun, fieldStatus, fieldMisfire, fieldParams}

// parseTaskState decodes an HMGET of taskStateFields. It fails on a hash
// that is missing or corrupt, naming the field.
func parseTaskState(member string, vals []any) (taskState, error) {
	if len(vals) != len(taskStateFields) {
		return taskState{}, fmt.Errorf("task %q: got %d fields, want %d", member, len(vals), len(taskStateFields))
	}
	str := func(i int) (string, bool) {
		s, ok := vals[i].(string)
		return s, ok
	}
	st := taskState{member: member}
	var ok bool
	if st.typ, ok = str(0); !ok {
		if allNil(vals) {
			return st, fmt.Errorf("task %q: no task hash", member)
		}
		return st, fmt.Errorf("task %q: field %s is missing", member, fieldType)
	}
	st.expression, _ = str(1)
	st.tz, _ = str(2)
	next, _ := str(3)
	n, err := strconv.ParseInt(next, 10, 64)
	if err != nil || n < 0 {
		return st, fmt.Errorf("task %q: field %s: bad value %q", member, fieldNextRun, next)
	}
	st.nextRun = n
	status, _ := str(4)
	st.status = Status(status)
	misfire, _ := str(5)
	st.misfire = Misfire(misfire)
	if !st.misfire.Valid() {
		st.misfire = MisfireOnce
	}
	st.params, _ = str(6)
	return st, nil
}

func allNil(vals []any) bool {
	for _, v := range vals {
		if v != nil {
			return false
		}
	}
	return true
}

// ms converts a time to unix milliseconds; the zero Time is 0.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS converts unix milliseconds to a time; 0 is the zero Time.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}
