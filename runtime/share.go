package runtime

import (
	"context"
	"hash/fnv"
	"slices"
	"strconv"
	"time"
)

// The tasks due at one instant are split among the live processes that run
// the same task types (peers), so that at the instant each claims only its
// own share: the claim script then checks each task once in all, instead of
// once in every process, and the instant's runs start in every process at
// the same time instead of mostly in the one whose claim came first. A
// share left unclaimed (its process died, stalled, or does not know of a
// peer yet) is claimed by any process that looks at the queue shareGrace
// after the instant and finds it still due. The split only decides who tries
// first: the claim script's compare-and-set still makes every instant fire
// once, whatever each process believes of its peers.

// peerShare is this process's place among its peers: its rank in [0, size)
// in the order of their ids. The zero value (size 0) means no split.
type peerShare struct {
	rank, size int
}

// shareGrace is how long after an instant this process leaves the tasks of
// its peers' shares to them before claiming those still due. It bounds the
// extra lag of a share whose process died, until the process TTL tells the
// others and the split leaves it out.
const shareGrace = 5 * time.Millisecond

// minSplit is the fewest tasks per process for which an instant is split:
// smaller instants are claimed by every process, in a random order, which
// costs Redis little and starts each run in whichever process woke first.
const minSplit = 4

// split returns the fires of this process's share, of fires sorted the same
// way in every peer (by queue order): every size-th one from rank. It
// reports whether fires were split; when not, every fire is this process's.
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

// registryDigest names the set of task types of reg: processes with the same
// digest can run the same tasks, and split their instants.
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

// refreshPeers works out this process's share from the processes alive at
// its heartbeat (live, which includes it): its peers are those whose process
// hash holds its registry digest. Digests are read once per process id (a
// process's registry does not change while it runs); a process whose hash
// holds none yet (a version that does not split, or a hash not written yet)
// is asked again at the next heartbeat. Only the maintain goroutine calls it.
func (mt *maintainer) refreshPeers(ctx context.Context, live []string) error {
	for id := range mt.peerDigests {
		if !slices.Contains(live, id) {
			delete(mt.peerDigests, id)
		}
	}
	var ask []string
	for _, id := range live {
		if _, ok := mt.peerDigests[id]; !ok && id != mt.id {
			ask = append(ask, id)
		}
	}
	if len(ask) > 0 {
		digests, err := mt.db.TypeDigests(ctx, ask)
		if err != nil {
			return err
		}
		for i, id := range ask {
			if d := digests[i]; d != "" {
				mt.peerDigests[id] = d
			}
		}
	}
	peers := []string{mt.id}
	for id, d := range mt.peerDigests {
		if d == mt.digest {
			peers = append(peers, id)
		}
	}
	slices.Sort(peers)
	mt.disp.share.Store(&peerShare{rank: slices.Index(peers, mt.id), size: len(peers)})
	return nil
}

// currentShare is this process's share as of its latest heartbeat.
func (dp *dispatcher) currentShare() peerShare {
	if p := dp.share.Load(); p != nil {
		return *p
	}
	return peerShare{}
}
