package runtime

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// topologyReloader is implemented by *redis.ClusterClient.
type topologyReloader interface {
	ReloadState(ctx context.Context)
}

// reloadTopology asks a Redis Cluster client to reload its slot map after
// a command failed. go-redis reloads it on MOVED, ASK and READONLY replies
// and otherwise only every ClusterStateReloadInterval (60s by default): a
// slot whose master died keeps being sent to the dead address, so after a
// failover the scheduler would stall for up to a minute (go-redis issue
// #3979). The reload is asynchronous and coalesced by go-redis, so calling
// this on every failure is cheap. Other clients are left alone.
func reloadTopology(rdb redis.UniversalClient, err error) {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, context.Canceled) {
		return
	}
	if r, ok := rdb.(topologyReloader); ok {
		r.ReloadState(context.Background())
	}
}
