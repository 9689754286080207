package redistest_test

import (
	"crypto/tls"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/gocrontab/crontab/internal/redistest"
)

func TestTLS(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	x := redistest.NewTLS(t)
	s := redistest.Start(t, redistest.WithTLS(x), redistest.WithACLUser("app", "s3cret"))

	opt, err := redis.ParseURL(x.URL(s))
	if err != nil {
		t.Fatalf("ParseURL(%q): %v", x.URL(s), err)
	}
	if opt.TLSConfig == nil || opt.Username != "app" {
		t.Fatalf("ParseURL(%q) = %+v, want TLS as user app", x.URL(s), opt)
	}
	opt.TLSConfig = x.Config()
	c := redis.NewClient(opt)
	defer c.Close()
	mustSetGet(t, ctx, c, "over-tls")

	// A client that does not trust the test CA is refused.
	opt.TLSConfig = &tls.Config{ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	opt.MaxRetries = -1
	bad := redis.NewClient(opt)
	defer bad.Close()
	if err := bad.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("PING without the CA: %v, want a certificate error", err)
	}
}
