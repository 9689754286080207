package runtime

import (
	"context"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gocrontab/crontab/internal/rdb"
)

// The tasks due at one instant are split among the live processes that can
// run them, so that at the instant each claims only its own share: the
// claim script then checks each task once in all, instead of once in every
// process, and the instant's runs start in every process at the same time
// instead of mostly in the one whose claim came first. Processes may run
// different task sets (WithTasks, or different builds): each publishes the
// names of the types it runs in its process hash, and the fires of type T
// are split among the live processes whose set holds T (T's peers), by
// their place among T's fires of the instant in queue order, which every
// peer of T sees the same. A share is never a process's that cannot run
// it. A share left unclaimed (its process died, stalled, or does not know
// of a peer yet) is claimed by any process that runs its type and looks at
// the queue shareGrace after the instant and finds it still due. The split
// only decides who tries first: the claim script's compare-and-set still
// makes every instant fire once, whatever each process believes of its
// peers.

// peerShare is this process's place among the peers of one task type: its
// rank in [0, size) in the order of their ids. The zero value (size 0)
// means no split.
type peerShare struct {
	rank, size int
}

// peerShares is this process's place among the peers of each type it
// runs, worked out at each heartbeat (refreshPeers), so that splitting an
// instant costs a map lookup per fire. Types with the same peers form one
// group (in a fleet whose processes run the same set, every type is in
// one), and an instant's fires are split group by group: a group's fires
// in queue order are the same list in each of its peers, and splitting a
// group rather than each type splits an instant of many tasks of one fire
// each. The zero value splits nothing.
type peerShares struct {
	group  map[string]int // the type's group, an index into shares
	shares []peerShare    // each group's share
}

// of is this process's share of the fires of type t (the zero peerShare
// for a type it does not run).
func (ps *peerShares) of(t string) peerShare {
	if g, ok := ps.group[t]; ok {
		return ps.shares[g]
	}
	return peerShare{}
}

// shareGrace is how long after an instant this process leaves the tasks of
// its peers' shares to them before claiming those still due. It bounds the
// extra lag of a share whose process died, until the process TTL tells the
// others and the split leaves it out (of a coalesced span's share, it is
// counted from the span's last instant: see leaveToPeer).
const shareGrace = 5 * time.Millisecond

// minSplit is the fewest tasks per process for which the fires of a type
// at an instant are split: fewer are claimed by every peer, in a random
// order, which costs Redis little and starts each run in whichever process
// woke first.
const minSplit = 4

// split returns the fires of this process's share, of fires of one type
// sorted the same way in every peer (by queue order): every size-th one
// from rank. It reports whether fires were split; when not, every fire is
// this process's.
func (p peerShare) split(fires []*fire) ([]*fire, bool) {
	if p.size <= 1 || len(fires) < minSplit*p.size {
		return fires, false
	}
	mine := make([]*fire, 0, len(fires)/p.size+1)
	for i := p.rank; i < len(fires); i += p.size {
		mine = append(mine, fires[i])
	}
	return mine, true
}

// split returns the fires of this process's share of one instant's fires
// (of the types it runs, in queue order): for each group of types with the
// same peers, its peerShare of the group's fires. It reports whether any
// group's fires were split. Two passes over fires, a map lookup per fire
// each.
func (ps *peerShares) split(fires []*fire) ([]*fire, bool) {
	if ps == nil || len(ps.shares) == 0 {
		return fires, false
	}
	type count struct {
		share    peerShare
		n, index int
	}
	counts := make([]count, len(ps.shares))
	for _, f := range fires {
		if g, ok := ps.group[f.state.Type]; ok {
			counts[g].n++
		}
	}
	split := false
	for g := range counts {
		c := &counts[g]
		c.share = ps.shares[g]
		if c.share.size > 1 && c.n >= minSplit*c.share.size {
			split = true
		} else {
			c.share = peerShare{} // every fire of the group is this process's
		}
	}
	if !split {
		return fires, false
	}
	mine := make([]*fire, 0, len(fires))
	for _, f := range fires {
		g, ok := ps.group[f.state.Type]
		if !ok { // not a type of this process's: the dispatcher passes it over
			mine = append(mine, f)
			continue
		}
		c := &counts[g]
		i := c.index
		c.index++
		if c.share.size == 0 || i%c.share.size == c.share.rank {
			mine = append(mine, f)
		}
	}
	return mine, true
}

// registryDigest names the set of task types of reg: processes with the same
// digest run the same tasks.
func registryDigest(reg *Registry) string {
	regs := reg.Entries()
	names := make([]string, len(regs))
	for i, r := range regs {
		names[i] = r.Config().Name
	}
	slices.Sort(names)
	h := fnv.New64a()
	for _, n := range names {
		_, _ = h.Write([]byte(n))
		_, _ = h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// peerTypes is what this process knows of a live peer's task types.
type peerTypes map[string]bool

// refreshPeers works out this process's shares from the processes alive at
// its heartbeat (live, which includes it): the peers of each type it runs
// are the live processes whose hash names that type among those they run.
// A process's types are read once per process id (its set does not change
// while it runs); a process whose hash names none yet (a hash not written
// yet) is asked again at the next heartbeat, and one of a version that
// publishes only the digest counts as running this process's set when its
// digest is this process's. Only the maintain goroutine calls it.
func (mt *maintainer) refreshPeers(ctx context.Context, live []string) error {
	for id := range mt.peerSets {
		if !slices.Contains(live, id) {
			delete(mt.peerSets, id)
		}
	}
	var ask []string
	for _, id := range live {
		if _, ok := mt.peerSets[id]; !ok && id != mt.id {
			ask = append(ask, id)
		}
	}
	if len(ask) > 0 {
		sets, err := mt.db.TaskTypes(ctx, ask)
		if err != nil {
			return err
		}
		for i, id := range ask {
			if set := peerSetOf(sets[i], mt.digest, mt.runTypes); set != nil {
				mt.peerSets[id] = set
			}
		}
	}
	mt.disp.share.Store(sharesOf(mt.id, mt.runTypes, mt.peerSets))
	return nil
}

// peerSetOf is the set of types a peer's hash says it runs, or nil when it
// says nothing yet.
func peerSetOf(p rdb.ProcessTypes, digest string, mine []string) peerTypes {
	var names []string
	switch {
	case p.Known:
		names = p.Names
	case p.Digest != "" && p.Digest == digest:
		names = mine
	case p.Digest != "":
		names = nil // another set, unnamed: no type's peer
	default:
		return nil
	}
	set := make(peerTypes, len(names))
	for _, n := range names {
		set[n] = true
	}
	return set
}

// sharesOf returns process id's place among the peers of each of its
// types, given the live peers' sets, and groups the types by their peers.
func sharesOf(id string, types []string, peers map[string]peerTypes) *peerShares {
	ps := &peerShares{group: make(map[string]int, len(types))}
	groups := make(map[string]int) // the peers' ids, joined, to the group
	ids := make([]string, 0, len(peers)+1)
	for _, t := range types {
		ids = append(ids[:0], id)
		for pid, set := range peers {
			if set[t] {
				ids = append(ids, pid)
			}
		}
		slices.Sort(ids)
		key := strings.Join(ids, "\x00")
		share := peerShare{rank: slices.Index(ids, id), size: len(ids)}
		g, ok := groups[key]
		if !ok {
			g = len(ps.shares)
			groups[key] = g
			ps.shares = append(ps.shares, share)
		}
		ps.group[t] = g
	}
	return ps
}

// currentShares is this process's shares as of its latest heartbeat.
func (dp *dispatcher) currentShares() *peerShares { return dp.share.Load() }

// A backlog (more tasks due than a claim takes, e.g. the rest of an instant
// of a hundred thousand tasks once the prepared batch is claimed) is split
// too, by member rather than by place: every peer reads the same head of
// the queue, and without a split each would try the same first tasks and
// all but one would pay a read and a claim for each fire the first won.
// Each process tries first the due tasks whose member hashes to its rank
// (fnv-1a mod the group's size), then, with workers still free, the
// others' in queue order, so a dead or slow peer's share is still taken at
// once. It applies when every type of this process has the same peers (one
// group: the queue holds member names only, and a task's type is known
// once its hash is read); otherwise the head is taken in queue order.

// backlogShare is this process's share of a backlog: the share of its one
// group of types, or the zero peerShare (no split) when it has none or
// several.
func (ps *peerShares) backlogShare() peerShare {
	if ps == nil || len(ps.shares) != 1 {
		return peerShare{}
	}
	return ps.shares[0]
}

// ownsMember reports whether member's backlog share is this process's.
func (p peerShare) ownsMember(member string) bool {
	if p.size <= 1 {
		return true
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(member))
	return int(h.Sum32()%uint32(p.size)) == p.rank
}

// preferOwn returns up to limit of the due members (with their scores),
// this process's share first, then the others', each part in queue order.
// With no more due than limit, or no split, it returns the first limit.
func (p peerShare) preferOwn(due []string, scores []int64, limit int) ([]string, []int64) {
	if len(due) <= limit || p.size <= 1 {
		return due[:min(limit, len(due))], scores[:min(limit, len(scores))]
	}
	outM, outS := make([]string, 0, limit), make([]int64, 0, limit)
	taken := make([]bool, len(due))
	for i, m := range due {
		if len(outM) == limit {
			break
		}
		if p.ownsMember(m) {
			outM, outS, taken[i] = append(outM, m), append(outS, scores[i]), true
		}
	}
	for i, m := range due {
		if len(outM) == limit {
			break
		}
		if !taken[i] {
			outM, outS = append(outM, m), append(outS, scores[i])
		}
	}
	return outM, outS
}
