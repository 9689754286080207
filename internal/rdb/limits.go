package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// JobLimit is the flow control of one job type as the claiming process's
// registry has it (TaskConfig.MaxRunning and Rate): at most MaxRunning
// jobs of the type running at once across the cluster (0: no cap), and at
// most RateN starts in any window of RatePer (a sliding window on Redis
// time; RateN 0: no rate). A job enqueued with a rate key (Envelope.RateKey)
// counts against the window of its type and key instead of its type's.
type JobLimit struct {
	Type       string
	MaxRunning int
	RateN      int
	RatePer    time.Duration
}

// The limits of a claim (ClaimJobsFlow, ClaimJobsLimited):
//
//   - running: the slots key of a capped type (P slots:<type>, one per
//     limit, in KEYS) holds a member per job of the type in flight, scored
//     with its claim's lease deadline at claim time. A member whose score
//     has passed is checked against its owner (jobs:owner) and the owner
//     claim's lease: still leased, its score is brought forward to that
//     lease; else (the job was acked, redelivered, or its process died) it
//     is removed. So a dead process's slots free when its lease expires,
//     with no write per lease renewal. The running count is the members
//     left; the ack removes a member (AckBatch.Slots).
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
//

// ClaimJobsLimited is ClaimJobsFlow without priority levels, for a process
// of which some job types have limits (limits: not empty, each with
// MaxRunning or a rate): it claims the due jobs of the types named in
// types (nil: of every type, as ClaimJobs does), except those of a limited
// type that is full, which wait in the queue in their order. The limits
// are the caller's (its registry): processes of builds that disagree each
// enforce their own on their own claims. nextMS and foreign are as in
// FlowClaim.
func (r *RDB) ClaimJobsLimited(ctx context.Context, claimID string, limit int, lease time.Duration, types []string, limits []JobLimit, scan int, retry time.Duration) (jobs []ClaimedJob, nextMS int64, foreign []string, err error) {
	if len(limits) == 0 {
		return nil, 0, nil, errors.New("claim jobs: no limits")
	}
	c, err := r.ClaimJobsFlow(ctx, ClaimFlow{ClaimID: claimID, Limit: limit, Lease: lease, Types: types, Limits: limits,
		Scan: scan, Retry: retry})
	return c.Jobs, c.NextMS, c.Foreign, err
}

// JobFlow is what the flow control of one job type uses now: its jobs
// running by the slots key (members whose lease has not passed) and the
// starts in its rate window (the type's own, not a rate key's).
type JobFlow struct {
	Running int64
	Starts  int64
}

// JobFlow reads the running count and window use of the type typ, whose
// rate window is per (0: none), for display (crontab show), on this
// host's clock; it writes nothing, so the job of a dead claim counts until
// a claim of the type removes it.
func (r *RDB) JobFlow(ctx context.Context, typ string, per time.Duration) (JobFlow, error) {
	var f JobFlow
	pipe := r.c.Pipeline()
	running := pipe.ZCard(ctx, r.k.Slots(typ))
	var starts *redis.IntCmd
	if per > 0 {
		starts = pipe.ZCount(ctx, r.k.Rate(typ), windowMin(time.Now().UnixMilli(), per), "+inf")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return f, err
	}
	f.Running = running.Val()
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
	cmds, err := pipelined(ctx, r.c, nil, func(pipe redis.Pipeliner) []*redis.IntCmd {
		cmds := make([]*redis.IntCmd, len(ws))
		for i, w := range ws {
			cmds[i] = pipe.ZCount(ctx, r.k.RateKey(w.Type, w.Key), windowMin(nowMS, w.Per), "+inf")
		}
		return cmds
	})
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(ws))
	for i, c := range cmds {
		out[i] = c.Val()
	}
	return out, nil
}
