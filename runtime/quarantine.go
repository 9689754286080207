package runtime

import (
	"context"
)

// quarantine moves aside every key of the namespace's layout that holds a
// value of the wrong type (a foreign value: a string where the queue ZSET
// should be), to {ns}:quarantine:<name>:<unix ms>, where an operator finds
// it, and logs it as an error. Every command on such a key fails with
// WRONGTYPE, so without this one foreign value would stop the whole
// namespace; the scheduler rebuilds what it needs (maintenance puts the
// tasks back in the queue). It runs at start and periodically. It returns
// the error of reading the keys' types (a value it cannot move aside is
// logged, and the others are still moved). Beside the singleton keys it
// checks the flow-control keys of the types this process runs with a
// max_running cap or a rate (rdb.Keys.LimitKeyTypes). The keys whose names
// come with the jobs and tasks, the rate windows of RateKey keys and the
// fire slots of run-time tasks with a cap of their own, cannot be listed
// here: the claims that read them report one of the wrong type (its jobs
// wait, its fire runs uncapped, nothing fails), and the claiming process
// moves it aside at once (moveAside).
func (mt *maintainer) quarantine(ctx context.Context) error {
	types := mt.keys.SingletonTypes()
	for key, typ := range mt.limitKeyTypes() {
		types[key] = typ
	}
	names := make([]string, 0, len(types))
	for key := range types {
		names = append(names, key)
	}
	found, err := mt.db.KeyTypes(ctx, names)
	if err != nil {
		return err
	}
	for i, key := range names {
		if t := found[i]; t == types[key] || t == "none" {
			continue
		}
		mt.moveAside(ctx, key, types[key])
	}
	return nil
}

// moveAside moves the value of key aside to its quarantine key if it still
// holds a type other than want, and logs it as an error (an error to move
// it is logged too: the next check tries again).
func (e *engine) moveAside(ctx context.Context, key, want string) {
	at := ms(e.clock.Now())
	dest := e.keys.Quarantine(key, at)
	found, err := e.db.Quarantine(ctx, key, want, at)
	if err != nil {
		e.log.Error("could not move a foreign value aside (quarantine)", "key", key, "err", err)
		return
	}
	if found != "" {
		e.log.Error("foreign value moved aside (quarantine): the key held the wrong type", "key", key,
			"type", found, "want", want, "to", dest)
	}
}

// limitKeyTypes is the flow-control keys of this process's limited types,
// with the Redis type each holds.
func (mt *maintainer) limitKeyTypes() map[string]string {
	var cappedJobs, ratedJobs, cappedFires []string
	for _, e := range mt.reg.Entries() {
		c := e.Config()
		if c.MaxRunning > 0 {
			// A type without a schedule runs jobs and run-time tasks:
			// both kinds of slots.
			cappedFires = append(cappedFires, c.Name)
			if e.Schedule() == nil {
				cappedJobs = append(cappedJobs, c.Name)
			}
		}
		if e.Schedule() == nil && !c.Rate.IsZero() {
			ratedJobs = append(ratedJobs, c.Name)
		}
	}
	return mt.keys.LimitKeyTypes(cappedJobs, ratedJobs, cappedFires)
}
