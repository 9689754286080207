package runtime_test

import (
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

// exampleRedis starts a private redis-server for an Example function and
// returns a client on it and a func that closes the client and stops the
// server. Examples print their output, so a server that cannot start ends
// the example with the reason on stderr and exit status 1.
func exampleRedis() (*redis.Client, func()) {
	srv, err := redistest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, "example:", err)
		os.Exit(1)
	}
	client := redis.NewClient(srv.Options())
	return client, func() {
		_ = client.Close()
		srv.Close()
	}
}
