package runtime

import (
	"sync"
	"time"
)

// batchQueue batches items for Redis: one call writes all the items queued
// while the previous call was in flight, so a burst costs Redis one call per
// batch instead of one per item. A goroutine flushes it while it is not
// empty. Job acks and run finishes go through one each.
type batchQueue[T any] struct {
	linger time.Duration // how long a flusher started on an idle queue waits before its first call
	write  func([]T)     // writes one batch (retrying as it sees fit)

	mu       sync.Mutex
	cond     *sync.Cond // signalled when the queue shrinks
	pending  []T
	flushing bool
}

// Bounds of a batch queue: a call writes at most maxBatch items, and a
// caller whose item would make the queue longer than maxPending waits
// (holding its worker slot, which slows claiming down to what Redis
// writes).
const (
	maxBatch   = 512
	maxPending = 4 * maxBatch
)

// add queues item, starting the flusher when idle. It waits while the queue
// is full.
func (q *batchQueue[T]) add(item T) {
	q.mu.Lock()
	if q.cond == nil {
		q.cond = sync.NewCond(&q.mu)
	}
	for len(q.pending) >= maxPending {
		q.cond.Wait()
	}
	q.pending = append(q.pending, item)
	start := !q.flushing
	q.flushing = true
	q.mu.Unlock()
	if start {
		go q.flush()
	}
}

// flush writes batches, the first after the linger, until the queue is
// empty.
func (q *batchQueue[T]) flush() {
	if q.linger > 0 {
		time.Sleep(q.linger)
	}
	for {
		q.mu.Lock()
		n := min(len(q.pending), maxBatch)
		if n == 0 {
			q.flushing = false
			q.mu.Unlock()
			return
		}
		batch := make([]T, n)
		copy(batch, q.pending)
		q.pending = append(q.pending[:0], q.pending[n:]...)
		q.cond.Broadcast()
		q.mu.Unlock()
		q.write(batch)
	}
}
