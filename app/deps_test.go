// Package app holds no code of its own: it is the directory of the
// daemon's packages, and this test keeps the import rules between them.
package app

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/switchboardhq/switchboard"

// TestDependencies keeps the dependency rules of ARCHITECTURE.md true, in
// every build variant: the supervisor knows nothing of the app or of any
// GUI library, only app/window imports Wails and only app/tray imports
// systray, the gateway knows no SQLite (app/history, app/toolsearch), the
// history knows no supervisor, the daemon's clients (app/cli, app/tray,
// app/window) do not import its internals, with no exception, the stdio
// bridge (app/bridge) links of the module only the API's client and
// contract and internal/mcpreq (a leaf: nothing of the module), and the
// leaves (app/api/wire, app/installable, internal/mcpscan) import only the
// standard library. It lists the whole module from wherever go test runs.
func TestDependencies(t *testing.T) {
	for _, tags := range []string{"", "tray", "desktop,production,webkit2_41"} {
		t.Run("tags="+tags, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-tags", tags, "-f", listFormat, module+"/...")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, stderr.String())
			}
			problems, checked := listProblems(out)
			for _, problem := range problems {
				t.Error(problem)
			}
			if checked < 5 {
				t.Fatalf("go list returned %d packages; the check saw nothing", checked)
			}
		})
	}
}

// listFormat makes go list write a package per line: its path, its
// imports and its dependencies, as listProblems reads them.
const listFormat = "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}"

// listProblems checks every package of the go list output out (in
// listFormat) and returns the broken rules and how many packages it saw.
func listProblems(out []byte) (problems []string, checked int) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		pkg, rest, _ := strings.Cut(sc.Text(), "|")
		imports, deps, _ := strings.Cut(rest, "|")
		checked++
		problems = append(problems, dependencyProblems(pkg, strings.Fields(imports), strings.Fields(deps))...)
	}
	return problems, checked
}

func dependencyProblems(pkg string, imports, deps []string) []string {
	var problems []string
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	inSupervisor := rel == "supervisor" || strings.HasPrefix(rel, "supervisor/")
	if inSupervisor {
		for _, d := range deps {
			switch {
			case strings.HasPrefix(d, module+"/app"):
				problems = append(problems, pkg+" depends on "+d+": the supervisor must not know the app")
			case isWails(d), isSystray(d):
				problems = append(problems, pkg+" depends on GUI library "+d)
			}
		}
	}
	if within(rel, "app/gateway") {
		for _, d := range deps {
			if within(strings.TrimPrefix(d, module+"/"), "app/history") {
				problems = append(problems, pkg+" depends on "+d+": the gateway records through a small interface and knows no SQLite store")
			}
			if d == "modernc.org/sqlite" || within(strings.TrimPrefix(d, module+"/"), "app/toolsearch") {
				problems = append(problems, pkg+" depends on "+d+": the gateway searches tools through a small interface (ToolIndex) and knows no SQLite")
			}
		}
	}
	// The history stores what the daemon gives it in the app's own types
	// (app/record): it knows nothing of the supervisor, whose events the
	// daemon converts.
	if within(rel, "app/history") {
		for _, d := range deps {
			if within(strings.TrimPrefix(d, module+"/"), "supervisor") {
				problems = append(problems, pkg+" depends on "+d+": history stores the app's events (app/record), the daemon converts the supervisor's")
			}
		}
	}
	if client := daemonClient(rel); client != "" {
		for _, imp := range imports {
			if imp == module+"/app/api" {
				problems = append(problems, pkg+" imports "+imp+", the daemon's server: "+client+" uses its client (app/api/client) and contract (app/api/wire)")
				continue
			}
			if daemonInternal(imp) == "" {
				continue
			}
			problems = append(problems, pkg+" imports "+imp+": "+client+" talks to the daemon only through its API (app/api/client)")
		}
	}
	// The API's contract imports nothing but the standard library, and its
	// client nothing of the module but the contract: a program that calls
	// the daemon does not link the server (the catalog's installer, the
	// clients' config editor) or the daemon's internals.
	if within(rel, "app/api/wire") {
		for _, d := range deps {
			if !isStd(d) {
				problems = append(problems, pkg+" depends on "+d+": the API's contract imports only the standard library")
			}
		}
	}
	// The catalog's install and version rules are a leaf that the catalog
	// and the CLI share: it imports only the standard library.
	if within(rel, "app/installable") {
		for _, d := range deps {
			if !isStd(d) {
				problems = append(problems, pkg+" depends on "+d+": app/installable, the catalog's rules the CLI shares, imports only the standard library")
			}
		}
	}
	// The stdio bridge is a client of the daemon's endpoint: of the module
	// it may link only the API's client and contract, and internal/mcpreq,
	// the leaf that reads a go-sdk request's params and client the same way
	// for the bridge and the gateway (one rule, not a copy in each). What
	// serves its own client (the gateway's Relay) it is given.
	if within(rel, "app/bridge") {
		for _, d := range deps {
			if inModule := d == module || strings.HasPrefix(d, module+"/"); inModule && !within(strings.TrimPrefix(d, module+"/"), "app/api/client") &&
				!within(strings.TrimPrefix(d, module+"/"), "app/api/wire") && !within(strings.TrimPrefix(d, module+"/"), "internal/mcpreq") {
				problems = append(problems, pkg+" depends on "+d+": the bridge links nothing of the module but the API's client and contract (app/api/client, app/api/wire) and internal/mcpreq")
			}
		}
	}
	// What the bridge and the gateway both read of a go-sdk request is a
	// leaf: it links nothing of the module (the go-sdk, which the bridge
	// links anyway, and the standard library are all it imports), so
	// allowing it to the bridge lets nothing else in.
	if within(rel, "internal/mcpreq") {
		for _, d := range deps {
			if d == module || strings.HasPrefix(d, module+"/") {
				problems = append(problems, pkg+" depends on "+d+": internal/mcpreq, what the bridge and the gateway share, links nothing of the module")
			}
		}
	}
	// The parsers of outside input that read MCP messages as bytes are a
	// leaf that the supervisor (which must not know the app) and the
	// gateway share: they import only the standard library.
	if within(rel, "internal/mcpscan") {
		for _, d := range deps {
			if !isStd(d) {
				problems = append(problems, pkg+" depends on "+d+": internal/mcpscan, the byte parsers the supervisor and the gateway share, imports only the standard library")
			}
		}
	}
	if within(rel, "app/api/client") {
		for _, d := range deps {
			if inModule := d == module || strings.HasPrefix(d, module+"/"); inModule && !within(strings.TrimPrefix(d, module+"/"), "app/api/wire") {
				problems = append(problems, pkg+" depends on "+d+": the API's client links nothing of the daemon but the contract (app/api/wire)")
			}
		}
	}
	for _, imp := range imports {
		// history stores; it knows neither the gateway nor HTTP.
		if within(rel, "app/history") && (imp == "net/http" || imp == module+"/app/gateway" || imp == module+"/app/api") {
			problems = append(problems, pkg+" imports "+imp+": history knows no HTTP and no gateway")
		}
		if isWails(imp) && !within(rel, "app/window") {
			problems = append(problems, pkg+" imports "+imp+": only app/window may import Wails")
		}
		if isSystray(imp) && !within(rel, "app/tray") {
			problems = append(problems, pkg+" imports "+imp+": only app/tray may import systray")
		}
	}
	return problems
}

// daemonClients talk to the daemon over its local API, never by importing
// what the daemon is made of.
var daemonClients = []string{"app/cli", "app/tray", "app/window"}

// daemonInternals are the daemon's parts its clients must not import.
var daemonInternals = []string{"app/history", "app/supervisor", "supervisor", "app/events", "app/catalog", "app/gateway"}

// daemonClient is the client app/cli, app/tray or app/window that rel is
// (or is inside), or "".
func daemonClient(rel string) string {
	for _, c := range daemonClients {
		if within(rel, c) {
			return c
		}
	}
	return ""
}

// daemonInternal is the daemon internal that the import path imp is (or is
// inside), or "".
func daemonInternal(imp string) string {
	rel, ok := strings.CutPrefix(imp, module+"/")
	if !ok {
		return ""
	}
	for _, in := range daemonInternals {
		if within(rel, in) {
			return in
		}
	}
	return ""
}

// isStd reports whether the import path p is of the standard library: its
// first element has no dot.
func isStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

func isWails(p string) bool   { return strings.HasPrefix(p, "github.com/wailsapp/wails") }
func isSystray(p string) bool { return strings.HasPrefix(p, "github.com/getlantern/systray") }

func within(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// TestDependencyRules checks the rule checker itself on cases the tree does
// not (yet) contain.
func TestDependencyRules(t *testing.T) {
	tests := []struct {
		pkg           string
		imports, deps []string
		wantProblems  int
	}{
		{module + "/supervisor", nil, []string{"fmt", module + "/app/config"}, 1},
		{module + "/supervisor/testmcp", nil, []string{"github.com/wailsapp/wails/v2/pkg/runtime"}, 1},
		{module + "/app/window", []string{"github.com/wailsapp/wails/v2"}, nil, 0},
		{module + "/app/api", []string{"github.com/wailsapp/wails/v2"}, nil, 1},
		{module + "/app/tray", []string{"github.com/getlantern/systray"}, nil, 0},
		{module, []string{"github.com/getlantern/systray"}, nil, 1},
		{module + "/supervisor", []string{"os/exec"}, []string{"os/exec", "github.com/shirou/gopsutil/v3/process"}, 0},
		{module + "/app/history", []string{"net/http"}, nil, 1},
		{module + "/app/history", []string{module + "/app/gateway"}, nil, 1},
		{module + "/app/history", []string{module + "/app/record", "database/sql"}, nil, 0},
		// The history knows no supervisor, directly or not.
		{module + "/app/history", []string{module + "/supervisor"}, []string{module + "/supervisor", module + "/supervisor/confine"}, 2},
		{module + "/app/history/x", nil, []string{module + "/app/record", module + "/supervisor"}, 1},
		{module + "/app/history", []string{module + "/app/record"}, []string{module + "/app/record", module + "/supervisorx"}, 0},
		// The gateway never depends on the history, directly or not.
		{module + "/app/gateway", []string{module + "/app/record"}, []string{module + "/app/record", module + "/supervisor"}, 0},
		{module + "/app/gateway/x", nil, []string{module + "/app/record", module + "/app/history"}, 1},
		// The daemon's clients import the API, not its internals.
		{module + "/app/window", []string{module + "/app/api/client", module + "/app/tokens"}, nil, 0},
		{module + "/app/window", []string{module + "/app/api", module + "/app/tokens"}, nil, 1},
		{module + "/app/window", []string{module + "/app/history"}, nil, 1},
		{module + "/app/window", []string{module + "/app/gateway", module + "/supervisor/testmcp", module + "/app/supervisor"}, nil, 3},
		{module + "/app/tray", []string{module + "/app/catalog"}, nil, 1},
		{module + "/app/tray", []string{module + "/app/events", module + "/app/history", module + "/supervisor"}, nil, 3},
		{module + "/app/tray", []string{module + "/app/api/client", module + "/app/api/wire", module + "/app/autostart"}, nil, 0},
		{module + "/app/tray", []string{module + "/app/api"}, nil, 1},
		{module + "/app/cli", []string{module + "/app/daemon", module + "/app/bridge", module + "/app/api/client", module + "/app/installable"}, nil, 0},
		{module + "/app/cli", []string{module + "/app/gateway"}, nil, 1}, // no exception
		{module + "/app/cli", []string{module + "/app/catalog"}, nil, 1},
		{module + "/app/installable", nil, []string{"fmt", "net/url"}, 0},
		{module + "/app/installable", nil, []string{"fmt", module + "/app/config"}, 1},
		{module + "/app/cli", []string{module + "/app/history", module + "/app/events", module + "/supervisor"}, nil, 3},
		// The bridge links of the module only the API's client and contract.
		{module + "/app/bridge", nil, []string{"net/http", "github.com/modelcontextprotocol/go-sdk/mcp", module + "/app/api/client", module + "/app/api/wire"}, 0},
		{module + "/app/bridge", nil, []string{"net/http", module + "/app/gateway", module + "/supervisor"}, 2},
		{module + "/app/bridge/x", nil, []string{module + "/app/tokens", module + "/app/api/wire"}, 1},
		{module + "/app/bridgex", nil, []string{module + "/app/gateway"}, 0}, // prefixes are not parents
		{module + "/app/gateway", []string{module + "/app/bridge"}, []string{module + "/app/bridge"}, 0},
		// internal/mcpreq, which the bridge shares with the gateway, is a leaf.
		{module + "/app/bridge", nil, []string{"github.com/modelcontextprotocol/go-sdk/mcp", module + "/internal/mcpreq", module + "/app/api/client"}, 0},
		{module + "/app/bridge", nil, []string{module + "/internal/mcpscan"}, 1},
		{module + "/internal/mcpreq", nil, []string{"reflect", "github.com/modelcontextprotocol/go-sdk/mcp", "golang.org/x/oauth2"}, 0},
		{module + "/internal/mcpreq", nil, []string{"github.com/modelcontextprotocol/go-sdk/mcp", module + "/app/record"}, 1},
		// The byte parsers import only std; the supervisor may use them.
		{module + "/internal/mcpscan", nil, []string{"bytes", "encoding/json", "unicode/utf8"}, 0},
		{module + "/internal/mcpscan", nil, []string{"bytes", "github.com/modelcontextprotocol/go-sdk/jsonrpc", module + "/app/record"}, 2},
		{module + "/supervisor", nil, []string{"bytes", module + "/internal/mcpscan"}, 0},
		// The API's client links only the contract; the contract only std.
		{module + "/app/api/client", nil, []string{"net/http", module + "/app/api/wire"}, 0},
		{module + "/app/api/client", nil, []string{module + "/app/api/wire", module + "/app/api", module + "/app/catalog/install"}, 2},
		{module + "/app/api/wire", nil, []string{"encoding/json", "time"}, 0},
		{module + "/app/api/wire", nil, []string{"time", module + "/app/config", "github.com/google/uuid"}, 2},
		{module + "/app/cli", []string{module + "/app/gatewayx", module + "/supervisorx"}, nil, 0}, // prefixes are not parents
		{module + "/app/api", []string{module + "/app/history", module + "/app/gateway"}, nil, 0},  // the server side may
	}
	for _, tt := range tests {
		if got := dependencyProblems(tt.pkg, tt.imports, tt.deps); len(got) != tt.wantProblems {
			t.Errorf("dependencyProblems(%s) = %q, want %d problem(s)", tt.pkg, got, tt.wantProblems)
		}
	}
}

// TestDependencyCheckerReports feeds the checker a package list, as go
// list writes it, with deliberate violations next to allowed imports: each
// violation is reported, naming its package and import, and nothing else.
func TestDependencyCheckerReports(t *testing.T) {
	lines := []string{
		// Violations.
		module + "/app/tray|" + module + "/app/history " + module + "/app/api/client|" + module + "/app/history",
		module + "/app/gateway|" + module + "/app/record|" + module + "/app/record " + module + "/app/history",
		module + "/supervisor|os/exec|os/exec " + module + "/app/config",
		module + "/app/api/client|" + module + "/app/api/wire|" + module + "/app/api/wire " + module + "/app/api " + module + "/app/clients",
		module + "/app/history|" + module + "/app/record|" + module + "/app/record " + module + "/supervisor",
		module + "/app/cli|" + module + "/app/gateway|" + module + "/app/gateway",
		module + "/app/bridge|" + module + "/app/api/client|" + module + "/app/api/client " + module + "/app/gateway",
		// Allowed.
		module + "/app/window|" + module + "/app/api/client " + module + "/app/tokens|" + module + "/app/api/client " + module + "/app/api/wire",
		module + "/app/api|" + module + "/app/history " + module + "/app/gateway|" + module + "/app/history " + module + "/supervisor",
		module + "/app/cli|" + module + "/app/daemon " + module + "/app/bridge|" + module + "/app/daemon " + module + "/app/gateway " + module + "/app/bridge",
		module + "/app/api/wire|time|time encoding/json",
	}
	problems, checked := listProblems([]byte(strings.Join(lines, "\n") + "\n"))
	if checked != len(lines) {
		t.Fatalf("checked %d packages, want %d", checked, len(lines))
	}
	want := []string{
		module + "/app/tray imports " + module + "/app/history",
		module + "/app/gateway depends on " + module + "/app/history",
		module + "/supervisor depends on " + module + "/app/config",
		module + "/app/api/client depends on " + module + "/app/api:",
		module + "/app/api/client depends on " + module + "/app/clients",
		module + "/app/history depends on " + module + "/supervisor",
		module + "/app/cli imports " + module + "/app/gateway",
		module + "/app/bridge depends on " + module + "/app/gateway",
	}
	for _, w := range want {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.HasPrefix(p, w) }) {
			t.Errorf("no problem reported for %q; got %q", w, problems)
		}
	}
	if len(problems) != len(want) {
		t.Errorf("got %d problems, want %d (allowed imports reported?):\n%s", len(problems), len(want), strings.Join(problems, "\n"))
	}
}
