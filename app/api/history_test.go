package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/config"
	"github.com/switchboardhq/switchboard/app/history"
	"github.com/switchboardhq/switchboard/app/record"
)

// TestHistoryEndpoints serves a real history database through the API.
func TestHistoryEndpoints(t *testing.T) {
	store, err := history.Open(t.Context(), filepath.Join(t.TempDir(), "history.db"), history.Options{RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	now := time.Now()
	for i, c := range []record.Call{
		{Server: "fs", Name: "read_file", Outcome: record.OutcomeOK, Duration: 2 * time.Millisecond, ClientLabel: "cursor"},
		{Server: "fs", Name: "write_file", Outcome: record.OutcomeToolError, Error: "disk full", Duration: 5 * time.Millisecond, ClientLabel: "cursor"},
		{Server: "git", Name: "status", Outcome: record.OutcomeOK, Duration: time.Millisecond, ClientLabel: "claude-code"},
	} {
		c.Start, c.Method = now.Add(time.Duration(i-10)*time.Second), "tools/call"
		c.Arguments = json.RawMessage(`{"path":"/tmp/notes.txt"}`)
		store.RecordCall(c)
	}
	if err := store.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *api.Options) { o.History = store })

	page, err := e.client.History(t.Context(), url.Values{"server": {"fs"}, "outcome": {"error"}, "since": {"1h"}})
	if err != nil || len(page.Calls) != 1 || page.Calls[0].Name != "write_file" {
		t.Fatalf("filtered history: %v %+v", err, page)
	}
	page, err = e.client.History(t.Context(), url.Values{"q": {"notes.txt"}, "limit": {"2"}})
	if err != nil || len(page.Calls) != 2 || page.Next == "" {
		t.Fatalf("free-text page of 2: %v %+v", err, page)
	}
	call, err := e.client.Call(t.Context(), page.Calls[0].ID)
	if err != nil || !strings.Contains(string(call.Arguments), "notes.txt") {
		t.Errorf("one call: %v %+v", err, call)
	}
	stats, err := e.client.Stats(t.Context(), "", "server")
	if err != nil || len(stats) != 2 || stats[0].Server != "fs" || stats[0].Count != 2 || stats[0].Errors != 1 {
		t.Errorf("stats: %v %+v", err, stats)
	}

	resp := e.request(t, http.MethodGet, "/api/v1/history/export?format=csv&server=git", "", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := bufio.NewScanner(strings.NewReader(string(body)))
	var n int
	for lines.Scan() {
		n++
	}
	if resp.StatusCode != http.StatusOK || n != 2 || !strings.Contains(string(body), "claude-code") {
		t.Errorf("csv export: %d, %d lines\n%s", resp.StatusCode, n, body)
	}

	for _, tt := range []struct {
		path string
		want int
	}{
		{"/api/v1/history?since=yesterday", http.StatusBadRequest},
		{"/api/v1/history?limit=0", http.StatusBadRequest},
		{"/api/v1/history?cursor=bogus", http.StatusBadRequest},
		{"/api/v1/history/999999", http.StatusNotFound},
		{"/api/v1/history/x", http.StatusBadRequest},
		{"/api/v1/history/export?format=xml", http.StatusBadRequest},
		{"/api/v1/stats?by=planet", http.StatusBadRequest},
		{"/api/v1/usage?since=2h", http.StatusOK},
	} {
		resp := e.request(t, http.MethodGet, tt.path, "", nil)
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("GET %s: %d, want %d", tt.path, resp.StatusCode, tt.want)
		}
	}

	off := newEnv(t)
	resp = off.request(t, http.MethodGet, "/api/v1/history", "", nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("history without a store: %d, want 503", resp.StatusCode)
	}
}

// A server that is not running (or not since the daemon started) shows
// the lines it wrote before, from the history.
func TestLogsFromHistory(t *testing.T) {
	store, err := history.Open(t.Context(), filepath.Join(t.TempDir(), "history.db"), history.Options{RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close(context.Background()) })
	start := time.Now().Add(-time.Hour)
	for i := range 5 {
		store.Observe(record.Event{Time: start.Add(time.Duration(i) * time.Second), Server: "idle", Kind: record.EventLog,
			PID: 99, Stream: "stderr", Message: fmt.Sprintf("old line %d", i)})
	}
	if err := store.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *api.Options) { o.History = store })
	e.cfg.cfg.Servers["idle"] = config.Server{Command: "x"}
	lines, err := e.client.Logs(t.Context(), "idle", 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := texts(lines); fmt.Sprint(got) != fmt.Sprint([]string{"old line 2", "old line 3", "old line 4"}) || lines[0].PID != 99 {
		t.Errorf("lines of a stopped server = %q", got)
	}
	// A running server's own lines win.
	if lines, _ := e.client.Logs(t.Context(), "fs", 1); len(lines) != 1 || lines[0].Text == "old line 4" {
		t.Errorf("running server: %+v", lines)
	}
}
