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

fuzz:
	$(GO) test ./internal/load -run '^$$' -fuzz FuzzLoad -fuzztime 5m
	$(GO) test ./internal/lint -run '^$$' -fuzz FuzzPipeline -fuzztime 5m
