package api

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/catalog"
	"github.com/switchboardhq/switchboard/app/config"
)

// An update keeps the data paths the server runs with (a memory graph the
// user put elsewhere) unless the update sets them.
func TestKeptPathValues(t *testing.T) {
	pkg := catalog.Package{EnvironmentVars: []catalog.KeyValue{
		{Name: "MEMORY_FILE_PATH", Input: catalog.Input{Format: "filepath", DataPath: "memory.jsonl"}},
		{Name: "DB_DIR", Input: catalog.Input{Format: "directory"}},
		{Name: "LOG_LEVEL", Input: catalog.Input{}},
		{Name: "API_KEY", Input: catalog.Input{Format: "filepath", IsSecret: true}},
	}}
	installed := &config.Server{Env: map[string]string{"MEMORY_FILE_PATH": "/home/me/graph.jsonl", "DB_DIR": "/srv/db",
		"LOG_LEVEL": "debug", "API_KEY": "/x"}}
	got := keptPathValues(pkg, installed, map[string]string{"DB_DIR": "/new"})
	want := map[string]string{"MEMORY_FILE_PATH": "/home/me/graph.jsonl", "DB_DIR": "/new"}
	if !maps.Equal(got, want) {
		t.Errorf("values %v, want %v", got, want)
	}
}

// A 401 in a connect error is a sign-in; a port with 401 in it is not.
func TestRemoteNotice(t *testing.T) {
	tests := []struct {
		err, want string
	}{
		{`connecting to https://x/mcp: calling "initialize": sending "initialize": Unauthorized`, "needs a sign-in"},
		{`connecting to https://x/mcp: HTTP 401`, "needs a sign-in"},
		{`connecting to http://127.0.0.1:4011/mcp: connection refused`, "did not connect yet (connecting to http://127.0.0.1:4011/mcp: connection refused)"},
		{"", ""},
	}
	for _, tt := range tests {
		var err error
		if tt.err != "" {
			err = errors.New(tt.err)
		}
		got := remoteNotice("x", err, wire.ServerView{State: wire.StateRunning})
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("remoteNotice(%q) = %q, want it to contain %q", tt.err, got, tt.want)
		}
	}
}
