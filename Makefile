# Switchboard. `make run` builds and starts the app; `make test` runs every test.

GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build run test vet fmt-check clean

all: build

# The headless build: pure Go, no GUI libraries needed.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/switchboard .

run: build
	./$(BIN)/switchboard serve

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# vet for every OS Switchboard ships on; the core must build without cgo.
vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...

test: fmt-check vet
	$(GO) test -race -count=1 -timeout 20m ./...

clean:
	rm -rf $(BIN)
