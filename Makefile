# Switchboard. `make run` builds and starts the app; `make test` runs every test.

GO      ?= go
BIN     := bin
# One version for every build and artefact: `switchboard version`, the
# package names, the .deb's Version, the installer's version resource.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all doctor doctor-run build window tray gui-deps run test vet fmt-check node-deps frontend frontend-test fuzz \
	test-windows test-windows-app dist dist-test clean bench-gateway bench-serve screenshots

# The official TypeScript SDK client, server-everything and the official
# MCP conformance suite, for the gateway's independent-client tests and its
# conformance test (app/gateway/conformance_test.go; pinned in
# package-lock.json).
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
# What make run and make test need, checked before they start: every
# missing prerequisite at once, with its Debian package (build/doctor.sh).
doctor:
	@sh build/doctor.sh test
doctor-run:
	@sh build/doctor.sh run

# LISTEN=127.0.0.1:7392 listens elsewhere than config.json's "listen" (the
# default 127.0.0.1:7391 may be taken).
LISTEN ?=
RUN_FLAGS := $(if $(LISTEN),--listen $(LISTEN))

run: doctor-run build window tray
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] || [ "$$(uname)" = Darwin ]; then \
	  echo "starting Switchboard in the tray (Quit from its menu stops every server)"; \
	  exec ./$(BIN)/switchboard-tray $(RUN_FLAGS); \
	else \
	  echo "no display: starting the daemon without the tray; \`./$(BIN)/switchboard open\` signs a browser in to the dashboard"; \
	  exec ./$(BIN)/switchboard serve $(RUN_FLAGS); \
	fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# vet for every OS Switchboard ships on; the core must build without cgo.
# staticcheck (pinned by go.mod's tool directive) on the core and on the
# tray's and the window's tagged files; the SDK deprecations the gateway
# still relays are each marked where used (//lint:ignore SA1019 <reason>).
STATICCHECK := $(GO) tool staticcheck
vet:
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	CGO_ENABLED=0 $(GO) build ./...
	$(GO) vet -tags tray ./app/tray ./app/cli .
	$(GO) vet -tags $(GUI_TAGS) ./app/window ./app/cli .
	GOOS=windows $(GO) vet -tags tray ./app/tray ./app/cli
	GOOS=windows $(GO) vet -tags desktop,production ./app/window ./app/cli
	CGO_ENABLED=0 $(STATICCHECK) ./...
	$(STATICCHECK) -tags tray ./app/tray ./app/cli .
	$(STATICCHECK) -tags $(GUI_TAGS) ./app/window ./app/cli .

$(NODE_HARNESS)/node_modules/.package-lock.json: $(NODE_HARNESS)/package-lock.json
	cd $(NODE_HARNESS) && npm ci --no-audit --no-fund

node-deps: $(NODE_HARNESS)/node_modules/.package-lock.json

# The Go tests build the binary with the dashboard (the browser walk drives it).
# SWITCHBOARD_REQUIRE_ALL: a missing tool (npm, Xvfb, the GUI libraries)
# fails the tests that need it instead of skipping them.
# The gateway's tests run a second time (the TypeScript-SDK tests and the
# conformance suite, TestConformanceSuite, among them) with its fast path
# off: the go-sdk path stays complete and selectable. That pass is not
# under -race (about 50 s less, of 210): the first pass drives both paths
# under it (TestFastPathMatchesTheSDKPath, the tests that pick a path).
# The dashboard walk times the page during a 300 calls/s burst (no task
# over 200 ms of the page's main-thread CPU, no nav click over 300 ms of
# it, and looser wall-clock bounds), so it runs alone, after the rest: on
# 2 cores, other packages' tests running beside it would take the
# renderer's core and the wall-clock bounds would measure them.
test: doctor fmt-check vet node-deps frontend frontend-test
	SWITCHBOARD_REQUIRE_ALL=1 $(GO) test -race -count=1 -timeout 20m -skip '^TestDashboardInChromium$$' ./...
	SWITCHBOARD_FASTPATH=0 SWITCHBOARD_REQUIRE_ALL=1 $(GO) test -count=1 -timeout 10m ./app/gateway/
	SWITCHBOARD_REQUIRE_ALL=1 $(GO) test -race -count=1 -timeout 10m -run '^TestDashboardInChromium$$' ./app/e2e/

# The README's screenshots (docs/screenshots): the dashboard walk in
# Chromium (in docs/screenshots/dashboard, each named by what it shows) and
# the window's and tray's tests under Xvfb, told to leave their
# screenshots there (make test leaves them in temporary directories, so a
# test run changes nothing in the tree). Commit what changed.
screenshots: node-deps frontend
	SWITCHBOARD_SCREENSHOTS=$(CURDIR)/docs/screenshots SWITCHBOARD_REQUIRE_ALL=1 $(GO) test -count=1 -timeout 10m \
		-run '^(TestDashboardInChromium|TestWindowUnderXvfb|TestTrayUnderXvfb)$$' ./app/e2e/ ./app/window/ ./app/tray/

# The gateway benchmark of issue 18 (docs/benchmarks.md): the floor (raw
# stdio), the gateway with its fast path on and off, and with history off,
# interleaved, 3 repeats; prints a markdown table. Not part of `make test`.
# SWITCHBOARD_BENCH_REPEATS and SWITCHBOARD_BENCH_WINDOW (default 2s) tune it.
bench-gateway:
	$(GO) test -count=1 -run '^$$' -bench '^BenchmarkGatewayTable$$' -benchtime 1x -timeout 15m ./app/gateway/

# The daemon benchmark of issue 33 (docs/benchmarks.md): `switchboard serve`
# as built by `make build` (history on, a pool of 4 echo servers), beside
# the stdio floor, the gateway alone and TBXark's mcp-proxy (the peer in
# ../shared/bench/peers, when there), interleaved, 3 repeats; prints a
# markdown table. Not part of `make test`. SWITCHBOARD_BENCH_REPEATS,
# SWITCHBOARD_BENCH_WINDOW, _ROWS, _TARGETS and _PROFILE (a directory for
# serve-cpu.pprof and serve-allocs.pprof) tune it.
bench-serve: build
	SWITCHBOARD_BENCH_SERVE=$(abspath $(BIN))/switchboard \
		$(GO) test -count=1 -run '^$$' -bench '^BenchmarkServeTable$$' -benchtime 1x -timeout 15m ./app/gateway/

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
	./app/clients:FuzzEditGoose \
	./app/clients:FuzzEditVibe \
	./app/history:FuzzCallQuery \
	./app/history:FuzzRedactJSON \
	./app/redact:FuzzValues \
	./internal/mcpscan:FuzzPlainToolResult \
	./internal/mcpscan:FuzzScanMessage \
	./internal/mcpscan:FuzzScanToolParams \
	./internal/mcpscan:FuzzScanResponse \
	./internal/mcpscan:FuzzValidJSON \
	./internal/mcpscan:FuzzJSONRPCProblem \
	./app/catalog:FuzzRegistryJSON \
	./app/toolsearch:FuzzMatchExpression

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "== $$name ($$pkg), $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -parallel $(FUZZPARALLEL) $$pkg; \
	done

# The Windows test lane: the core packages' tests cross-compiled and run
# under Wine (wine64, gcc-mingw-w64-x86-64; .ci/run installs them). The
# tests Wine cannot run are listed, with the reason, in build/wine/skip.txt.
test-windows:
	./build/wine/test-windows.sh

# The Windows app as a user gets it, under Wine and Xvfb with a tray host:
# make dist's installer installed silently into a fresh prefix, the tray
# started from its Start-menu shortcut, screenshots of its icon and menu
# (bin/wine-app/screenshots; SCREENSHOTS=docs/screenshots updates the
# README's windows-tray-*.png), Claude Desktop's and Cursor's
# entries written and used, the window's browser fallback, Quit and the
# uninstaller leaving no process (build/wine/test-windows-app.sh).
test-windows-app: node-deps
	VERSION='$(shell cat $(DIST)/VERSION 2>/dev/null)' SCREENSHOTS='$(SCREENSHOTS)' ./build/wine/test-windows-app.sh

# Installable artefacts for every platform, into dist/ (see README "Install"):
#   Linux:   a .deb (nfpm, pinned in build/tools/go.mod) and a .tar.gz,
#            both with the three binaries, the .desktop launcher and the icon
#   Windows: a per-user NSIS installer (Debian's makensis) and a .zip
#   macOS:   the headless binary for arm64 and amd64 (the .app and .dmg need
#            a Mac: .github/workflows/release.yml)
# DEB_VERSION is VERSION as dpkg accepts it (it must start with a digit);
# WIN_VERSION the a.b.c.d the installer's version resource requires.
DIST        := dist
STAGE       := $(DIST)/stage
DEB_VERSION = $(shell echo '$(VERSION)' | sed -e 's/^v\([0-9]\)/\1/' -e '/^[0-9][0-9]*\./!s/^/0.0.0~/')
WIN_VERSION = $(shell echo '$(VERSION)' | sed -n 's/^v\{0,1\}\([0-9]*\)\.\([0-9]*\)\.\([0-9]*\).*/\1.\2.\3.0/p' | grep . || echo 0.0.0.0)
NFPM        := $(GO) tool -modfile=build/tools/go.mod nfpm
GOBUILD     := $(GO) build -trimpath

dist: frontend gui-deps
	rm -rf $(DIST) && mkdir -p $(STAGE)/linux $(STAGE)/windows $(STAGE)/darwin_arm64 $(STAGE)/darwin_amd64
	@echo "dist: version $(VERSION) (deb $(DEB_VERSION), windows $(WIN_VERSION))"
	CGO_ENABLED=0 $(GOBUILD) -ldflags "$(LDFLAGS)" -o $(STAGE)/linux/switchboard .
	$(GOBUILD) -tags $(GUI_TAGS) -ldflags "$(LDFLAGS)" -o $(STAGE)/linux/switchboard-window .
	$(GOBUILD) -tags tray -ldflags "$(LDFLAGS)" -o $(STAGE)/linux/switchboard-tray .
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GOBUILD) -ldflags "$(LDFLAGS)" -o $(STAGE)/windows/switchboard.exe .
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GOBUILD) -tags tray -ldflags "$(LDFLAGS) -H windowsgui" -o $(STAGE)/windows/switchboard-tray.exe .
	GOOS=windows GOARCH=amd64 CGO_ENABLED=0 $(GOBUILD) -tags desktop,production -ldflags "$(LDFLAGS) -H windowsgui" -o $(STAGE)/windows/switchboard-window.exe .
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GOBUILD) -ldflags "$(LDFLAGS)" -o $(STAGE)/darwin_arm64/switchboard .
	GOOS=darwin GOARCH=amd64 CGO_ENABLED=0 $(GOBUILD) -ldflags "$(LDFLAGS)" -o $(STAGE)/darwin_amd64/switchboard .
	# Linux: .deb and .tar.gz
	DEB_VERSION='$(DEB_VERSION)' STAGE='$(STAGE)/linux' $(NFPM) package -f build/linux/nfpm.yaml -p deb \
	  -t $(DIST)/switchboard_$(VERSION)_linux_amd64.deb
	cp build/linux/switchboard.desktop README.md $(STAGE)/linux/ && cp build/appicon.png $(STAGE)/linux/switchboard.png
	tar -C $(STAGE)/linux --owner=0 --group=0 --transform 's,^\.,switchboard_$(VERSION)_linux_amd64,' \
	  -czf $(DIST)/switchboard_$(VERSION)_linux_amd64.tar.gz .
	# Windows: per-user NSIS installer and .zip
	makensis -V2 -NOCD -DVERSION='$(VERSION)' -DVIVERSION='$(WIN_VERSION)' -DSTAGE='$(STAGE)/windows' \
	  -DOUTFILE='$(DIST)/switchboard_$(VERSION)_windows_amd64_setup.exe' build/windows/installer.nsi
	cp README.md $(STAGE)/windows/ && cp build/windows/icon.ico $(STAGE)/windows/switchboard.ico
	cd $(STAGE)/windows && zip -q -X -r ../../switchboard_$(VERSION)_windows_amd64.zip .
	# macOS: the headless binary per architecture (.app/.dmg: release.yml on a Mac)
	for a in arm64 amd64; do \
	  cp README.md $(STAGE)/darwin_$$a/ && \
	  tar -C $(STAGE)/darwin_$$a --owner=0 --group=0 --transform "s,^\.,switchboard_$(VERSION)_darwin_$$a," \
	    -czf $(DIST)/switchboard_$(VERSION)_darwin_$$a.tar.gz . || exit 1; \
	done
	rm -rf $(STAGE)
	echo '$(VERSION)' > $(DIST)/VERSION
	cd $(DIST) && sha256sum * > SHA256SUMS && cat SHA256SUMS

# Checks what `make dist` built: contents of every archive, the .deb
# installed with dpkg (as root) and run from /usr/bin, then removed, and the
# NSIS installer run under Wine. Needs what .ci/run installs. The version
# checked is the one make dist stamped (dist/VERSION), even if HEAD moved.
dist-test: VERSION = $(shell cat $(DIST)/VERSION 2>/dev/null || echo 'missing: run make dist')
dist-test:
	VERSION='$(VERSION)' DEB_VERSION='$(DEB_VERSION)' ./build/dist-test.sh

clean:
	rm -rf $(BIN) $(DIST)
