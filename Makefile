# The test command the README and CI use is `make test`.
GO      ?= go
BIN     := bin
PKGS    := ./...

.PHONY: all build test generate check-generated bench bench-oca lint fmt clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# Tests run against a throwaway PostgreSQL (scripts/with-postgres.sh); without
# one the OCA integration tests skip, and the script says so loudly.
test:
	scripts/with-postgres.sh $(GO) test -count=1 $(PKGS)

# The OCA store's benchmarks: pgx round trips against psql processes, one run.
bench-oca:
	scripts/with-postgres.sh $(GO) test -run '^$$' -bench . -benchmem ./ponder/oca/pgstore/

generate:
	$(GO) generate $(PKGS)

# Fails when go generate changes anything: generated code must be committed fresh.
check-generated:
	$(GO) generate $(PKGS)
	git diff --exit-code -- . ':!go.sum'
	@test -z "$$(git status --porcelain --untracked-files=all -- '*zz_generated*' 'vectors/*.json')" || { echo "go generate created untracked files"; exit 1; }

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf $(BIN)
