# longfair — the two commands of the quick start are `make run` and `make test`.
GO        ?= go
BIN       := bin/longfair
# Packages with goroutines, sockets or processes run under the race detector;
# the pure engine, ledger and simulator run without it (it only slows them).
RACE_PKGS := $(shell $(GO) list ./... 2>/dev/null | grep -E '/(server|worker|client|ops|fsm|cmd|internal/cli|internal/testcluster)(/|$$)')
PURE_PKGS := $(shell $(GO) list ./... 2>/dev/null | grep -vE '/(server|worker|client|ops|fsm|cmd|internal/cli|internal/testcluster)(/|$$)')
STATICCHECK_VERSION := v0.6.1

.PHONY: build run test bench lint proto proto-plugins clean tools deps dashboard-assets fuzz lin

# build makes bin/longfair, every command with the daemons, and
# bin/longfair-client, the user and admin commands alone, which start
# faster: the one for login nodes and the sbatch/squeue/sacct/scancel links.
# Both are built without the request-tracing pages of x/net/trace that
# gRPC links by default and longfair never serves (gRPC's grpcnotrace
# tag): the client is 4.7 MB smaller and starts about 3 ms sooner. The
# client is also linked statically (CGO_ENABLED=0): without the dynamic
# loader and libc it starts 3-4 ms sooner again (29-30 ms against 33 ms
# for --help here). It looks up no Unix user (internal/layering checks),
# so nothing it does needs libc's NSS; the daemons keep cgo, since a
# worker finds the researcher's account through NSS (LDAP, sssd). The
# tests build the same way (internal/testcluster BuildTags, BuildCommand).
GOTAGS := grpcnotrace
build:
	$(GO) build -tags $(GOTAGS) -o $(BIN) ./cmd/longfair
	CGO_ENABLED=0 $(GO) build -tags $(GOTAGS) -o $(BIN)-client ./cmd/longfair-client

# run starts a local cluster (3 servers, 3 workers) with a competing demo
# workload and prints the fairness table as it changes; Ctrl-C stops it.
run: build
	./$(BIN) dev --demo

# tools installs, into ./bin, the pinned command-line tools the tests run:
# grpcurl, a gRPC client no one here wrote, which lists and calls the
# servers' services through reflection (server/grpcurl_test.go). It comes
# from the Go module proxy like every other dependency; the stamp on the
# Makefile reinstalls it when the version changes.
GRPCURL_VERSION := v1.9.4
GRPCURL         := bin/grpcurl
tools: $(GRPCURL)
$(GRPCURL): Makefile
	GOBIN=$(CURDIR)/bin $(GO) install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)
	@touch $@

# deps installs, from Debian's packages, the programs the tests use that
# Go does not build: MPICH and Open MPI, each with its headers (the
# parallel-job tests build an MPI hello with each and run it across
# workers; they call each by its own name, mpicc.mpich or mpicc.openmpi,
# as the plain names are alternatives the last installed takes) and
# MUNGE's munged, munge and unmunge (the MUNGE tests start a munged of
# their own, server/auth_munge_test.go) and Chromium (the dashboard's
# browser test drives it headless) and protoc (TestGeneratedCodeIsCurrent
# regenerates the API's code with it). Each entry is a command or a
# file, then the package that provides it. Without root or apt-get it
# says what is missing, and the tests that need it skip with the same
# advice.
DEBIAN_DEPS := mpicc.mpich:mpich hydra_pmi_proxy:mpich /usr/include/x86_64-linux-gnu/mpich/mpi.h:libmpich-dev \
	mpicc.openmpi:openmpi-bin orted:openmpi-bin /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h:libopenmpi-dev \
	munged:munge unmunge:munge chromium:chromium /usr/share/bash-completion/bash_completion:bash-completion \
	protoc:protobuf-compiler
deps:
	@missing=""; for dep in $(DEBIAN_DEPS); do \
	  command -v $${dep%%:*} >/dev/null || [ -e $${dep%%:*} ] || missing="$$missing $${dep#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  missing=$$(echo $$missing | tr ' ' '\n' | sort -u | tr '\n' ' '); \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "deps: installing $$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing >/dev/null || \
	    { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing >/dev/null; }; \
	  else echo "deps: $$missing not installed (needs root and apt-get); the tests that use it skip"; fi; \
	fi

# The dashboard's chart library (uPlot, MIT), committed under
# server/dashboard/assets and built into the binary: re-fetch it at the
# pinned version from npm.
UPLOT_VERSION := 1.6.32
dashboard-assets:
	tmp=$$(mktemp -d) && cd $$tmp && npm pack --silent uplot@$(UPLOT_VERSION) >/dev/null && tar xzf uplot-$(UPLOT_VERSION).tgz && \
	cp package/dist/uPlot.iife.min.js package/dist/uPlot.min.css $(CURDIR)/server/dashboard/assets/ && \
	cp package/LICENSE $(CURDIR)/server/dashboard/assets/uPlot.LICENSE && rm -rf $$tmp

test: tools deps proto-plugins
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m $(PURE_PKGS)
	@if [ -n "$(RACE_PKGS)" ]; then $(GO) test -race -count=1 -timeout 30m $(RACE_PKGS); fi

# fuzz searches, for FUZZTIME each, for requests that make a real server
# panic, answer Internal/Unknown or corrupt its ledger: every public
# request type (FuzzAPI) and scripts over the worker stream
# (FuzzWorkerStream). `make test` runs only their seeds. New failing inputs
# land in server/testdata/fuzz/ and then run in every `make test`.
# Each input costs a few calls to the server, so minimizing a new
# interesting input (its coverage is noisy: servers run goroutines of their
# own) is capped at 10 runs instead of Go's default minute.
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzAPI$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10x ./server
	$(GO) test -run '^$$' -fuzz '^FuzzWorkerStream$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 10x ./server

# lin runs the linearizability check under faults for LIN_DURATION
# (`make test` runs it for 40s), worker pause included (issue 10 item 3;
# LIN_FLAGS=-lin.worker-faults=false leaves workers alone).
LIN_DURATION ?= 10m
LIN_FLAGS    ?=
lin:
	$(GO) test -count=1 -timeout 90m ./e2e -run '^TestLinearizableUnderFaults$$' -v -lin.duration=$(LIN_DURATION) $(LIN_FLAGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 1x -timeout 30m ./...

lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

# proto regenerates the gRPC API code from api/longfair/v1/*.proto, and the
# JSON/HTTP gateway (*.pb.gw.go) and its OpenAPI document
# (longfair.swagger.json) from the same protos and the HTTP rules in
# api/longfair/v1/http.yaml. It needs protoc (Debian: apt-get install
# protobuf-compiler); the plugins are pinned and installed into
# bin/protoc-plugins, so a fresh machine regenerates the same code that is
# committed (go test ./api/... checks that it is, when the plugins are in
# bin/protoc-plugins). The protoc command itself is api/generate.sh.
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
GRPC_GATEWAY_VERSION       := v2.33.0
# vtprotobuf's last release predates the protohelpers package its runtime
# and generator share now; both are pinned to the same commit.
VTPROTO_VERSION            := v0.6.1-0.20240319094008-0393e58bdf10
PROTO_PLUGINS              := $(CURDIR)/bin/protoc-plugins
proto: proto-plugins
	PROTO_PLUGINS=$(PROTO_PLUGINS) api/generate.sh api

# proto-plugins installs the pinned plugins; `make test` does too, so
# that TestGeneratedCodeIsCurrent runs rather than skips.
proto-plugins: $(PROTO_PLUGINS)/.pinned
$(PROTO_PLUGINS)/.pinned: Makefile
	GOBIN=$(PROTO_PLUGINS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(PROTO_PLUGINS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	GOBIN=$(PROTO_PLUGINS) $(GO) install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(GRPC_GATEWAY_VERSION)
	GOBIN=$(PROTO_PLUGINS) $(GO) install github.com/planetscale/vtprotobuf/cmd/protoc-gen-go-vtproto@$(VTPROTO_VERSION)
	GOBIN=$(PROTO_PLUGINS) $(GO) install github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-openapiv2@$(GRPC_GATEWAY_VERSION)
	@touch $@

clean:
	rm -rf bin
