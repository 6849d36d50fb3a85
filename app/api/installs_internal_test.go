package api

import (
	"maps"
	"testing"

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
