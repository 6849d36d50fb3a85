# Switchboard. `make run` builds and starts the app; `make test` runs every test.

GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build run test vet fmt-check node-deps frontend frontend-test clean

# The official TypeScript SDK client and server-everything, for the
# gateway's independent-client tests (pinned in package-lock.json).
NODE_HARNESS := app/gateway/testdata/node

all: build

# The dashboard (frontend/, Vite + Svelte), built into frontend/dist and
# embedded into the binary.
FRONTEND := frontend

$(FRONTEND)/node_modules/.package-lock.json: $(FRONTEND)/package-lock.json
	cd $(FRONTEND) && npm ci --no-audit --no-fund

frontend: $(FRONTEND)/node_modules/.package-lock.json
	cd $(FRONTEND) && npm run build

# Type checks and the Vitest unit tests of the dashboard.
frontend-test: $(FRONTEND)/node_modules/.package-lock.json
	cd $(FRONTEND) && npm run check && npm test

# The headless build: pure Go, no GUI libraries needed, dashboard included.
build: frontend
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

$(NODE_HARNESS)/node_modules/.package-lock.json: $(NODE_HARNESS)/package-lock.json
	cd $(NODE_HARNESS) && npm ci --no-audit --no-fund

node-deps: $(NODE_HARNESS)/node_modules/.package-lock.json

# The Go tests build the binary with the dashboard (the browser walk drives it).
test: fmt-check vet node-deps frontend frontend-test
	$(GO) test -race -count=1 -timeout 20m ./...

clean:
	rm -rf $(BIN)
