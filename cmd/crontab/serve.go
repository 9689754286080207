package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gocrontab/crontab/dashboard"
	"github.com/gocrontab/crontab/internal/redisnet"
	"github.com/gocrontab/crontab/metrics"
)

// cmdServe runs the dashboard until ctx ends.
func cmdServe(ctx context.Context, c *cli, o *cmdOpts, _ []string) error {
	token := o.token
	if token == "" {
		token = c.getenv("CRONTAB_TOKEN")
	}
	basic := o.basicAuth
	if basic == "" {
		basic = c.getenv("CRONTAB_BASIC_AUTH")
	}
	var user, pass string
	if basic != "" {
		var ok bool
		if user, pass, ok = strings.Cut(basic, ":"); !ok || user == "" || pass == "" {
			return usagef("serve: -basic-auth: want USER:PASSWORD")
		}
	}
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return usagef("serve: -addr %q: %v", o.addr, err)
	}
	if !loopback(host) && token == "" && user == "" {
		return usagef("serve: -addr %q is not a loopback address: set -token (or CRONTAB_TOKEN) or -basic-auth (or CRONTAB_BASIC_AUTH)", o.addr)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(c.inspector))
	logger := slog.New(slog.NewTextHandler(c.stderr, nil))
	redisnet.RouteLogs(logger) // go-redis's own lines at debug level: off
	h, err := dashboard.New(dashboard.Config{Inspector: c.inspector, Namespace: c.namespace, Token: token,
		BasicUser: user, BasicPassword: pass, Metrics: metrics.Handler(reg), Logger: logger, ReadOnly: o.readOnly})
	if err != nil {
		return err
	}
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s: %w", c.redisAddr(), err)
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	url := "http://" + ln.Addr().String() + "/"
	if o.readOnly {
		fmt.Fprintf(c.stderr, "crontab: read-only: the dashboard changes nothing\n")
	}
	switch {
	case token != "":
		fmt.Fprintf(c.stderr, "crontab: dashboard of namespace %q on %s (open %s?token=... once, or send Authorization: Bearer ...)\n", c.namespace, url, url)
	case user != "":
		fmt.Fprintf(c.stderr, "crontab: dashboard of namespace %q on %s (basic auth)\n", c.namespace, url)
	default:
		fmt.Fprintf(c.stderr, "crontab: dashboard of namespace %q on %s\n", c.namespace, url)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	fmt.Fprintln(c.stderr, "crontab: dashboard stopped")
	return nil
}

// loopback reports whether host (of -addr) is a loopback address or
// localhost. The empty host (":8080") listens on every address: not
// loopback.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
