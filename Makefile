GO ?= go

.PHONY: build test bench fmt fuzz

build:
	$(GO) build -o bin/meshc ./cmd/meshc

test:
	$(GO) vet ./...
	$(GO) test -race ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# Every fuzz target for FUZZTIME each. Go minimizes every input that finds
# new coverage, by default for up to a minute and without counting those
# executions in its status line; with the instrumented go-control-plane and
# istio.io/api in the binary that stalled the emit target at a dozen
# executions. A hundred calls per minimization keeps the search going.
FUZZTIME ?= 5m
FUZZ = $(GO) test -run '^$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 100x -parallel 1

fuzz:
	$(FUZZ) ./internal/load -fuzz FuzzLoad
	$(FUZZ) ./internal/yamlfast -fuzz FuzzParse
	$(FUZZ) ./internal/projectconfig -fuzz FuzzProjectConfig
	$(FUZZ) ./internal/lint -fuzz FuzzPipeline
	$(FUZZ) ./internal/emit -fuzz FuzzEmit
	$(FUZZ) ./internal/diag -fuzz FuzzRenderers
