# The commands a user runs; see README.md.
GO       ?= go
FUZZTIME ?= 2m
# The chaos soak's seed and how long it injects faults (make chaos).
SEED     ?= 1
DURATION ?= 60s
# Every committed generated file, checked for staleness by `make check`.
GENERATED := $(shell git ls-files '*crontab_gen.go' 2>/dev/null)

.PHONY: run test check generate bench bench-sched bench-go fuzz chaos

## run: run the example scheduler against $$REDIS_URL, else the Redis at 127.0.0.1:6379, else a private redis-server for this run
run:
	$(GO) run ./examples/basic

## test: static checks, then every test with the race detector
test: check
	$(GO) test -race -count=1 -timeout 20m ./...

## check: gofmt, go vet, and generated files fresh
check:
	@out="$$(gofmt -l $$(git ls-files '*.go' | grep -v '^testdata/'))"; \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@for f in $(GENERATED); do \
	  case $$f in testdata/*) continue;; esac; \
	  d=$$(dirname $$f); \
	  echo "crontabgen -check $$f"; \
	  (cd $$d && $(GO) run github.com/gocrontab/crontab/cmd/crontabgen -check -o $$(basename $$f) .) || exit 1; \
	done

## generate: regenerate every crontab_gen.go
generate:
	$(GO) generate ./...

## bench: the scheduler benchmark, then the Go micro-benchmarks (see BENCHMARKS.md)
bench: bench-sched bench-go

## bench-sched: cmd/crontabbench on a private redis-server (about 3 min; BENCHFLAGS=-h for the flags)
bench-sched:
	$(GO) build -o bin/crontabbench ./cmd/crontabbench
	./bin/crontabbench $(BENCHFLAGS)

## bench-go: the Go micro-benchmarks
bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: run every fuzz target for FUZZTIME each (default 2m); corpora in <pkg>/testdata/fuzz/<Target>/
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$target ($(FUZZTIME))"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## chaos: the chaos soak (cmd/crontabchaos, built with -race) for DURATION with SEED; see RELIABILITY.md
chaos:
	$(GO) build -race -o bin/crontabchaos ./cmd/crontabchaos
	./bin/crontabchaos -seed $(SEED) -duration $(DURATION) $(CHAOSFLAGS)
