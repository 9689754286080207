package runtime_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	crontab "github.com/gocrontab/crontab/runtime"
)

// Mount the probes under /healthz/ of the application's mux: Kubernetes
// then probes /healthz/livez and /healthz/readyz. Readiness passes once
// Run has registered the tasks (Ready is closed) while Redis answers.
func ExampleScheduler_HealthHandler() {
	client, stop := exampleRedis()
	defer stop()
	s, err := crontab.NewScheduler(client, crontab.NewRegistry(), crontab.WithLogger(nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz/", http.StripPrefix("/healthz", s.HealthHandler()))
	srv := httptest.NewServer(mux) // an application would http.ListenAndServe(":8080", mux)
	defer srv.Close()
	status := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		return resp.Status
	}

	fmt.Println("before Run: readyz", status("/healthz/readyz"), "livez", status("/healthz/livez"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	<-s.Ready()
	fmt.Println("ready: readyz", status("/healthz/readyz"), "livez", status("/healthz/livez"))
	cancel()
	fmt.Println("Run:", <-done)
	fmt.Println("after Run: readyz", status("/healthz/readyz"), "livez", status("/healthz/livez"))
	// Output:
	// before Run: readyz 503 Service Unavailable livez 200 OK
	// ready: readyz 200 OK livez 200 OK
	// Run: <nil>
	// after Run: readyz 503 Service Unavailable livez 503 Service Unavailable
}
