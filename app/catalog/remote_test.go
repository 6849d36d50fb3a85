package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureServer reads a server.json from testdata as a server the fake
// registry lists.
func fixtureServer(t *testing.T, file string) fakeServer {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return fakeServer{doc: doc, status: StatusActive}
}

// Registry entries keep their remotes whole (headers with their input
// metadata, URL variables) and say whether they are remote-only or have a
// package too; the first supported remote is the one installed.
func TestRegistryRemotes(t *testing.T) {
	f := newFakeRegistry(t, fixtureServer(t, "remote-only.server.json"), fixtureServer(t, "remote-and-package.server.json"))
	r := newTestRegistry(t, RegistryOptions{URL: f.URL()})
	ctx := context.Background()

	tickets, err := r.Latest(ctx, "com.example/tickets")
	if err != nil {
		t.Fatal(err)
	}
	if got := tickets.Kind(); got != KindRemote {
		t.Errorf("tickets kind = %q, want %q", got, KindRemote)
	}
	if len(tickets.Remotes) != 2 || len(tickets.Remotes[0].Headers) != 3 || !tickets.Remotes[0].Variables["workspace"].IsRequired {
		t.Fatalf("tickets remotes not kept whole: %+v", tickets.Remotes)
	}
	auth := tickets.Remotes[0].Headers[0]
	if auth.Name != "Authorization" || !auth.IsSecret || !auth.IsRequired || auth.Description != "Bearer YOUR_API_KEY" {
		t.Errorf("Authorization header = %+v", auth)
	}
	if _, err := tickets.RunnablePackage(); !errors.Is(err, ErrNotInstallable) || !strings.Contains(err.Error(), "installing it configures the remote") {
		t.Errorf("tickets RunnablePackage: %v", err)
	}

	weather, err := r.Latest(ctx, "com.example/weather")
	if err != nil {
		t.Fatal(err)
	}
	if got := weather.Kind(); got != KindBoth {
		t.Errorf("weather kind = %q, want %q", got, KindBoth)
	}
	rem, err := weather.InstallableRemote()
	if err != nil || rem.Type != RemoteSSE {
		t.Errorf("weather remote = %+v, %v; want the sse one (the websocket one is not supported)", rem, err)
	}

	listed, err := r.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Entries) != 2 || len(listed.Entries[0].Remotes)+len(listed.Entries[1].Remotes) != 4 {
		t.Errorf("listing lost remotes: %+v", listed.Entries)
	}
}

func TestEntryKind(t *testing.T) {
	npm := Package{RegistryType: RegistryNPM, Identifier: "x", Version: "1.0.0", Transport: Transport{Type: "stdio"}}
	hosted := Remote{Type: RemoteStreamableHTTP, URL: "https://mcp.example.com/mcp"}
	tests := []struct {
		entry Entry
		want  string
	}{
		{Entry{Packages: []Package{npm}}, KindLocal},
		{Entry{Remotes: []Remote{hosted}}, KindRemote},
		{Entry{Packages: []Package{npm}, Remotes: []Remote{hosted}}, KindBoth},
		{Entry{Packages: []Package{{RegistryType: RegistryNuGet, Identifier: "y"}}, Remotes: []Remote{{Type: "websocket", URL: "wss://x"}}}, KindNone},
		{Entry{}, KindNone},
	}
	for _, tt := range tests {
		if got := tt.entry.Kind(); got != tt.want {
			t.Errorf("Kind of %+v = %q, want %q", tt.entry, got, tt.want)
		}
	}
}

func TestRemoteSetup(t *testing.T) {
	tickets := fixtureServer(t, "remote-only.server.json")
	data, _ := json.Marshal(tickets.doc)
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	rem := e.Remotes[0]
	templated := Remote{Type: RemoteSSE, URL: "https://x.example.com/{tenant}/sse",
		Variables: map[string]Input{"tenant": {Default: "main"}, "token": {IsSecret: true}},
		Headers:   []KeyValue{{Name: "Authorization", Input: Input{Value: "Bearer {token}", IsSecret: true}}}}

	tests := []struct {
		name    string
		remote  Remote
		values  map[string]string
		want    RemoteSetup
		wantErr string
	}{
		{"all given", rem, map[string]string{"workspace": "acme", "Authorization": "Bearer s3cret", "X-Trace": "t1"},
			RemoteSetup{URL: "https://acme.tickets.example.com/mcp", Transport: RemoteStreamableHTTP,
				Headers: map[string]string{"X-Region": "eu", "X-Trace": "t1"}, SecretHeaders: map[string]string{"Authorization": "Bearer s3cret"}}, ""},
		{"missing variable", rem, map[string]string{"Authorization": "Bearer s3cret"}, RemoteSetup{}, "input workspace: required, but no value was given (the URL variable: your workspace's subdomain)"},
		{"missing secret header", rem, map[string]string{"workspace": "acme"}, RemoteSetup{}, "input Authorization: required, but no value was given (the header: Bearer YOUR_API_KEY)"},
		{"bad choice", rem, map[string]string{"workspace": "acme", "Authorization": "k", "X-Region": "mars"}, RemoteSetup{}, `input X-Region: "mars" is not one of eu, us`},
		{"unknown input", rem, map[string]string{"workspace": "acme", "Authorization": "k", "X-Nope": "1"}, RemoteSetup{},
			"input X-Nope is not one this remote takes (it takes Authorization, X-Region, X-Trace, workspace)"},
		{"templated header", templated, map[string]string{"token": "abc"},
			RemoteSetup{URL: "https://x.example.com/main/sse", Transport: RemoteSSE, SecretHeaders: map[string]string{"Authorization": "Bearer abc"}}, ""},
		{"template without value", templated, nil, RemoteSetup{}, "input token: required, but no value was given (header Authorization uses it)"},
		{"unsupported", Remote{Type: "websocket", URL: "wss://x"}, nil, RemoteSetup{}, `has type "websocket"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.remote.Setup(tt.values)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.URL != tt.want.URL || got.Transport != tt.want.Transport || !maps.Equal(got.Headers, tt.want.Headers) || !maps.Equal(got.SecretHeaders, tt.want.SecretHeaders) {
				t.Errorf("Setup = %+v, want %+v", got, tt.want)
			}
		})
	}
}
