# Switchboard. `make run` builds and starts the app; `make test` runs every test.

GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build window tray gui-deps run test vet fmt-check node-deps frontend frontend-test fuzz clean

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

# The desktop builds (see ../shared/ARCHITECTURE.md): the window links Wails
# and WebKitGTK, the tray links systray; neither links the other.
GUI_TAGS := desktop,production,webkit2_41
GUI_PKGS := libgtk-3-dev libwebkit2gtk-4.1-dev libayatana-appindicator3-dev pkg-config

# On Debian/Ubuntu, install the GUI libraries the desktop builds need.
gui-deps:
	@if command -v dpkg >/dev/null 2>&1; then \
	  missing=""; for p in $(GUI_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    echo "installing the GUI libraries the window and tray builds need:$$missing"; \
	    sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
	    $$sudo apt-get update -qq && $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	  fi; \
	fi

window: frontend gui-deps
	$(GO) build -tags $(GUI_TAGS) -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/switchboard-window .

tray: frontend gui-deps
	$(GO) build -tags tray -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/switchboard-tray .

# The app: the tray (the daemon inside it) where there is a display, else
# the daemon alone, which prints the dashboard's address.
run: build window tray
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] || [ "$$(uname)" = Darwin ]; then \
	  echo "starting Switchboard in the tray (Quit from its menu stops every server)"; \
	  exec ./$(BIN)/switchboard-tray; \
	else \
	  echo "no display: starting the daemon without the tray; \`./$(BIN)/switchboard open\` signs a browser in to the dashboard"; \
	  exec ./$(BIN)/switchboard serve; \
	fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# vet for every OS Switchboard ships on; the core must build without cgo.
vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...
	$(GO) vet -tags tray ./app/tray .
	$(GO) vet -tags $(GUI_TAGS) ./app/window .
	GOOS=windows $(GO) vet -tags tray ./app/tray
	GOOS=windows $(GO) vet -tags desktop,production ./app/window

$(NODE_HARNESS)/node_modules/.package-lock.json: $(NODE_HARNESS)/package-lock.json
	cd $(NODE_HARNESS) && npm ci --no-audit --no-fund

node-deps: $(NODE_HARNESS)/node_modules/.package-lock.json

# The Go tests build the binary with the dashboard (the browser walk drives it).
# SWITCHBOARD_REQUIRE_ALL: a missing tool (npm, Xvfb, the GUI libraries)
# fails the tests that need it instead of skipping them.
test: fmt-check vet node-deps frontend frontend-test
	SWITCHBOARD_REQUIRE_ALL=1 $(GO) test -race -count=1 -timeout 20m ./...

# Native Go fuzzing of every parser of outside input, one target after
# another, each for FUZZTIME with FUZZPARALLEL workers. Each target's seed
# corpus (testdata/fuzz/<target>/) also runs under plain `go test`; a
# failure found here is written there as a new seed: fix the bug, keep it.
FUZZTIME     ?= 30s
FUZZPARALLEL ?= 1
FUZZ_TARGETS := \
	./app/config:FuzzParse \
	./app/clients:FuzzEditJSON \
	./app/clients:FuzzEditTOML \
	./app/clients:FuzzEditYAML \
	./app/history:FuzzCallQuery \
	./app/history:FuzzRedactJSON \
	./app/redact:FuzzValues \
	./app/gateway:FuzzPlainToolResult \
	./app/catalog:FuzzRegistryJSON

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "== $$name ($$pkg), $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -parallel $(FUZZPARALLEL) $$pkg; \
	done

clean:
	rm -rf $(BIN)
