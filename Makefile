GO ?= go

.PHONY: build test bench bench-lint fmt fuzz

build:
	$(GO) build -o bin/meshc ./cmd/meshc

test:
	$(GO) vet ./...
	$(GO) test -race ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# What meshc lint spends on the generated 100-namespace mesh, stage by
# stage and analyzer by analyzer (a subset of bench).
bench-lint:
	$(GO) test -run '^$$' -bench 'Stages/ingress=none' ./internal/compile
	$(GO) test -run '^$$' -bench 'LoadGeneratedMesh' -benchmem ./internal/load
	$(GO) test -run '^$$' -bench '^BenchmarkResolve$$' -benchmem ./internal/resolve
	$(GO) test -run '^$$' -bench '^BenchmarkRun$$|^BenchmarkAnalyzer$$' -benchmem ./internal/lint

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
