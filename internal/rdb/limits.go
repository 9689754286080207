package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// JobLimit is the flow control of one job type as the claiming process's
// registry has it (TaskConfig.MaxRunning and Rate): at most MaxRunning
// jobs of the type running at once across the cluster (0: no cap), and at
// most RateN starts in any window of RatePer (a sliding window on Redis
// time; RateN 0: no rate). A job enqueued with a rate key (Envelope.RateKey)
// counts against the window of its type and key instead of its type's.
//
// InFlight is, for a capped type, the claiming process's jobs of the type
// in flight when it claims: claimed and not yet ended (running, or waiting
// for a worker). It holds a running slot for each of them (see
// "The limits of a claim").
type JobLimit struct {
	Type       string
	MaxRunning int
	RateN      int
	RatePer    time.Duration
	InFlight   int
}

// The limits of a claim (ClaimJobsFlow):
//
//   - running: the slots key of a capped type (P slots:<type>, one per
//     limit, in KEYS) is a hash of the processes holding slots: field the
//     process id (the claim id's part before its last '#', as
//     ClaimProcess), value "n|deadline_ms": it holds n slots until the
//     deadline (Redis time), which RenewJobSlots moves on with its job
//     leases. A field whose deadline has passed (a dead or stalled
//     process's) or that does not parse is deleted and not counted. With
//     others the n of the other live fields and mine the claimer's own
//     (0: none), the claimer gets slots = mine + grant, grant =
//     clamp(inflight + limit - mine, 0, cap - others - mine), and takes at
//     most JobSlotsAhead (1 for a type with a rate too) * slots - inflight jobs of the type (inflight:
//     JobLimit.InFlight, the jobs it holds: running, or waiting for one of
//     its slots or a worker; it runs at most slots of them at once);
//     having taken c, it writes its field min(slots, inflight + c) (HDEL
//     at 0), for every capped limit, whether or not a job of the type was
//     seen: so a process keeps slots only for the jobs it holds, gives the
//     rest back at its next claim, and the live fields never sum to more
//     than cap. The ack does not touch them.
//   - rate: the window key (P rate:<type>, or P ratekey:<len>:<type>:<key>
//     for a job with a rate key, built here from the prefix: one hash tag)
//     holds a member per start in the window, scored with its server time;
//     a start is allowed while fewer than N members are newer than now -
//     per. Older members are removed and the key expires after per, so an
//     idle window vanishes. A window key that holds a foreign value (not a
//     ZSET: an operator's SET, another program's) is not failed on: its
//     jobs wait, as in a full window, nothing is written to it, and the
//     reply names it, for the caller to move it aside (the per-key windows'
//     names come with the jobs: no check at start can know them).

// parseSlotField parses a slots field's value, "n|deadline_ms" (see
// "The limits of a claim").
func parseSlotField(v string) (n, deadlineMS int64, ok bool) {
	a, b, found := strings.Cut(v, "|")
	if !found {
		return 0, 0, false
	}
	n, err1 := strconv.ParseInt(a, 10, 64)
	deadlineMS, err2 := strconv.ParseInt(b, 10, 64)
	return n, deadlineMS, err1 == nil && err2 == nil && n >= 0
}

// renewJobSlotsScript moves on the deadline of a process's field in each
// slots key that has one, keeping its n (see "The limits of a claim").
//
// KEYS: the slots keys
// ARGV: process id, lease_ms
// Bounds: one HGET and at most one HSET per key.
// Failure: a key of the wrong type fails before anything is written.
// Returns how many fields it renewed.
var renewJobSlotsScript = redis.NewScript(luaNow + `
for _, key in ipairs(KEYS) do want_type(key, 'hash') end
local renewed = 0
for _, key in ipairs(KEYS) do
  local v = redis.call('HGET', key, ARGV[1])
  local n = v and string.match(v, '^(%d+)|')
  if n then
    redis.call('HSET', key, ARGV[1], string.format('%d|%d', tonumber(n), now + tonumber(ARGV[2])))
    renewed = renewed + 1
  end
end
return renewed
`)

// RenewJobSlots extends, to now + lease (Redis time), the running slots
// that process holds of the capped job types types, as RenewJobLeases does
// its job leases (the same lease). A field that is gone (its deadline
// passed and a claim deleted it) is not brought back: the process's next
// claim takes what the cap allows.
func (r *RDB) RenewJobSlots(ctx context.Context, process string, lease time.Duration, types []string) error {
	if len(types) == 0 {
		return nil
	}
	keys := make([]string, len(types))
	for i, t := range types {
		keys[i] = r.k.Slots(t)
	}
	if err := renewJobSlotsScript.Run(ctx, r.c, keys, process, lease.Milliseconds()).Err(); err != nil {
		return fmt.Errorf("renew job slots of %s: %w", process, err)
	}
	return nil
}

// ReleaseJobSlots deletes the running slots that process holds of the
// capped job types types: at a graceful stop, once its jobs have ended.
func (r *RDB) ReleaseJobSlots(ctx context.Context, process string, types []string) error {
	pipe := r.c.Pipeline()
	for _, t := range types {
		pipe.HDel(ctx, r.k.Slots(t), process)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("release job slots of %s: %w", process, err)
	}
	return nil
}

// JobFlow is what the flow control of one job type uses now: Running, the
// running slots held (the n of the slots key's live fields: jobs running
// or about to), and the starts in its rate window (the type's own, not a
// rate key's).
type JobFlow struct {
	Running int64
	Starts  int64
}

// JobFlow reads the running count and window use of the type typ, whose
// rate window is per (0: none), for display (crontab show), on this
// host's clock; it writes nothing.
func (r *RDB) JobFlow(ctx context.Context, typ string, per time.Duration) (JobFlow, error) {
	var f JobFlow
	pipe := r.c.Pipeline()
	running := pipe.HGetAll(ctx, r.k.Slots(typ))
	var starts *redis.IntCmd
	if per > 0 {
		starts = pipe.ZCount(ctx, r.k.Rate(typ), windowMin(time.Now().UnixMilli(), per), "+inf")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return f, err
	}
	now := time.Now().UnixMilli()
	for _, v := range running.Val() {
		if n, d, ok := parseSlotField(v); ok && d > now {
			f.Running += n
		}
	}
	if starts != nil {
		f.Starts = starts.Val()
	}
	return f, nil
}

// RateStart is one start counted in a rate window: the member the job
// claim added for it (unique per start) and the claim's Redis server time,
// unix ms.
type RateStart struct {
	Member string
	AtMS   int64
}

// RateStarts reads the starts in a rate window scored fromMS or later: the
// job type typ's own window for rateKey "", else that rate key's window
// (RateKey), oldest first, and the Redis server time of the read, unix ms, in one MULTI: no
// claim runs between the two, so every start of a claim after the read is
// scored nowMS or later. A start stays in the window for at least the
// rate's Per after its score (the claim removes only members scored now -
// per or earlier, and the key expires per after the latest claim that
// touched it), so reads less than Per apart, each from the previous read's
// nowMS, see every start once or more. For measurement (crontabbench,
// the e2e tests).
func (r *RDB) RateStarts(ctx context.Context, typ, rateKey string, fromMS int64) (starts []RateStart, nowMS int64, err error) {
	key := r.k.Rate(typ)
	if rateKey != "" {
		key = r.k.RateKey(typ, rateKey)
	}
	pipe := r.c.TxPipeline()
	zr := pipe.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: key, ByScore: true,
		Start: strconv.FormatInt(fromMS, 10), Stop: "+inf"})
	tm := pipe.Time(ctx)
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, 0, fmt.Errorf("read rate window %s: %w", key, err)
	}
	starts = make([]RateStart, 0, len(zr.Val()))
	for _, z := range zr.Val() {
		m, _ := z.Member.(string)
		starts = append(starts, RateStart{Member: m, AtMS: int64(z.Score)})
	}
	return starts, tm.Val().UnixMilli(), nil
}

// windowMin is the ZCOUNT minimum of the starts in a window of per that
// ends at nowMS: those newer than nowMS - per, as the claim counts them.
func windowMin(nowMS int64, per time.Duration) string {
	return "(" + strconv.FormatInt(nowMS-per.Milliseconds(), 10)
}

// RateWindow names the window of a rate key: the jobs of type Type
// enqueued with rate key Key (Keys.RateKey, which such a job counts
// against instead of its type's window), over a window of Per.
type RateWindow struct {
	Type, Key string
	Per       time.Duration
}

// RateKeyStarts reads, in one pipeline, the starts in each window of ws
// that ends at nowMS (unix ms), for display; it writes nothing. A missing
// key is 0; a foreign value fails the whole read.
func (r *RDB) RateKeyStarts(ctx context.Context, ws []RateWindow, nowMS int64) ([]int64, error) {
	ranges := make([]zrange, len(ws))
	for i, w := range ws {
		ranges[i] = zrange{r.k.RateKey(w.Type, w.Key), windowMin(nowMS, w.Per), "+inf"}
	}
	return r.zcounts(ctx, ranges)
}

// zrange is a ZCOUNT's key and score range.
type zrange struct{ key, min, max string }

// zcounts runs a ZCOUNT of each range in one pipeline and returns the
// counts, in order: 0 for a missing key; a foreign value fails the call.
func (r *RDB) zcounts(ctx context.Context, ranges []zrange) ([]int64, error) {
	cmds, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.IntCmd {
		cmds := make([]*redis.IntCmd, len(ranges))
		for i, z := range ranges {
			cmds[i] = pipe.ZCount(ctx, z.key, z.min, z.max)
		}
		return cmds
	})
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(ranges))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}
