package rdb

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Run leases tell a dead holder of a task's lock from a live one within a
// second or two, where the process heartbeat takes a process TTL (5 s by
// default) and the lock itself the task's timeout.
//
// Every run a claim wins gets a run lease: a member of the alive ZSET (its
// run id) scored with a deadline, server time + TTL. Every process renews
// the run leases of all its runs in progress with one call of
// RenewRunLeases every TTL/6, and that same call is the process's pulse:
// it writes, in the pulse hash, when it ran (last) and since when such
// calls have come at most Gap apart (since). A claim that finds a task's
// lock held takes it over when the holder's run lease expired while the
// pulse was steady for a whole TTL (ClaimFires); otherwise it skips the
// fire, as before.
//
// Why the pulse: when Redis stalls (SIGSTOP, a long script, a slow disk)
// or is unreachable, no process can renew anything, and when it answers
// again every deadline has passed at once though every holder lives; the
// first command Redis then runs may be another process's claim, queued
// during the stall. Pulses stop during a stall, so after it the pulse is
// not steady for a TTL, time enough for every live holder's renewal to
// land (a renewal moves a deadline even past it: nothing expires by
// itself). The same holds when every process stopped at once (a paused
// VM): nobody pulsed.

// RunLeases are the settings of run leases: a run lease lasts TTL after
// its last renewal, and Redis counts as having served steadily while
// pulses come at most Gap apart. Processes renew every TTL/6.
//
// (A run's lease, the one the master's reap reads, is its field of the
// runs hash, which has no TTL: an older release kept it in a key of its
// own, run:<id>, that lasted the task's timeout plus a margin after the
// claim and each renewal, so that a run shorter than the time between two
// renewals would not lose it while it ran. A field lasts until the run's
// finish, so there is no margin to choose.)
type RunLeases struct {
	TTL time.Duration
	Gap time.Duration
}

// renewRunLeasesScript is one process's pulse and the renewal of the run
// leases of its runs in progress.
//
// Runs with a fire slot (max_running, see ClaimFires) have their member
// of their type's fire slot key renewed to the same deadline (ZADD: a
// member a claim pruned while this process was stopped comes back); a
// fire slot key of the wrong type is left alone.
//
// KEYS: pulse, alive, then the fire slot keys
// ARGV: ttl_ms, gap_ms, then the run ids of the runs in progress; then,
// only with fire slot keys, per run id its slot (1-based index of its fire
// slot key, 0: none)
// Returns the run ids it was given that have no run lease: taken over by
// another process's claim, abandoned by the master, finished (a run whose
// finish was written meanwhile) or lost with Redis's data. It renews the
// others to now + ttl and writes the pulse: last = now, and since = now
// when the previous pulse is older than gap (or missing), else unchanged.
// Bounds: any number of runs (ZMSCORE and ZADD in chunks); a process
// sends its runs in progress, at most its workers.
// Failure: a pulse or alive key of the wrong type fails it before it
// writes; then no pulse is written, so no claim takes a lock over.
var renewRunLeasesScript = redis.NewScript(luaNow + `
want_type(KEYS[1], 'hash')
want_type(KEYS[2], 'zset')
local ttl, gap = tonumber(ARGV[1]), tonumber(ARGV[2])
local p = redis.call('HMGET', KEYS[1], 'last', 'since')
local last, since = tonumber(p[1]), tonumber(p[2])
if not last or not since or now - last > gap or since > now then since = now end
local nslots = #KEYS - 2
local m = nslots > 0 and (#ARGV - 2) / 2 or #ARGV - 2
local ids, lost, renew, slotted = {}, {}, {}, {}
for i = 3, 2 + m do ids[#ids + 1] = ARGV[i] end
if #ids > 0 then
  local scores = callk('ZMSCORE', KEYS[2], ids)
  for i, id in ipairs(ids) do
    if scores[i] then
      renew[#renew + 1] = now + ttl
      renew[#renew + 1] = id
      local slot = nslots > 0 and tonumber(ARGV[2 + m + i]) or 0
      if slot > 0 then
        slotted[slot] = slotted[slot] or {}
        table.insert(slotted[slot], now + ttl)
        table.insert(slotted[slot], id)
      end
    else
      lost[#lost + 1] = id
    end
  end
end
redis.call('HSET', KEYS[1], 'last', now, 'since', since)
if #renew > 0 then callk('ZADD', KEYS[2], renew) end
for j, zs in pairs(slotted) do redis.pcall('ZADD', KEYS[2 + j], unpack(zs)) end -- a process's runs: at most its workers
return lost
`)

// RenewRunLeases writes this process's pulse and renews the run leases of
// runIDs (its runs in progress; none is a pulse alone). slots, nil or of
// the length of runIDs, names per run the type whose fire slot it holds
// ("" none; see RunFinish.Slots): that is renewed with the run lease. It
// returns the run ids that had no run lease any more, which it does not
// renew.
func (r *RDB) RenewRunLeases(ctx context.Context, l RunLeases, runIDs []string, slots []string) (lost []string, err error) {
	args := make([]any, 0, 2+2*len(runIDs))
	args = append(args, l.TTL.Milliseconds(), l.Gap.Milliseconds())
	for _, id := range runIDs {
		args = append(args, id)
	}
	keys := []string{r.k.Pulse(), r.k.Alive()}
	idx := make([]any, len(runIDs))
	slot := map[string]int{}
	for i := range runIDs {
		idx[i] = 0
		if i >= len(slots) || slots[i] == "" {
			continue
		}
		if slot[slots[i]] == 0 {
			keys = append(keys, r.k.FireSlots(slots[i]))
			slot[slots[i]] = len(keys) - 2
		}
		idx[i] = slot[slots[i]]
	}
	if len(keys) > 2 {
		args = append(args, idx...)
	}
	return renewRunLeasesScript.Run(ctx, r.c, keys, args...).StringSlice()
}

// FireSlotsRunning counts the runs in progress in the fire slots of the
// slot group group (a capped type, or FireSlotsOfTask of a run-time task
// with a cap of its own): the members of P fireslots:<group> whose run
// lease has not passed at nowMS (unix ms), for display; it writes nothing.
// A missing key is 0.
func (r *RDB) FireSlotsRunning(ctx context.Context, group string, nowMS int64) (int64, error) {
	return r.c.ZCount(ctx, r.k.FireSlots(group), strconv.FormatInt(nowMS, 10), "+inf").Result()
}

// Holder is the run whose lock a claim took over: its process and instant
// (unix ms). The claim recorded it abandoned.
type Holder struct {
	Process string
	FireMS  int64
}

// luaTakeover is the part of the claim script that decides whether a held
// lock may be taken over. It defines steady(), true when the pulse shows
// Redis served steadily for the last lease_ttl (every pulse at most gap
// after the one before, the latest within gap of now), and alive_ok,
// false when alive holds a foreign value (no run leases then). The claim
// reads a holder's deadline itself (it also decides whether to defer). It
// expects now, KEYS[3] (alive), KEYS[4] (pulse), and the locals ttl and
// gap.
const luaTakeover = `
local alive_ok = type(redis.pcall('ZCARD', KEYS[3])) == 'number' -- a foreign value: no run leases
local steady_v
local function steady()
  if steady_v == nil then
    steady_v = false
    local p = redis.pcall('HMGET', KEYS[4], 'last', 'since')
    if alive_ok and not p.err then
      local last, since = tonumber(p[1]), tonumber(p[2])
      steady_v = last ~= nil and since ~= nil and now - last <= gap and now - since >= ttl
    end
  end
  return steady_v
end
`
