package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/installable"
)

// TestRunnablePackage: the CLI asks the catalog's rules (app/installable)
// of the entry the API sent which package installing it would use, at
// which version, or why none can be.
func TestRunnablePackage(t *testing.T) {
	npm := func(id, version string) wire.Package {
		return wire.Package{RegistryType: "npm", Identifier: id, Version: version, Transport: wire.Transport{Type: "stdio"}}
	}
	tests := []struct {
		name        string
		entry       wire.CatalogEntry
		wantPackage string
		wantVersion string
		wantErr     string
	}{
		{"the first runnable package", wire.CatalogEntry{Name: "io.x/a", Packages: []wire.Package{npm("a", "latest"), npm("b", "1.2.3")}}, "b", "1.2.3", ""},
		{"an image's tag", wire.CatalogEntry{Name: "io.x/o", Packages: []wire.Package{{RegistryType: "oci", Identifier: "ghcr.io/x/o:v2.0.1"}}}, "ghcr.io/x/o:v2.0.1", "v2.0.1", ""},
		{"no exact version", wire.CatalogEntry{Name: "io.x/l", Packages: []wire.Package{npm("l", "^1.0")}}, "", "", `has no exact version ("^1.0")`},
		{"remote only", wire.CatalogEntry{ShortName: "r", Remotes: []wire.Remote{{Type: "sse", URL: "https://x.example/sse"}}}, "", "", "server r is not installable as a local server: it is remote-only (sse at https://x.example/sse)"},
		{"a transport it does not run", wire.CatalogEntry{Name: "io.x/h", Packages: []wire.Package{{RegistryType: "npm", Identifier: "h", Version: "1.0.0", Transport: wire.Transport{Type: "streamable-http"}}}}, "", "", "uses transport streamable-http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, version, err := runnablePackage(tt.entry)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, installable.ErrNotInstallable) {
					t.Fatalf("runnablePackage = %v, want an ErrNotInstallable saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || p.Identifier != tt.wantPackage || version != tt.wantVersion {
				t.Fatalf("runnablePackage = %s@%s, %v; want %s@%s", p.Identifier, version, err, tt.wantPackage, tt.wantVersion)
			}
		})
	}
}

// TestPrintRemote shows the first remote the rules accept, with its
// inputs, or why there is none.
func TestPrintRemote(t *testing.T) {
	en := wire.CatalogEntry{Name: "io.x/r", Remotes: []wire.Remote{
		{Type: "websocket", URL: "wss://x.example"},
		{Type: "streamable-http", URL: "https://{host}/mcp", Variables: map[string]wire.Input{"host": {Description: "the host", IsRequired: true}},
			Headers: []wire.KeyValue{{Name: "X-Key", Input: wire.Input{Description: "the key", IsSecret: true}}, {Name: "X-Fixed", Input: wire.Input{Value: "1"}}}},
	}}
	var out bytes.Buffer
	printRemote(&out, en, "")
	for _, want := range []string{"remote:  streamable-http https://{host}/mcp\n", "host", "the host", "X-Key", "the key"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printRemote wrote:\n%s\nwant it to contain %q", out.String(), want)
		}
	}
	if strings.Contains(out.String(), "X-Fixed") {
		t.Errorf("printRemote lists a header with a fixed value:\n%s", out.String())
	}
	out.Reset()
	printRemote(&out, wire.CatalogEntry{Name: "io.x/n", Remotes: []wire.Remote{{Type: "websocket", URL: "wss://x.example"}}}, "")
	if want := `cannot be installed: server io.x/n is not installable as a remote server: remote wss://x.example has type "websocket"`; !strings.Contains(out.String(), want) {
		t.Errorf("printRemote wrote %q, want %q", out.String(), want)
	}
}
