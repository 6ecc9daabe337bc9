# make test: everything CI runs — formatting, vet, staticcheck, cfn-lint on the SAM
# template, the OpenAPI linter on api/openapi.yaml (scripts/openapi-lint, built from
# go.mod's pinned module; its rules in scripts/openapi-lint/lint.yaml), the README's
# checked examples (make readme-check), the race-enabled suite on
# the embedded DynamoDB (minidyn), and the suites again on a moto server started on a
# free 127.0.0.1 port and always stopped. The four parts run at once (see test below).
# The Lambda
# Runtime Interface Emulator is installed into bin/ for the test that runs the real
# bootstrap under it. moto and cfn-lint come from $(PYTHON) when it has them, else from
# .venv, which scripts/python-tools makes on first use (see PY below).
#
# make build: the Lambda bootstraps, bin/<command>/bootstrap, as sam build makes them.
GO  ?= go
PYTHON ?= python3
BIN := $(CURDIR)/bin
RIE := $(BIN)/aws-lambda-rie
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d

# The Lambda functions, by their cmd/ directory. A directory that does not exist (yet)
# is skipped by `make build` with a note; sam build's targets below never skip.
LAMBDAS := ledger-consumer ledger-api ledger-events

# lambda builds the main package ./cmd/$(1) as a Lambda bootstrap for provided.al2023 on
# arm64 (static, stripped, without the RPC mode only the retired go1.x runtime needed) into
# $(2)/bootstrap. `make build` and sam build share it, so what is deployed is what was
# built and tested here.
lambda = CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags "-s -w" -o $(2)/bootstrap ./cmd/$(1)

# PY: the path of a python that can run moto's server and cfn-lint — $(PYTHON) itself
# when it can, else .venv/bin/python, installed from scripts/requirements.txt (pinned
# versions) the first time. Found once per make run, by the first recipe that needs it;
# if neither works, make stops after scripts/python-tools's one-line reason, and says
# what runs without Python.
PY = $(eval PY := $(shell ./scripts/python-tools $(PYTHON)))$(or $(PY),$(error no python with moto and cfn-lint (see above). Without Python, `make readme-check test-minidyn` runs the README's examples and every Go test on the embedded DynamoDB))
CFN_LINT = $(PY) -c 'import sys; from cfnlint.runner import main; sys.argv[0] = "cfn-lint"; sys.exit(main())'

.PHONY: test lint readme-check test-minidyn test-moto tools report soak rehearse build $(LAMBDAS:%=build-%) build-ConsumerFunction build-ApiFunction build-EventsFunction

# test runs its four parts at once, as one make with four jobs, and prints each part's
# output whole when it ends: on two cores the parts' waits (the moto server is one
# Python thread; a property case waits on its simulated faults) leave room for the
# others' work. PY is found first, so that a missing moto stops make before any part
# starts.
test:
	@echo "make test: lint, readme-check, test-minidyn and test-moto run at once; each prints its output when it ends"
	@$(MAKE) --no-print-directory -j4 --output-sync=target PY=$(PY) lint readme-check test-minidyn test-moto

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go') 2>/dev/null); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(CFN_LINT) --include-checks I --non-zero-exit-code informational template.yaml
	$(GO) run ./scripts/openapi-lint -config scripts/openapi-lint/lint.yaml api/openapi.yaml

build: $(LAMBDAS:%=build-%)
	@for f in $(LAMBDAS); do \
		if [ -d cmd/$$f ]; then printf '%-28s %9d bytes\n' bin/$$f/bootstrap $$(wc -c < $(BIN)/$$f/bootstrap); fi; \
	done

$(LAMBDAS:%=build-%): build-%:
	@if [ -d cmd/$* ]; then \
		echo '$(call lambda,$*,bin/$*)'; $(call lambda,$*,$(BIN)/$*); \
	else \
		echo "skipped $*: cmd/$* does not exist"; \
	fi

# sam build's makefile builder (template.yaml, Metadata BuildMethod: makefile) runs
# build-<LogicalId> at the module root with ARTIFACTS_DIR set to where the function's
# code must go.
build-ConsumerFunction:
	$(call lambda,ledger-consumer,$(ARTIFACTS_DIR))

build-ApiFunction:
	$(call lambda,ledger-api,$(ARTIFACTS_DIR))

build-EventsFunction:
	$(call lambda,ledger-events,$(ARTIFACTS_DIR))

tools: $(RIE)

$(RIE):
	GOBIN=$(BIN) $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)

# make readme-check: the README's shell blocks marked <!-- readme-check --> run against
# the embedded store, their output compared with what the README shows (the rules are
# at the top of cmd/ledger/readme_test.go).
readme-check:
	$(GO) test -count=1 -run '^TestReadme' ./cmd/ledger

test-minidyn: $(RIE)
	LEDGER_TEST_RIE=$(RIE) $(GO) test -race -count=1 ./...

test-moto: $(RIE)
	LEDGER_TEST_RIE=$(RIE) PYTHON=$(PY) ./scripts/with-moto $(GO) test -count=1 ./...

# make report: `ledger compare --bench` on the embedded store, written as a self-contained
# HTML page, and a screenshot of it taken by headless Chromium (Debian's chromium
# package) to check that it renders. Both land in compare-report/, which git ignores.
REPORT := $(CURDIR)/compare-report
CHROMIUM ?= chromium

report:
	mkdir -p $(REPORT)
	$(GO) run ./cmd/ledger compare --bench --html $(REPORT)/compare.html
	profile=$$(mktemp -d) && trap 'rm -rf "$$profile"' EXIT && \
	$(CHROMIUM) --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$$profile" --screenshot=$(REPORT)/compare.png --window-size=1280,1600 \
		file://$(REPORT)/compare.html
	@echo "report: $(REPORT)/compare.html, screenshot $(REPORT)/compare.png"

# make rehearse: the deploy rehearsal (docs/deploy.md), without AWS: template.yaml
# transformed by the SAM translator and created as a stack on a moto server of its own,
# then movements sent through the stack's queue and read back through its table
# (scripts/rehearse.py says how). REHEARSE_ARGS adds template parameters (KEY=VALUE)
# and the script's flags, such as REHEARSE_ARGS='CreateTopic=true --movements 500'.
REHEARSE_ARGS ?=

rehearse:
	$(GO) build -o $(BIN)/ledger ./cmd/ledger
	PYTHON=$(PY) ./scripts/with-moto sh -c '"$$0" scripts/rehearse.py --endpoint "$$LEDGER_TEST_MOTO_ENDPOINT" --ledger "$$1" $(REHEARSE_ARGS)' $(PY) $(BIN)/ledger

# make soak: not part of `make test` or CI. SOAK_MOVEMENTS movements (100,000 by default;
# set fewer for a quick run) through the consumer with every kind of fault, on a moto
# server of its own; prints the violations (must be 0) and the throughput.
SOAK_MOVEMENTS ?= 100000

soak:
	LEDGER_SOAK_MOVEMENTS=$(SOAK_MOVEMENTS) PYTHON=$(PY) ./scripts/with-moto $(GO) test -tags soak -run '^TestSoak$$' -count=1 -timeout 90m -v ./internal/consumer
