package main

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/switchboardhq/switchboard"

// TestDependencies keeps the dependency rules of ARCHITECTURE.md true: the
// supervisor knows nothing of the app or of any GUI library, only app/window
// imports Wails and only app/tray imports systray, in every build variant.
func TestDependencies(t *testing.T) {
	for _, tags := range []string{"", "tray", "desktop,production,webkit2_41"} {
		t.Run("tags="+tags, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-tags", tags, "-f",
				"{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}", "./...")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, stderr.String())
			}
			sc := bufio.NewScanner(bytes.NewReader(out))
			sc.Buffer(nil, 1<<20)
			checked := 0
			for sc.Scan() {
				pkg, rest, _ := strings.Cut(sc.Text(), "|")
				imports, deps, _ := strings.Cut(rest, "|")
				checked++
				for _, problem := range dependencyProblems(pkg, strings.Fields(imports), strings.Fields(deps)) {
					t.Error(problem)
				}
			}
			if checked < 5 {
				t.Fatalf("go list returned %d packages; the check saw nothing", checked)
			}
		})
	}
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
	}
	for _, tt := range tests {
		if got := dependencyProblems(tt.pkg, tt.imports, tt.deps); len(got) != tt.wantProblems {
			t.Errorf("dependencyProblems(%s) = %q, want %d problem(s)", tt.pkg, got, tt.wantProblems)
		}
	}
}
