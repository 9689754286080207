package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// SentinelMasterName is the name the sentinels of [StartSentinel]
	// monitor the master under (redis.FailoverOptions.MasterName).
	SentinelMasterName = "mymaster"
	// sentinelReadyTimeout bounds the wait for the replica to sync and the
	// sentinels to find the replica and each other.
	sentinelReadyTimeout = 30 * time.Second
	// sentinelDownAfter is how long a master must be unreachable before a
	// sentinel thinks it down (down-after-milliseconds).
	sentinelDownAfter = 1000
	// sentinelCount is how many sentinels watch the master; the quorum is 2.
	sentinelCount = 3
)

// Sentinel is a private Redis Sentinel deployment started by
// [StartSentinel]: a master, one replica of it and three sentinels, each a
// [Server] on its own free loopback port, stopped at the test's cleanup.
type Sentinel struct {
	cfg       config
	master    *Server
	replica   *Server
	sentinels []*Server
}

// StartSentinel starts a master, a replica (REPLICAOF the master) and three
// sentinels that monitor the master as [SentinelMasterName] with quorum 2,
// down-after-milliseconds 1000 and failover-timeout 10000, all on loopback.
// It returns once the replica is in sync and every sentinel knows the
// replica and the two other sentinels, so killing the master fails over to
// the replica within a few seconds.
//
// opts apply to the master and the replica: [WithAOF], [WithArgs],
// [WithPassword] and [WithACLUser] work (the replica and the sentinels get
// the credentials); [WithUnixSocket] and [WithPort] fail the test. The
// sentinels themselves need no password.
func StartSentinel(t testing.TB, opts ...Option) *Sentinel {
	t.Helper()
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.unix || cfg.port != 0 {
		t.Fatalf("redistest: WithUnixSocket and WithPort do not apply to a sentinel deployment")
	}
	d := &Sentinel{cfg: cfg}
	user, pw := d.credentials()

	// The master and the replica both carry the replication credentials, so
	// either can be a replica after a failover.
	data := cfg
	data.args = nil
	if user != "" {
		data.args = append(data.args, "--masteruser", user)
	}
	if pw != "" {
		data.args = append(data.args, "--masterauth", pw)
	}
	data.args = append(data.args, cfg.args...)
	d.master = start(t, data)

	host, port, _ := net.SplitHostPort(d.master.Addr())
	repl := data
	repl.args = append(append([]string(nil), data.args...), "--replicaof", host, port)
	d.replica = start(t, repl)

	conf := fmt.Sprintf("sentinel monitor %s %s %s 2\n", SentinelMasterName, host, port) +
		fmt.Sprintf("sentinel down-after-milliseconds %s %d\n", SentinelMasterName, sentinelDownAfter) +
		fmt.Sprintf("sentinel failover-timeout %s 10000\n", SentinelMasterName) +
		fmt.Sprintf("sentinel parallel-syncs %s 1\n", SentinelMasterName)
	if user != "" {
		conf += fmt.Sprintf("sentinel auth-user %s %s\n", SentinelMasterName, user)
	}
	if pw != "" {
		conf += fmt.Sprintf("sentinel auth-pass %s %s\n", SentinelMasterName, pw)
	}

	// Wait for the replica before starting the sentinels: a sentinel learns
	// the replicas from the master's INFO when it connects.
	if err := waitUntil(sentinelReadyTimeout, func(ctx context.Context) error {
		return replicaInSync(ctx, d.replica)
	}); err != nil {
		t.Fatalf("redistest: replica %s of %s: %v\nreplica log:\n%s", d.replica.Addr(), d.master.Addr(), err, d.replica.LogTail(logTailLines))
	}

	for range sentinelCount {
		// Each sentinel rewrites its own config file: give each a copy in
		// a directory of its own.
		path := filepath.Join(t.TempDir(), "sentinel.conf")
		if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
			t.Fatalf("redistest: write %s: %v", path, err)
		}
		d.sentinels = append(d.sentinels, start(t, config{sentinelConf: path}))
	}
	if err := waitUntil(sentinelReadyTimeout, d.sentinelsReady); err != nil {
		t.Fatalf("redistest: sentinels %s: %v", strings.Join(d.SentinelAddrs(), " "), err)
	}
	return d
}

func (d *Sentinel) credentials() (user, pw string) {
	if d.cfg.aclUser != "" {
		return d.cfg.aclUser, d.cfg.aclPass
	}
	return "", d.cfg.password
}

// waitUntil polls check every 50ms until it returns nil or timeout passes,
// and returns check's last error then.
func waitUntil(timeout time.Duration, check func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready within %v: %w", timeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// replicaInSync reports why s is not (yet) a replica with its link up.
func replicaInSync(ctx context.Context, s *Server) error {
	c := redis.NewClient(s.Options())
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return err
	}
	f := infoFields(info)
	if f["role"] != "slave" || f["master_link_status"] != "up" {
		return fmt.Errorf("role:%s master_link_status:%s", f["role"], f["master_link_status"])
	}
	return nil
}

// sentinelsReady reports why a sentinel does not yet know the replica and
// every other sentinel.
func (d *Sentinel) sentinelsReady(ctx context.Context) error {
	for _, s := range d.sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr()})
		replicas, err := c.Replicas(ctx, SentinelMasterName).Result()
		if err == nil && len(replicas) < 1 {
			err = fmt.Errorf("knows %d replicas", len(replicas))
		}
		if err == nil {
			var others []map[string]string
			others, err = c.Sentinels(ctx, SentinelMasterName).Result()
			if err == nil && len(others) < sentinelCount-1 {
				err = fmt.Errorf("knows %d other sentinels, want %d", len(others), sentinelCount-1)
			}
		}
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("sentinel %s: %w", s.Addr(), err)
		}
	}
	return nil
}

// Master returns the server started as the master. After a failover it is
// no longer the master (see [Sentinel.MasterAddr]).
func (d *Sentinel) Master() *Server { return d.master }

// Replica returns the server started as the replica.
func (d *Sentinel) Replica() *Server { return d.replica }

// SentinelAddrs returns the "127.0.0.1:PORT" addresses of the sentinels.
func (d *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(d.sentinels))
	for i, s := range d.sentinels {
		addrs[i] = s.Addr()
	}
	return addrs
}

// MasterAddr asks the sentinels (the first that answers) for the current
// master's address.
func (d *Sentinel) MasterAddr(ctx context.Context) (string, error) {
	var lastErr error
	for _, s := range d.sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr()})
		addr, err := c.GetMasterAddrByName(ctx, SentinelMasterName).Result()
		_ = c.Close()
		if err == nil && len(addr) == 2 {
			return net.JoinHostPort(addr[0], addr[1]), nil
		}
		lastErr = err
	}
	return "", fmt.Errorf("no sentinel told the master's address: %v", lastErr)
}

// WaitFailover waits until every sentinel names a master other
// than from (an address), and returns the new master's address. It fails
// the test after timeout.
func (d *Sentinel) WaitFailover(t testing.TB, from string, timeout time.Duration) string {
	t.Helper()
	var addr string
	err := waitUntil(timeout, func(ctx context.Context) error {
		for _, s := range d.sentinels {
			c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr()})
			a, err := c.GetMasterAddrByName(ctx, SentinelMasterName).Result()
			_ = c.Close()
			if err != nil {
				return fmt.Errorf("sentinel %s: %w", s.Addr(), err)
			}
			got := net.JoinHostPort(a[0], a[1])
			if got == from {
				return fmt.Errorf("sentinel %s still names %s", s.Addr(), from)
			}
			addr = got
		}
		return nil
	})
	if err != nil {
		t.Fatalf("redistest: failover from %s: %v", from, err)
	}
	return addr
}

// FailoverOptions returns new go-redis failover options: the master name,
// the sentinels' addresses and the data nodes' credentials; everything else
// is go-redis's default.
func (d *Sentinel) FailoverOptions() *redis.FailoverOptions {
	user, pw := d.credentials()
	return &redis.FailoverOptions{
		MasterName:    SentinelMasterName,
		SentinelAddrs: d.SentinelAddrs(),
		Username:      user,
		Password:      pw,
	}
}

// FailoverClient returns a new go-redis client that follows the master
// through the sentinels (see [Sentinel.FailoverOptions]), closed at t's
// cleanup.
func (d *Sentinel) FailoverClient(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewFailoverClient(d.FailoverOptions())
	t.Cleanup(func() { _ = c.Close() })
	return c
}
