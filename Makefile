# make test: everything CI runs — formatting, vet, staticcheck, the race-enabled suite on
# the embedded DynamoDB (minidyn), then the suites again on a moto server started on a
# free 127.0.0.1 port and always stopped. The Lambda Runtime Interface Emulator is
# installed into bin/ for the test that runs the real bootstrap under it.
GO  ?= go
BIN := $(CURDIR)/bin
RIE := $(BIN)/aws-lambda-rie
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d

.PHONY: test lint test-minidyn test-moto tools report

test: lint test-minidyn test-moto

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go') 2>/dev/null); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

tools: $(RIE)

$(RIE):
	GOBIN=$(BIN) $(GO) install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)

test-minidyn: $(RIE)
	LEDGER_TEST_RIE=$(RIE) $(GO) test -race -count=1 ./...

test-moto: $(RIE)
	LEDGER_TEST_RIE=$(RIE) ./scripts/with-moto $(GO) test -count=1 ./...

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
