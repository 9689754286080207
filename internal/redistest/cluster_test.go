package redistest_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

func TestCluster(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		masters, replicas int
		opts              []redistest.Option
	}{
		{name: "3x0-password", masters: 3, replicas: 0, opts: []redistest.Option{redistest.WithPassword("pw")}},
		{name: "3x1-acl", masters: 3, replicas: 1, opts: []redistest.Option{redistest.WithACLUser("app", "s3cret")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := redistest.StartCluster(t, tc.masters, tc.replicas, tc.opts...)
			ctx := ctxT(t) // after the start, which may take up to its own 30 s
			n := tc.masters * (1 + tc.replicas)
			if len(c.Addrs()) != n || len(c.Nodes()) != n {
				t.Fatalf("%d addrs, %d nodes; want %d", len(c.Addrs()), len(c.Nodes()), n)
			}

			// Roles: masters and replicas as asked.
			var masters, replicas int
			for _, s := range c.Nodes() {
				role, err := s.Client(t).Do(ctx, "ROLE").Slice()
				if err != nil {
					t.Fatalf("ROLE on %s: %v", s.Addr(), err)
				}
				switch role[0] {
				case "master":
					masters++
				case "slave":
					replicas++
				}
			}
			if masters != tc.masters || replicas != tc.masters*tc.replicas {
				t.Errorf("%d masters, %d replicas; want %d, %d", masters, replicas, tc.masters, tc.masters*tc.replicas)
			}

			rdb := c.ClusterClient(t)
			for i := range 100 {
				mustSetGet(t, ctx, rdb, fmt.Sprintf("key-%d", i))
			}
			// Keys spread over every master.
			var shards atomic.Int32
			err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
				n, err := m.DBSize(ctx).Result()
				if err == nil && n > 0 {
					shards.Add(1)
				}
				return err
			})
			if err != nil || int(shards.Load()) != tc.masters {
				t.Errorf("%d of %d masters hold keys (%v)", shards.Load(), tc.masters, err)
			}
			// A multi-key command on one hash slot works.
			if err := rdb.MSet(ctx, "{ns}a", "1", "{ns}b", "2").Err(); err != nil {
				t.Errorf("MSET on one slot: %v", err)
			}
		})
	}
}

func TestClusterBadArgs(t *testing.T) {
	t.Parallel()
	msg := expectFatal(t, func(tb testing.TB) { redistest.StartCluster(tb, 2, 0) })
	if !strings.Contains(msg, "at least 3 masters") {
		t.Errorf("StartCluster(2, 0): %s", msg)
	}
	msg = expectFatal(t, func(tb testing.TB) { redistest.StartCluster(tb, 3, 0, redistest.WithUnixSocket()) })
	if !strings.Contains(msg, "WithUnixSocket") {
		t.Errorf("StartCluster with a unix socket: %s", msg)
	}
}
