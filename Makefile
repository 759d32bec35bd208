# longfair — the two commands of the quick start are `make run` and `make test`.
GO        ?= go
BIN       := bin/longfair
# Packages with goroutines, sockets or processes run under the race detector;
# the pure engine, ledger and simulator run without it (it only slows them).
RACE_PKGS := $(shell $(GO) list ./... 2>/dev/null | grep -E '/(server|worker|client|ops|fsm|cmd)(/|$$)')
PURE_PKGS := $(shell $(GO) list ./... 2>/dev/null | grep -vE '/(server|worker|client|ops|fsm|cmd)(/|$$)')
STATICCHECK_VERSION := 2025.1.1

.PHONY: build run test bench lint proto clean

build:
	$(GO) build -o $(BIN) ./cmd/longfair

run: build
	./$(BIN) sim --macro --policy hmrf,ltdrf,ltaf,drf,static

test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m $(PURE_PKGS)
	@if [ -n "$(RACE_PKGS)" ]; then $(GO) test -race -count=1 -timeout 30m $(RACE_PKGS); fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x -timeout 30m ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

clean:
	rm -rf bin
