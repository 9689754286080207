package rdb

import (
	"context"
	"strconv"
	"strings"
)

// The per-minute counters of the last hour (Keys.StatsMinute): a HASH of
// at most 60 slots, one per minute of the hour (minute index mod 60), each
// with the minute index it counts ("<slot>") and its counters
// ("<slot>:<counter>"), at most 7 fields a slot. The finish script of task
// runs and the ack script of jobs add to the current minute's slot inside
// their own call (no extra round trip); a slot whose minute is an hour old
// is zeroed when its minute comes again. So the hash never holds more than
// 420 fields, and no counter is ever older than an hour.

// The counters of a minute slot.
const (
	MinuteFires     = "fires"      // task runs finished (ok, failed, abandoned)
	MinuteFailed    = "failed"     // of them, not ok
	MinuteLagSum    = "lag_sum"    // sum over them of start - scheduled instant, ms
	MinuteLagMax    = "lag_max"    // the largest of those lags, ms
	MinuteJobs      = "jobs"       // job attempts finished (ok, retry, dead)
	MinuteJobFailed = "job_failed" // of them, not ok
)

// minuteCounters lists every counter of a slot, for the zeroing.
var minuteCounters = []string{MinuteFires, MinuteFailed, MinuteLagSum, MinuteLagMax, MinuteJobs, MinuteJobFailed}

// luaMinute defines minute_add(key, now, adds, lagmax): it adds the counts
// of adds (counter name -> n) to the slot of now's minute in key (after
// zeroing a slot left by an older minute) and raises its lag_max to
// lagmax. It writes nothing when key holds another type, and a counter
// HINCRBY refuses is set anew: it never fails its script, so a script calls
// it after its other writes. Needs luaNow's now. One HMGET reads the slot's
// minute and lag_max (and stands for the type check).
var luaMinute = `
local function minute_add(key, adds, lagmax)
  local m = math.floor(now / 60000)
  local s = tostring(m % 60)
  local h = redis.pcall('HMGET', key, s, s .. ':lag_max') -- its error stands for a TYPE check
  if h.err then return end
  local cur = tonumber(h[2]) or 0
  if h[1] ~= tostring(m) then
    redis.call('HDEL', key, ` + luaMinuteFields() + `)
    redis.call('HSET', key, s, m)
    cur = 0
  end
  for f, v in pairs(adds) do
    if v ~= 0 then incr(key, s .. ':' .. f, v) end
  end
  if lagmax and lagmax > 0 and lagmax > cur then redis.call('HSET', key, s .. ':lag_max', lagmax) end
end
`

// luaMinuteFields is the Lua argument list of a slot's counter fields.
func luaMinuteFields() string {
	parts := make([]string, len(minuteCounters))
	for i, c := range minuteCounters {
		parts[i] = "s .. ':" + c + "'"
	}
	return strings.Join(parts, ", ")
}

// MinuteStat is one minute's counters.
type MinuteStat struct {
	Minute             int64 // unix ms / 60000
	Fires, Failed      int64
	LagSumMS, LagMaxMS int64
	JobRuns, JobFailed int64
}

// ReadMinuteStats reads the per-minute counters (one HGETALL of at most
// 420 fields) and returns the 60 minutes ending with nowMS's, oldest
// first; a minute without a slot counts zero.
func (r *RDB) ReadMinuteStats(ctx context.Context, nowMS int64) ([]MinuteStat, error) {
	h, err := r.c.HGetAll(ctx, r.k.StatsMinute()).Result()
	if err != nil {
		return nil, err
	}
	return ParseMinuteStats(h, nowMS), nil
}

// ParseMinuteStats decodes the per-minute hash into the 60 minutes ending
// with nowMS's, oldest first. Bad values count zero.
func ParseMinuteStats(h map[string]string, nowMS int64) []MinuteStat {
	cur := nowMS / 60000
	out := make([]MinuteStat, 60)
	for i := range out {
		m := cur - 59 + int64(i)
		out[i].Minute = m
		s := strconv.FormatInt(m%60, 10)
		if h[s] != strconv.FormatInt(m, 10) {
			continue
		}
		n := func(c string) int64 {
			v, _ := strconv.ParseInt(h[s+":"+c], 10, 64)
			return v
		}
		out[i].Fires, out[i].Failed = n(MinuteFires), n(MinuteFailed)
		out[i].LagSumMS, out[i].LagMaxMS = n(MinuteLagSum), n(MinuteLagMax)
		out[i].JobRuns, out[i].JobFailed = n(MinuteJobs), n(MinuteJobFailed)
	}
	return out
}
