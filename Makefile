# make test: everything CI runs — formatting, vet, staticcheck, the race-enabled suite on
# the embedded DynamoDB (minidyn), then the suites again on a moto server started on a
# free 127.0.0.1 port and always stopped. The Lambda Runtime Interface Emulator is
# installed into bin/ for the test that runs the real bootstrap under it.
GO  ?= go
BIN := $(CURDIR)/bin
RIE := $(BIN)/aws-lambda-rie
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d

.PHONY: test lint test-minidyn test-moto tools soak

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

# make soak: not part of `make test` or CI. SOAK_MOVEMENTS movements (100,000 by default;
# set fewer for a quick run) through the consumer with every kind of fault, on a moto
# server of its own; prints the violations (must be 0) and the throughput.
SOAK_MOVEMENTS ?= 100000

soak:
	LEDGER_SOAK_MOVEMENTS=$(SOAK_MOVEMENTS) ./scripts/with-moto $(GO) test -tags soak -run '^TestSoak$$' -count=1 -timeout 90m -v ./internal/chaos
