# karta — build, test and maintenance targets. `make test` is what CI runs.
GO        ?= go
BIN       ?= bin/karta
FUZZTIME  ?= 30s
BENCHCOUNT ?= 6
BENCHTIME ?= 500ms
BENCHOUT  ?= bin/bench.txt
CONTROLLER_GEN ?= $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.19.0
# What `karta version` prints: stamped by `make build` and the Dockerfile (cmd/karta/version.go).
VERSION   ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null || echo devel)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS   := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
IMAGE     ?= karta:$(VERSION)
DOCKER    ?= docker
# The Helm chart's tests: a module of their own, so that karta's does not depend on Helm.
CHART_TEST := test/helm
# Karmada's own webhook client against `karta serve`: a module of its own (Karmada pins older k8s.io).
KARMADA_TEST := test/karmada
# The benchmarks and their baselines (re-implementations of upstream Karta's, Karmada's and Argo CD's
# methods, and hand-written Go): a module of its own, so that karta's packages do not carry them.
PERF := test/perf

# Fuzz targets as package:Target; `go test -fuzz` takes one target per run.
FUZZ_TARGETS := ./karta:FuzzLoad ./internal/jqexpr:FuzzCheck ./internal/jqlua:FuzzJQ ./internal/jqlua:FuzzShakeChunk ./interpreter:FuzzReviseSpec ./interpreter:FuzzBackends ./internal/jqdirect:FuzzAgreesWithGojq \
	./luaapi:FuzzValueBridge ./luaapi:FuzzNormalizeJSON ./karmada:FuzzDecodeStatusJSON ./karmada/kube:FuzzValue ./karmada/kube:FuzzKubeTypedAgreesWithJSON \
	./object:FuzzDecode ./interpreter:FuzzMergeDiff \
	./argo:FuzzLazyAgreesWithEager ./internal/srcbound:FuzzLua ./internal/srcbound:FuzzJQ ./test/paths:FuzzEveryPathGivesOneAnswer

.PHONY: all build image test test-integration fmt-check vet lint fuzz bench bench-report golden generate tidy-check clean

all: build test

## build: a static bin/karta with the version and commit stamped in, as the image has it.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/karta

## image: the container image (Dockerfile) where Docker is; make image IMAGE=registry/karta:v1.2.3
image:
	$(DOCKER) build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMAGE) .

## test: formatting, vet, then every test with the race detector (fuzz seed corpora included),
## then the chart's and the image recipe's tests (test/helm; -count=1: they read files outside
## their module, which go test's cache does not watch), then Karmada's webhook client against
## `karta serve` (test/karmada; without -race: what it tests runs in the karta binary it builds,
## and a race build of Karmada's dependencies would double the cold compile), then the
## benchmarks' baselines checked against karta's answers (test/perf; -count=1 as test/helm).
test: fmt-check vet
	$(GO) test -race -timeout 30m ./...
	cd $(CHART_TEST) && $(GO) test -race -count=1 -timeout 30m ./...
	cd $(KARMADA_TEST) && $(GO) test -count=1 -timeout 30m ./...
	cd $(PERF) && $(GO) test -race -count=1 -timeout 30m ./...

## test-integration: every test, integration-tagged ones included, against a real
## cluster (etcd, kube-apiserver, controller-manager, scheduler, kwok fake nodes)
## that hack/testenv.sh starts and always stops. The first run builds the
## binaries into ~/.cache/karta-testenv (minutes; KARTA_TESTENV_CACHE moves it);
## later runs start in seconds. It also runs karta studio's end-to-end test in
## headless Chromium (cmd/karta TestStudioBrowser; its screenshots go to
## bin/test-artifacts/studio), which fails under CI when Chromium is missing
## (.ci/run installs Debian's chromium).
test-integration:
	@trap 'hack/testenv.sh stop' EXIT; trap 'exit 130' INT TERM; \
	hack/testenv.sh start && eval "$$(hack/testenv.sh env)" && \
	$(GO) test -race -timeout 30m -tags integration -count=1 ./... && \
	(cd $(CHART_TEST) && $(GO) test -race -tags integration -count=1 -timeout 30m ./...) && \
	(cd $(KARMADA_TEST) && $(GO) test -tags integration -count=1 -timeout 30m ./...)

fmt-check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "not gofmt-formatted (run gofmt -w):"; echo "$$unformatted"; exit 1; fi

vet:
	$(GO) vet ./...
	cd $(CHART_TEST) && $(GO) vet ./... && $(GO) vet -tags integration ./...
	cd $(KARMADA_TEST) && $(GO) vet ./...
	cd $(PERF) && $(GO) vet ./...

## lint: test's static checks plus a go.mod that is tidy.
lint: fmt-check vet tidy-check

tidy-check:
	$(GO) mod tidy -diff
	cd $(CHART_TEST) && $(GO) mod tidy -diff
	cd $(KARMADA_TEST) && $(GO) mod tidy -diff
	cd $(PERF) && $(GO) mod tidy -diff

## fuzz: run each fuzz target for FUZZTIME (e.g. make fuzz FUZZTIME=10m).
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

## bench: the benchmarks and the baselines they are measured against in one run (test/perf, a
## module of its own: the competitors' re-implementations are not karta's code; docs/performance.md),
## then benchreport: medians over BENCHCOUNT samples, GOMAXPROCS scaling, memory, the targets,
## and last one BENCH line per comparison. About 15 minutes; raw output in BENCHOUT.
bench:
	@mkdir -p $(dir $(BENCHOUT))
	@echo "benchmarking (-count $(BENCHCOUNT), -benchtime $(BENCHTIME)); raw output in $(BENCHOUT)"
	cd $(PERF) && $(GO) test -run '^$$' -bench '^Benchmark(Hooks|Compile|Karmada|Argo|Registry|Webhook|Isolation|Exports)$$' -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) -timeout 90m ./ > $(abspath $(BENCHOUT)) 2>&1 || (cat $(abspath $(BENCHOUT)); exit 1)
	$(GO) test -run '^$$' -bench '^Benchmark(Hooks|Compile|Karmada|Argo|Registry|Webhook|Isolation|Exports)$$' -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) -timeout 90m ./builtin/ >> $(BENCHOUT) 2>&1 || (cat $(BENCHOUT); exit 1)
	cd $(PERF) && $(GO) test -run '^$$' -bench '^BenchmarkParallel$$' -benchmem -benchtime $(BENCHTIME) -count $(BENCHCOUNT) -cpu 1,2 ./ >> $(abspath $(BENCHOUT)) 2>&1 || (cat $(abspath $(BENCHOUT)); exit 1)
	cd $(PERF) && $(GO) test -run '^$$' -bench '^Benchmark(PoolState|MillionCalls|KarmadaCases|ArgoCases|ControllerResync|ReviseInterleaved)$$' -benchtime 1x -count 3 -timeout 30m ./ >> $(abspath $(BENCHOUT)) 2>&1 || (cat $(abspath $(BENCHOUT)); exit 1)
	$(GO) test -run '^$$' -bench '^BenchmarkExporterScrape$$' -benchtime 1x -count 3 -timeout 30m ./exporter/ >> $(BENCHOUT) 2>&1 || (cat $(BENCHOUT); exit 1)
	@$(MAKE) --no-print-directory bench-report

## bench-report: the report of the last `make bench` again, from its raw output in BENCHOUT.
bench-report:
	@cd $(PERF) && $(GO) run ./cmd/benchreport $(abspath $(BENCHOUT))

## golden: regenerate the examples' golden outputs (and the gang schedulers' objects for them,
## podgroups/testdata/golden); review the diff before committing.
golden:
	$(GO) test ./builtin -run 'TestExamples|TestPeerCasesInCatalog' -update
	$(GO) test ./podgroups -run TestExamples -update

## generate: DeepCopy methods and the CRD from the Go types (controller-gen), the chart's copy
## of the CRD, the command reference docs/cli.md (from the commands' help), and the
## built-ins' bundled scripts: scripts/karmada/NAME.yaml (a ResourceInterpreterCustomization)
## and scripts/argocd/<group>/<Kind>/ (an Argo CD customization with its tests).
generate:
	$(CONTROLLER_GEN) object paths=./karta/...
	$(CONTROLLER_GEN) crd paths=./karta/... output:crd:artifacts:config=karta/crd
	cp karta/crd/run.ai_kartas.yaml charts/karta/files/run.ai_kartas.yaml
	$(GO) test ./builtin -run '^TestGeneratedIndex$$' -update
	$(GO) test ./cmd/karta -run '^TestCLIDoc$$' -update
	$(GO) build -o bin/karta-generate ./cmd/karta
	rm -rf scripts/karmada scripts/argocd && mkdir -p scripts/karmada scripts/argocd
	@for name in $$(bin/karta-generate builtin list -o table | tail -n +2 | cut -d' ' -f1); do \
		if bin/karta-generate karmada export -k $$name > scripts/karmada/$$name.yaml 2>/dev/null; then :; \
		else rm -f scripts/karmada/$$name.yaml; echo "skipped: $$name does not export to Karmada"; fi; \
	done
	bin/karta-generate argo export --dir scripts/argocd --examples examples > /dev/null

clean:
	rm -rf bin
