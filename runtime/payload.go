package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
	"github.com/gocrontab/crontab/runtime/registry"
)

// envelope is a job's envelope as stored in jobs:data (its format is
// internal/rdb's).
type envelope = rdb.Envelope

// decodeEnvelope and badEnvelope are the data model's.
var (
	decodeEnvelope = rdb.DecodeEnvelope
	badEnvelope    = rdb.BadEnvelope
)

// decodePayload returns newValue(reg), a new value of the registered type
// reg or a fresh copy of its provided value, with the JSON payload decoded
// into it. A panic in New or in the type's own UnmarshalJSON is an error,
// like a panic in its handler, not a dead scheduler.
func decodePayload(reg *registry.Entry, newValue func(*registry.Entry) TaskInterface, payload json.RawMessage) (task TaskInterface, err error) {
	defer func() {
		if p := recover(); p != nil {
			task, err = nil, fmt.Errorf("decode payload into %s: panic: %v\n%s", reg.Config().Class, p, debug.Stack())
		}
	}()
	task = newValue(reg)
	if task == nil {
		return nil, errors.New("New returned nil")
	}
	if len(payload) > 0 {
		if err := json.Unmarshal(payload, task); err != nil {
			return nil, fmt.Errorf("decode payload into %s: %w", reg.Config().Class, err)
		}
	}
	return task, nil
}

// taskState is what the dispatcher reads of a due task (rdb.TaskState).
type taskState = rdb.TaskState

// The task hash fields the engine reads by name.
const (
	fieldType       = rdb.FieldType
	fieldExpression = rdb.FieldExpression
	fieldTZ         = rdb.FieldTZ
	fieldStatus     = rdb.FieldStatus
	fieldMisfire    = rdb.FieldMisfire
	fieldParams     = rdb.FieldParams
	fieldTimeout    = rdb.FieldTimeout
)

func ms(t time.Time) int64     { return rdb.MS(t) }
func fromMS(v int64) time.Time { return rdb.FromMS(v) }
