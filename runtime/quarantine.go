package runtime

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// singletonTypes maps each key of the namespace that is not per task or per
// run to the Redis type it holds.
func singletonTypes(k keys) map[string]string {
	return map[string]string{
		k.queue():     "zset",
		k.master():    "string",
		k.running():   "set",
		k.tasks():     "set",
		k.processes(): "zset",
		k.declared():  "zset",
		k.jobs():      "zset",
		k.jobData():   "hash",
		k.attempts():  "hash",
		k.leases():    "zset",
		k.owners():    "hash",
		k.dead():      "zset",
		k.deadData():  "hash",
		k.stats():     "hash",
		k.sweep():     "hash",
		k.meta():      "hash",
	}
}

// quarantineScript renames a key aside if it still holds a type other
// than the one expected.
//
// KEYS: key, quarantine key
// ARGV: expected type
// Returns the type found when it moved the key, else "".
var quarantineScript = redis.NewScript(`
local t = redis.call('TYPE', KEYS[1]).ok
if t == ARGV[1] or t == 'none' then return '' end
redis.call('RENAME', KEYS[1], KEYS[2])
return t
`)

// quarantine moves aside every key of the namespace's layout that holds a
// value of the wrong type (a foreign value: a string where the queue ZSET
// should be), to {ns}:quarantine:<name>:<unix ms>, where an operator finds
// it, and logs it as an error. Every command on such a key fails with
// WRONGTYPE, so without this one foreign value would stop the whole
// namespace; the scheduler rebuilds what it needs (maintenance puts the
// tasks back in the queue). It runs at start and periodically.
func (s *Scheduler) quarantine(ctx context.Context) {
	types := singletonTypes(s.keys)
	names := make([]string, 0, len(types))
	for key := range types {
		names = append(names, key)
	}
	cmds, err := pipelined(ctx, s.rdb, nil, func(pipe redis.Pipeliner) []*redis.StatusCmd {
		cmds := make([]*redis.StatusCmd, len(names))
		for i, key := range names {
			cmds[i] = pipe.Type(ctx, key)
		}
		return cmds
	})
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("checking the types of the namespace's keys failed", "err", err)
		}
		return
	}
	for i, key := range names {
		if t := cmds[i].Val(); t == types[key] || t == "none" {
			continue
		}
		dest := s.keys.quarantine(key, ms(s.clock.Now()))
		found, err := quarantineScript.Run(ctx, s.rdb, []string{key, dest}, types[key]).Text()
		if err != nil {
			s.log.Error("could not move a foreign value aside (quarantine)", "key", key, "err", err)
			continue
		}
		if found != "" {
			s.log.Error("foreign value moved aside (quarantine): the key held the wrong type", "key", key,
				"type", found, "want", types[key], "to", dest)
		}
	}
}

// isReplyError reports whether err is Redis's error reply to one command
// (WRONGTYPE, a value that is not an integer, ...), not a failure to reach
// Redis; redis.Nil is not one.
func isReplyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil)
}
