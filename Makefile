# The test command the README and CI use is `make test`.
GO      ?= go
BIN     := bin
PKGS    := ./...

.PHONY: all build test generate check-generated bench lint fmt clean

all: build

build:
	$(GO) build -o $(BIN)/ ./cmd/...

test:
	$(GO) test -count=1 $(PKGS)

generate:
	$(GO) generate $(PKGS)

# Fails when go generate changes anything: generated code must be committed fresh.
check-generated:
	$(GO) generate $(PKGS)
	git diff --exit-code
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
