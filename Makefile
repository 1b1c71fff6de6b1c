# minisched: a kube-scheduler built one concept per chapter.
#
#   make demo      run the newest chapter on a local cluster (CHAPTER=NN for another)
#   make test      every test: unit and integration tests, the KWOK scenarios
#   make help      everything else
#
# Everything the targets need is built from Go modules on first use (see
# scripts/build-tools.sh); nothing is downloaded but Go modules.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROOT      := $(CURDIR)
TOOLS_DIR ?= $(ROOT)/.cache/tools
BIN_DIR   := $(ROOT)/.cache/bin
CHAPTERS  := $(patsubst %/go.mod,%,$(sort $(wildcard [01][0-9]-*/go.mod)))
MODULES   := $(CHAPTERS) scripts scripts/tools
# CHAPTER picks one chapter by number (01, 02, ...); e2e runs all without it.
CHAPTER   ?=
NEWEST    := $(shell echo $(lastword $(CHAPTERS)) | cut -c1-2)
# A KUBEBUILDER_ASSETS the user set names binaries to reuse (see
# scripts/build-tools.sh); build-tools links them into $(TOOLS_DIR)/bin, and
# the tests then find etcd and kube-apiserver there.
USER_ASSETS := $(KUBEBUILDER_ASSETS)
export KUBEBUILDER_ASSETS := $(TOOLS_DIR)/bin
export MINISCHED_TOOLS_DIR := $(TOOLS_DIR)
# scripts/stage.sh prints a stage's name and how long it took.
STAGE     := bash scripts/stage.sh
# TEST_JOBS is how many modules' tests (and chapters' workshop proofs) run at
# once in make test: two keep both cores of the 2-core machine busy.
TEST_JOBS ?= 2

.PHONY: help
help: ## Show the targets.
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

.PHONY: check-go
check-go:
	@bash scripts/check-go.sh

.PHONY: tools
tools: check-go ## Build etcd, kube-apiserver, kube-scheduler, kubectl, kwok, kwokctl (first time about 11 min).
	@KUBEBUILDER_ASSETS="$(USER_ASSETS)" bash scripts/build-tools.sh $(TOOLS_DIR)

$(BIN_DIR)/cluster: $(shell find scripts/cluster scripts/cmd/cluster -name '*.go') scripts/go.mod
	@mkdir -p $(BIN_DIR)
	@go build -o $@ ./scripts/cmd/cluster

.PHONY: up
up: tools $(BIN_DIR)/cluster ## Start the local cluster in the background; prints the PATH and KUBECONFIG exports (see make env).
	@$(BIN_DIR)/cluster up --dir $(ROOT)/.cache/cluster --tools $(TOOLS_DIR)

.PHONY: env
env: $(BIN_DIR)/cluster ## Print the exports for the built kubectl and the local cluster: eval "$$(make -s env)".
	@$(BIN_DIR)/cluster env --dir $(ROOT)/.cache/cluster --tools $(TOOLS_DIR)

.PHONY: down
down: $(BIN_DIR)/cluster ## Stop the local cluster and remove its files.
	@$(BIN_DIR)/cluster down --dir $(ROOT)/.cache/cluster

.PHONY: demo
demo: tools ## Run a chapter (CHAPTER=NN, default the newest) on a fresh cluster; ONCE=1 exits when done; CONFIG=NAME picks chapter 13's config/NAME.yaml (random, nodecost, fit or your own).
	@mkdir -p $(BIN_DIR) && go build -o $(BIN_DIR)/demo ./scripts/cmd/demo
	@$(BIN_DIR)/demo --chapter $(or $(CHAPTER),$(NEWEST)) --tools $(TOOLS_DIR) $(if $(ONCE),--once) $(if $(CONFIG),--config $(CONFIG))

.PHONY: e2e
e2e: tools ## Run the shared KWOK scenarios against every chapter, or CHAPTER=NN.
	@go run ./scripts/cmd/e2e --tools $(TOOLS_DIR) $(if $(CHAPTER),--chapters $(CHAPTER)) $(if $(RUN),--run '$(RUN)')

.PHONY: compare
compare: tools ## Replay the deterministic scenarios with each chapter (02 on) and with kube-scheduler; fail on any difference.
	@go run ./scripts/cmd/compare --tools $(TOOLS_DIR) $(if $(CHAPTER),--chapters $(CHAPTER)) $(if $(RUN),--run '$(RUN)')

.PHONY: chaos
chaos: tools ## Churn the cluster under chapters 05 on (CHAPTER=NN for one; SMALL=1 for the make test size) and check no pod is lost, bound twice or over-committed.
	@go run ./scripts/cmd/chaos --tools $(TOOLS_DIR) $(if $(CHAPTER),--chapters $(CHAPTER)) $(if $(SMALL),--small)

.PHONY: bench
bench: tools ## Benchmark every chapter, kube-scheduler and the bind ceiling side by side (median of 3 runs; SchedulingBasic at 100 and 5,000 nodes, requeue, preemption, gangs) and write every table of the docs from that one run (RESUME=.cache/bench/DATE continues one that stopped, from the rounds it saved); CHAPTER=NN or ARGS='...' measure without touching the docs; TINY=1 for the make test size.
	@go run ./scripts/cmd/bench --tools $(TOOLS_DIR) $(if $(CHAPTER),--chapters $(CHAPTER)) $(if $(TINY),--tiny,$(if $(CHAPTER)$(ARGS),,--docs)) $(if $(RESUME),--resume '$(RESUME)') $(ARGS)

.PHONY: quality
quality: tools ## Measure placement quality (spread after a fast scale-up, bin packing against the optimum) of chapters 03 on and kube-scheduler (median of 3) and regenerate docs/quality.md; TINY=1 for the make test size.
	@go run ./scripts/cmd/quality --tools $(TOOLS_DIR) $(if $(CHAPTER),--chapters $(CHAPTER)) $(if $(TINY),--tiny,--docs) $(ARGS)

.PHONY: timeline
timeline: tools ## Draw each pod's path through the queue as an SVG: CHAPTER=NN SCENARIO=name (writes .cache/timeline/NN-name.svg).
	@go run ./scripts/cmd/timeline --tools $(TOOLS_DIR) --chapter '$(CHAPTER)' --scenario '$(SCENARIO)'

.PHONY: watch
watch: $(if $(REPLAY),,tools $(BIN_DIR)/cluster) ## Watch schedulers at work in the browser (docs/watch.md): CHAPTER=NN on the local cluster, CHAPTER=NN,MM side by side, VS=upstream beside kube-scheduler; RECORD=file records, REPLAY=file replays.
	@go run ./scripts/cmd/watch --tools $(TOOLS_DIR) --cluster-bin $(BIN_DIR)/cluster $(if $(REPLAY),--replay '$(REPLAY)',--chapter '$(or $(CHAPTER),$(NEWEST))' $(if $(VS),--vs '$(VS)') $(if $(RECORD),--record '$(RECORD)'))

.PHONY: trace
trace: tools ## Trace a chapter (12 on) at work: SCENARIO= a suite scenario or SchedulingBasic, PreemptionBasic (default), PreemptionAsync, GangScheduling; writes .cache/trace/NN-SCENARIO.{trace,json,svg}: open the JSON in Perfetto. IN=file converts a trace; PODS=regex, KIND=preemption|podgroup pick the SVG's attempts.
	@go run ./scripts/cmd/trace --tools $(TOOLS_DIR) --chapter $(or $(CHAPTER),12) $(if $(SCENARIO),--scenario '$(SCENARIO)') $(if $(IN),--in '$(IN)') $(if $(PODS),--pods '$(PODS)') $(if $(KIND),--kind '$(KIND)') $(ARGS)

.PHONY: workshop
workshop: check-go ## Start a workshop on a chapter: CHAPTER=NN [PART=K] makes workshop/NN-name/ with the concept's functions as stubs (docs/workshop.md).
	@go run ./scripts/cmd/workshop start --chapter '$(or $(CHAPTER),$(NEWEST))' $(if $(PART),--part $(PART))

.PHONY: workshop-check
workshop-check: tools ## Check your workshop copy: CHAPTER=NN [PART=K]; unit tests, integration tests, then KWOK scenarios, as a table.
	@go run ./scripts/cmd/workshop check --chapter '$(or $(CHAPTER),$(NEWEST))' --tools $(TOOLS_DIR) $(if $(PART),--part $(PART))

.PHONY: workshop-diff
workshop-diff: ## Show your workshop copy against the chapter: CHAPTER=NN.
	@go run ./scripts/cmd/workshop diff --chapter '$(or $(CHAPTER),$(NEWEST))'

.PHONY: workshop-reset
workshop-reset: ## Start a workshop copy over: CHAPTER=NN [PART=K] (the old copy is kept in workshop/.old).
	@go run ./scripts/cmd/workshop reset --chapter '$(or $(CHAPTER),$(NEWEST))' $(if $(PART),--part $(PART))

.PHONY: workshop-prove
workshop-prove: check-go ## Prove every workshop part and exercise check fails on its starting point and passes when done (CHAPTER=NN for one).
	@go run ./scripts/cmd/workshop prove --jobs $(TEST_JOBS) $(if $(CHAPTER),--chapters $(CHAPTER))

.PHONY: vet
vet: ## go vet every module.
	@for m in $(CHAPTERS) scripts; do (cd $$m && GOWORK=off go vet ./...) || exit 1; done

# The unit stage runs scripts/go-test-modules.sh: go test -race for each
# module, its test binaries linked without DWARF (-ldflags=-w: nobody runs a
# debugger on them; stack traces and race reports do not need it) and kept
# under .cache/testbin, so that a warm run links only the binaries whose
# sources changed (scripts/cmd/gotest says why): linking was this stage's
# main cost.
#
# make watch's browser tests need Debian's Chromium, and make publish's
# also Node.js. Without them they are left out, with one line that says
# so, except under CI, where they run and fail (.ci/run installs Chromium).
BROWSER_TESTS := ^TestPageFollowsAScenario$$
PUBLISH_TESTS := ^TestPublish$$

.PHONY: unit-integration
unit-integration: tools
	@skip=""; \
	if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && [ "$${CI:-}" != true ]; then \
		echo "Chromium is not installed: the browser tests of make watch and make publish did not run (sudo apt-get install chromium)"; skip='$(BROWSER_TESTS)|$(PUBLISH_TESTS)'; \
	elif ! command -v npm >/dev/null && [ "$${CI:-}" != true ]; then \
		echo "Node.js is not installed: the rendering test of make publish did not run (sudo apt-get install nodejs npm)"; skip='$(PUBLISH_TESTS)'; \
	elif ! fc-list :lang=ja 2>/dev/null | grep -q . && [ "$${CI:-}" != true ]; then \
		echo "No Japanese font: the rendering test of make publish did not run (sudo apt-get install fonts-noto-cjk)"; skip='$(PUBLISH_TESTS)'; \
	fi; \
	GO_TEST_SKIP="$$skip" bash scripts/go-test-modules.sh $(TEST_JOBS) $(shell printf '%s\n' $(CHAPTERS) | sort -r | sed '2a scripts')

.PHONY: test
test: tools ## Every chapter's unit and integration tests (-race), the scenarios, the comparison with kube-scheduler (go vet is make verify's).
	@$(STAGE) "make test" $(MAKE) --no-print-directory test-stages

# The tiny benchmark and quality runs go side by side, each on a cluster of
# its own: they only show that the harnesses work (their numbers are
# reported, never judged), and each leaves a core mostly idle.
#
# No go vet stage: make verify runs it in full (CI runs make verify before
# make test).
.PHONY: test-stages
test-stages:
	@$(STAGE) "unit and integration tests" $(MAKE) --no-print-directory unit-integration
	@$(STAGE) "workshop checks can fail (make workshop-prove)" $(MAKE) --no-print-directory workshop-prove CHAPTER=
	@$(STAGE) "KWOK scenarios (make e2e)" $(MAKE) --no-print-directory e2e
	@$(STAGE) "churn, small (make chaos SMALL=1)" $(MAKE) --no-print-directory chaos SMALL=1 CHAPTER=
	@$(STAGE) "benchmark and placement quality harnesses, tiny, side by side" bash scripts/parallel.sh 2 \
		'$(STAGE) "benchmark harness, tiny (make bench TINY=1)" $(MAKE) --no-print-directory bench TINY=1 CHAPTER=' \
		'$(STAGE) "placement quality harness, tiny (make quality TINY=1)" $(MAKE) --no-print-directory quality TINY=1 CHAPTER='
	@$(STAGE) "fidelity against kube-scheduler (make compare)" $(MAKE) --no-print-directory compare

.PHONY: pin
pin: ## Rewrite every go.mod and go.work from scripts/versions.env, then go mod tidy.
	@env -C scripts GOWORK=off go run ./cmd/pin -root ..
	@for m in $(MODULES); do (cd $$m && GOWORK=off go mod tidy) || exit 1; done

.PHONY: diffs
diffs: ## Regenerate docs/diffs and the code snippets in docs/.
	@go run ./scripts/cmd/gendiff -root .
	@go run ./scripts/cmd/verifydocs -root . -fix

.PHONY: verify
verify: check-go ## Check versions, go mod tidy, gofmt, vet, standalone builds, generated diffs, snippets, links, spelling.
	@$(STAGE) "versions (scripts/versions.env)" env -C scripts GOWORK=off go run ./cmd/pin -root .. -check
	@$(STAGE) "go mod tidy" bash -c 'for m in $(MODULES); do (cd $$m && GOWORK=off go mod tidy -diff >/dev/null) || { echo "$$m: go mod tidy would change go.mod/go.sum (run make pin)"; exit 1; }; done'
	@$(STAGE) gofmt bash -c 'out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi'
	@$(STAGE) vet $(MAKE) --no-print-directory vet
	@$(STAGE) "each chapter builds alone (GOWORK=off)" bash -c 'for m in $(CHAPTERS); do (cd $$m && GOWORK=off go build ./...) || exit 1; done'
	@$(STAGE) "generated diffs" go run ./scripts/cmd/gendiff -root . -check
	@$(STAGE) "docs: snippets, links, run outputs, spelling" go run ./scripts/cmd/verifydocs -root .

.PHONY: publish
publish: check-go ## Write the Zenn book of the Japanese posts and the Medium pages of the English ones into .cache/publish, rendered and screenshotted (needs Node.js and Chromium): ZENN_USER=name [REPO=https://github.com/OWNER/NAME].
	@go run ./scripts/cmd/publish --zenn-user '$(ZENN_USER)' $(if $(REPO),--repo '$(REPO)')

.PHONY: ja-synced
ja-synced: check-go ## Mark a Japanese page as in step with its English page after a change that needs no translation (a typo): PAGE=docs/ja/NN-name.md or README.ja.md.
	@test -n "$(PAGE)" || { echo "ja-synced: say which page: make ja-synced PAGE=docs/ja/NN-name.md"; exit 2; }
	@go run ./scripts/cmd/verifydocs -root . -ja-synced '$(PAGE)'

.PHONY: docs-data
docs-data: tools ## Regenerate the outputs of real runs that the docs show (stamped with date and machine); ONLY=scenarios (with the quoted log lines), ONLY=chaos or ONLY=quotes for those alone (ONLY=tests or demo take CHAPTER=NN).
	@go run ./scripts/cmd/docsdata -root . --tools $(TOOLS_DIR) $(if $(ONLY),--only $(ONLY)) $(if $(CHAPTER),--chapter $(CHAPTER))

.PHONY: clean
clean: ## Stop the local cluster and remove .cache (tools, logs). Go's own caches stay.
	@if [ -x $(BIN_DIR)/cluster ]; then $(BIN_DIR)/cluster down --dir $(ROOT)/.cache/cluster; fi
	@rm -rf $(ROOT)/.cache
	@echo "Removed .cache. Go's module and build caches (6 to 9 GB) stay; 'go clean -cache -modcache' removes them."
