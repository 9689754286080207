package bench

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The baseline is a naive poller shaped like the classic Redis delay-queue
// demo: the producer does HSET data + ZADD queue per job; one consumer loop
// reads the head with ZRANGE 0 0, claims it with ZREM (whoever removes it
// owns it), reads and deletes the payload with HGET and HDEL, runs the
// handler, and sleeps 1 s whenever the head is not due (or the queue is
// empty). Four round trips per job, and lag bounded by the idle sleep.
const (
	naiveQueue = "naive:queue"
	naiveData  = "naive:data"
	naiveIdle  = time.Second
)

// naivePoll is the consumer loop; it runs until ctx ends.
func naivePoll(ctx context.Context, rdb *redis.Client, handle func(payload string)) {
	for ctx.Err() == nil {
		head, err := rdb.ZRangeWithScores(ctx, naiveQueue, 0, 0).Result()
		if err != nil || len(head) == 0 || int64(head[0].Score) > time.Now().UnixMilli() {
			sleep(ctx, naiveIdle)
			continue
		}
		id := head[0].Member.(string)
		if n, err := rdb.ZRem(ctx, naiveQueue, id).Result(); err != nil || n == 0 {
			continue // another consumer took it
		}
		payload, err := rdb.HGet(ctx, naiveData, id).Result()
		if err != nil {
			continue
		}
		rdb.HDel(ctx, naiveData, id)
		handle(payload)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// runJobsNaive runs the baseline on jobs due at due[i] (unix ms).
func (e *env) runJobsNaive(ctx context.Context, name string, due []int64) (jobOutcome, error) {
	rec := newRecorder(len(due))
	rdb, cnt := e.client()
	defer rdb.Close()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		naivePoll(ctx, rdb, func(payload string) {
			now := time.Now()
			var j benchJob
			if json.Unmarshal([]byte(payload), &j) != nil {
				rec.bad.Add(1)
				return
			}
			rec.ran(j.N, now, now, time.UnixMilli(due[j.N]))
			rec.completed(time.Now().UnixNano())
		})
	})
	defer func() { cancel(); wg.Wait() }()

	// The producer: HSET + ZADD per job, pipelined.
	prod := redis.NewClient(e.srv.Options())
	defer prod.Close()
	t0 := time.Now()
	const chunk = 5000
	for i := 0; i < len(due); i += chunk {
		pipe := prod.Pipeline()
		for k := i; k < min(i+chunk, len(due)); k++ {
			id := "job-" + strconv.Itoa(k)
			pipe.HSet(ctx, naiveData, id, `{"n":`+strconv.Itoa(k)+`}`)
			pipe.ZAdd(ctx, naiveQueue, redis.Z{Score: float64(due[k]), Member: id})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return jobOutcome{}, err
		}
	}
	rate := float64(len(due)) / time.Since(t0).Seconds()
	time.Sleep(time.Until(time.UnixMilli(due[0]).Add(-50 * time.Millisecond)))
	before := snapshot(ctx, e.admin)
	trips0, cmds0 := cnt.trips.Load(), cnt.cmds.Load()
	span := time.UnixMilli(due[len(due)-1]).Sub(time.UnixMilli(due[0]))
	if err := rec.wait(ctx, span+2*time.Minute+time.Duration(len(due))*time.Millisecond); err != nil {
		return jobOutcome{}, err
	}
	after := snapshot(ctx, e.admin)
	o := rec.analyze(due, false)
	o.EnqueueRate = rate
	o.Cost = before.to(after, len(due), cnt.trips.Load()-trips0, cnt.cmds.Load()-cmds0)
	e.fillDrain(&o, rec, due[0])
	if e.cfg.Verbose {
		e.logf("%s baseline: %s", name, o.Cost)
	}
	return o, nil
}
