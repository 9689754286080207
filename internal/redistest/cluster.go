package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// clusterCreateTimeout bounds `redis-cli --cluster create`.
	clusterCreateTimeout = 60 * time.Second
	// clusterReadyTimeout bounds the wait for every node to agree that the
	// cluster is up and every replica to be in sync with its master.
	clusterReadyTimeout = 30 * time.Second
	// clusterSlots is the number of hash slots of a Redis Cluster.
	clusterSlots = 16384
)

// Cluster is a private Redis Cluster started by [StartCluster]: every node is
// a [Server] on its own free loopback port (and cluster bus port), stopped at
// the test's cleanup.
type Cluster struct {
	cfg   config
	nodes []*Server
}

// StartCluster starts masters*(1+replicasPerMaster) private redis-server
// nodes with cluster-enabled yes, joins them with
// `redis-cli --cluster create ... --cluster-replicas N --cluster-yes`, and
// waits until every node reports cluster_state:ok with all 16384 slots
// assigned and every replica has its link to its master up.
//
// masters must be at least 3 (a Redis Cluster's minimum); replicasPerMaster
// is usually 0 or 1. opts apply to every node: [WithAOF], [WithArgs],
// [WithPassword] and [WithACLUser] work (replicas get masterauth/masteruser);
// [WithUnixSocket] and [WithPort] fail the test. The nodes run with
// cluster-node-timeout 2000 ms, which [WithArgs] can override.
func StartCluster(t testing.TB, masters, replicasPerMaster int, opts ...Option) *Cluster {
	t.Helper()
	if masters < 3 {
		t.Fatalf("redistest: a Redis Cluster needs at least 3 masters, got %d", masters)
	}
	if replicasPerMaster < 0 {
		t.Fatalf("redistest: replicasPerMaster must not be negative, got %d", replicasPerMaster)
	}
	var cfg config
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if cfg.unix || cfg.port != 0 {
		t.Fatalf("redistest: WithUnixSocket and WithPort do not apply to cluster nodes")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redistest: redis-cli is not on PATH (%v); Redis Cluster tests need it: install it with `%s`", err, installHint)
	}

	c := &Cluster{cfg: cfg}
	node := cfg
	node.clusterBus = true
	node.args = []string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf", // relative to the node's --dir
		"--cluster-node-timeout", "2000",
	}
	user, pw := c.credentials()
	if user != "" {
		node.args = append(node.args, "--masteruser", user)
	}
	if pw != "" {
		node.args = append(node.args, "--masterauth", pw)
	}
	node.args = append(node.args, cfg.args...)

	n := masters * (1 + replicasPerMaster)
	for range n {
		c.nodes = append(c.nodes, start(t, node))
	}

	var args []string
	switch {
	case user != "":
		args = append(args, "--user", user, "--pass", pw, "--no-auth-warning")
	case pw != "":
		args = append(args, "-a", pw, "--no-auth-warning")
	}
	args = append(args, "--cluster", "create")
	args = append(args, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterCreateTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redistest: redis-cli --cluster create %s: %v\n%s", strings.Join(c.Addrs(), " "), err, out)
	}
	if err := c.waitReady(n); err != nil {
		t.Fatalf("redistest: cluster %s: %v\nredis-cli said:\n%s", strings.Join(c.Addrs(), " "), err, out)
	}
	return c
}

func (c *Cluster) credentials() (user, pw string) {
	if c.cfg.aclUser != "" {
		return c.cfg.aclUser, c.cfg.aclPass
	}
	return "", c.cfg.password
}

// waitReady polls every node until the cluster is up everywhere.
func (c *Cluster) waitReady(n int) error {
	clients := make([]*redis.Client, len(c.nodes))
	for i, s := range c.nodes {
		opt := s.Options()
		opt.MaxRetries = -1
		clients[i] = redis.NewClient(opt)
	}
	defer func() {
		for _, cl := range clients {
			_ = cl.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyTimeout)
	defer cancel()
	var lastErr error
	for {
		lastErr = nil
		for i, cl := range clients {
			if err := nodeReady(ctx, cl, n); err != nil {
				lastErr = fmt.Errorf("node %s: %w", c.nodes[i].Addr(), err)
				break
			}
		}
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready within %v: %w", clusterReadyTimeout, lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// nodeReady reports why one node does not yet see a complete cluster of n
// nodes (or, for a replica, is not in sync with its master).
func nodeReady(ctx context.Context, cl *redis.Client, n int) error {
	info, err := cl.ClusterInfo(ctx).Result()
	if err != nil {
		return err
	}
	f := infoFields(info)
	if f["cluster_state"] != "ok" {
		return fmt.Errorf("cluster_state:%s", f["cluster_state"])
	}
	if f["cluster_slots_ok"] != strconv.Itoa(clusterSlots) {
		return fmt.Errorf("cluster_slots_ok:%s", f["cluster_slots_ok"])
	}
	if f["cluster_known_nodes"] != strconv.Itoa(n) {
		return fmt.Errorf("cluster_known_nodes:%s, want %d", f["cluster_known_nodes"], n)
	}
	repl, err := cl.Info(ctx, "replication").Result()
	if err != nil {
		return err
	}
	r := infoFields(repl)
	if r["role"] == "slave" && r["master_link_status"] != "up" {
		return fmt.Errorf("replica master_link_status:%s", r["master_link_status"])
	}
	return nil
}

// infoFields parses the "key:value" lines of INFO and CLUSTER INFO.
func infoFields(s string) map[string]string {
	m := map[string]string{}
	for line := range strings.Lines(s) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			m[k] = v
		}
	}
	return m
}

// Addrs returns the "127.0.0.1:PORT" addresses of all nodes, in start order.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, s := range c.nodes {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Nodes returns the node servers, in start order, to kill, pause or restart
// one. Which nodes are masters is up to redis-cli; ask a node with ROLE.
func (c *Cluster) Nodes() []*Server {
	return append([]*Server(nil), c.nodes...)
}

// ClusterOptions returns new go-redis cluster options: every node's address
// and the credentials; everything else is go-redis's default.
func (c *Cluster) ClusterOptions() *redis.ClusterOptions {
	user, pw := c.credentials()
	return &redis.ClusterOptions{Addrs: c.Addrs(), Username: user, Password: pw}
}

// ClusterClient returns a new go-redis cluster client (see
// [Cluster.ClusterOptions]), closed at t's cleanup.
func (c *Cluster) ClusterClient(t testing.TB) *redis.ClusterClient {
	t.Helper()
	cc := redis.NewClusterClient(c.ClusterOptions())
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}
