package catalog

import (
	"errors"
	"strings"
	"testing"
)

func TestRunnable(t *testing.T) {
	stdio := Transport{Type: "stdio"}
	sha := strings.Repeat("ab", 32)
	tests := []struct {
		name    string
		pkg     Package
		wantErr string // "" means runnable
	}{
		{"npm", Package{RegistryType: RegistryNPM, Identifier: "@x/y", Version: "1.0.0", Transport: stdio}, ""},
		{"pypi", Package{RegistryType: RegistryPyPI, Identifier: "mcp-server-x", Version: "2025.4.25", Transport: stdio}, ""},
		{"oci tag", Package{RegistryType: RegistryOCI, Identifier: "ghcr.io/x/y:v1.2.0", Transport: stdio}, ""},
		{"oci digest", Package{RegistryType: RegistryOCI, Identifier: "docker.io/x/y@sha256:" + sha, Transport: stdio}, ""},
		{"oci version field", Package{RegistryType: RegistryOCI, Identifier: "docker.io/x/y", Version: "1.0.0", Transport: stdio}, ""},
		{"oci registry port", Package{RegistryType: RegistryOCI, Identifier: "localhost:5000/x/y", Transport: stdio}, "no tag or digest"},
		{"oci latest", Package{RegistryType: RegistryOCI, Identifier: "ghcr.io/x/y:latest", Transport: stdio}, "no tag or digest"},
		{"mcpb", Package{RegistryType: RegistryMCPB, Identifier: "https://github.com/x/y/releases/download/v1/y-mcp.mcpb", FileSHA256: sha, Transport: stdio}, ""},
		{"mcpb without hash", Package{RegistryType: RegistryMCPB, Identifier: "https://github.com/x/y/releases/download/v1/y-mcp.mcpb", Transport: stdio}, "cannot be verified"},
		{"mcpb over http", Package{RegistryType: RegistryMCPB, Identifier: "http://example.com/y.mcpb", FileSHA256: sha, Transport: stdio}, "not an https URL"},
		{"command", Package{RegistryType: RegistryCommand, Identifier: "/usr/local/bin/my-server", Transport: stdio}, ""},
		{"no transport", Package{RegistryType: RegistryNPM, Identifier: "@x/y", Version: "1.0.0"}, ""},
		{"nuget", Package{RegistryType: RegistryNuGet, Identifier: "X.Y", Version: "1.0.0", Transport: stdio}, "package type nuget is not supported"},
		{"cargo", Package{RegistryType: "cargo", Identifier: "x", Version: "1.0.0", Transport: stdio}, "package type cargo is not supported"},
		{"no type", Package{Identifier: "x", Transport: stdio}, "no registryType"},
		{"http transport", Package{RegistryType: RegistryNPM, Identifier: "@x/y", Version: "1.0.0", Transport: Transport{Type: "streamable-http", URL: "http://localhost:{port}/mcp"}}, "uses transport streamable-http"},
		{"npm without version", Package{RegistryType: RegistryNPM, Identifier: "@x/y", Transport: stdio}, "no exact version"},
		{"npm range", Package{RegistryType: RegistryNPM, Identifier: "@x/y", Version: "^1.0.0", Transport: stdio}, "no exact version"},
		{"no identifier", Package{RegistryType: RegistryPyPI, Version: "1.0.0", Transport: stdio}, "no identifier"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.pkg.Runnable()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("not runnable: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestRunnablePackageChoice(t *testing.T) {
	nuget := Package{RegistryType: RegistryNuGet, Identifier: "X.Y", Version: "1.0.0", Transport: Transport{Type: "stdio"}}
	oci := Package{RegistryType: RegistryOCI, Identifier: "ghcr.io/x/y:1.0.0", Transport: Transport{Type: "stdio"}}
	npm := Package{RegistryType: RegistryNPM, Identifier: "@x/y", Version: "1.0.0", Transport: Transport{Type: "stdio"}}
	e := Entry{Name: "io.example/multi", Packages: []Package{nuget, oci, npm}}

	p, err := e.RunnablePackage()
	if err != nil || p.RegistryType != RegistryOCI {
		t.Errorf("RunnablePackage = %s, %v; want the first runnable (oci)", p.RegistryType, err)
	}
	all := e.RunnablePackages()
	if len(all) != 2 || all[0].RegistryType != RegistryOCI || all[1].RegistryType != RegistryNPM {
		t.Errorf("RunnablePackages = %+v", all)
	}

	e = Entry{Name: "io.example/dotnet", Packages: []Package{nuget}}
	_, err = e.RunnablePackage()
	if !errors.Is(err, ErrNotInstallable) || !strings.Contains(err.Error(), "io.example/dotnet") || !strings.Contains(err.Error(), "nuget is not supported") {
		t.Errorf("err = %v", err)
	}
	e = Entry{Name: "io.example/empty"}
	if _, err := e.RunnablePackage(); !errors.Is(err, ErrNotInstallable) || !strings.Contains(err.Error(), "lists no packages") {
		t.Errorf("err = %v", err)
	}
}

func TestSuggestShortName(t *testing.T) {
	for name, want := range map[string]string{
		"io.github.modelcontextprotocol/server-filesystem": "filesystem",
		"io.github.brave/brave-search-mcp-server":          "brave-search",
		"io.github.microsoft/playwright-mcp":               "playwright",
		"io.github.upstash/context7":                       "context7",
		"com.example/mcp-server-weather":                   "weather",
		"com.example/Weather_Tools":                        "weather-tools",
		"com.example/a..b__c":                              "a-b-c",
		"com.example/mcp":                                  "mcp",
		"com.example/___":                                  "server",
		"com.example/" + strings.Repeat("x", 80):           strings.Repeat("x", 48),
	} {
		got := SuggestShortName(name)
		if got != want {
			t.Errorf("SuggestShortName(%q) = %q, want %q", name, got, want)
		}
		if !validShortName(got) {
			t.Errorf("SuggestShortName(%q) = %q is not a valid server name", name, got)
		}
	}
}

func TestLooksSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_PERSONAL_ACCESS_TOKEN": true, "BRAVE_API_KEY": true, "--api-key": true, "DB_PASSWORD": true,
		"CLIENT_SECRET": true, "MEMORY_FILE_PATH": false, "SLACK_TEAM_ID": false, "GITLAB_API_URL": false, "--port": false,
	} {
		if got := LooksSecret(name); got != want {
			t.Errorf("LooksSecret(%q) = %v, want %v", name, got, want)
		}
	}
}
