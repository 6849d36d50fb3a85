package catalog

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The tests must never read or write the user's real data.
	home, err := os.MkdirTemp("", "catalog-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("HOME", home)
	os.Setenv("SWITCHBOARD_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Modes of the fake registry.
const (
	modeOK      = "ok"
	modeSlow    = "slow"    // answers only when the client gives up
	modeError   = "error"   // HTTP 500
	modeBadJSON = "badjson" // 200 with a body that is not JSON
	modeHuge    = "huge"    // a body larger than the client's bound
	modeLoop    = "loop"    // always the same cursor
)

// fakeServer is one server the fake registry lists.
type fakeServer struct {
	doc    map[string]any // server.json
	status string         // "" means no _meta at all
}

func (s fakeServer) name() string    { return s.doc["name"].(string) }
func (s fakeServer) version() string { return s.doc["version"].(string) }

// fakeRegistry is a loopback implementation of the registry's v0.1 read
// API: /v0.1/servers with limit, cursor, search and version=latest, and
// /v0.1/servers/{name}/versions/latest. Cursors are "name:version" of the
// last server of a page, as the official registry's are. Unlike the
// official one it also lists deleted servers, as a subregistry may, so
// that the client's own filtering is tested.
type fakeRegistry struct {
	t   *testing.T
	srv *httptest.Server
	// maxPage is the largest page the fake gives, whatever the limit.
	maxPage int

	mu       sync.Mutex
	servers  []fakeServer
	mode     string
	requests []*url.URL
}

func newFakeRegistry(t *testing.T, servers ...fakeServer) *fakeRegistry {
	t.Helper()
	f := &fakeRegistry{t: t, maxPage: 100, servers: servers, mode: modeOK}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRegistry) URL() string { return f.srv.URL }

func (f *fakeRegistry) setMode(m string) {
	f.mu.Lock()
	f.mode = m
	f.mu.Unlock()
}

func (f *fakeRegistry) setServers(s ...fakeServer) {
	f.mu.Lock()
	f.servers = s
	f.mu.Unlock()
}

func (f *fakeRegistry) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeRegistry) requestLog() []*url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeRegistry) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	u := *r.URL
	f.requests = append(f.requests, &u)
	mode := f.mode
	servers := slices.Clone(f.servers)
	f.mu.Unlock()

	switch mode {
	case modeSlow:
		<-r.Context().Done() // the client went away
		return
	case modeError:
		http.Error(w, `{"title":"Internal Server Error","status":500}`, http.StatusInternalServerError)
		return
	case modeBadJSON:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"servers": [{"server": {"name": "io.example/x"`)
		return
	case modeHuge:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"servers":[],"metadata":{"nextCursor":"`+strings.Repeat("x", 2<<20)+`"}}`)
		return
	}
	if r.Method != http.MethodGet {
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Accept") != "application/json" {
		http.Error(w, "want Accept: application/json", http.StatusNotAcceptable)
		return
	}

	// /v0.1/servers/{name}/versions/latest, with the name's slash escaped.
	if rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/v0.1/servers/"); ok {
		enc, found := strings.CutSuffix(rest, "/versions/latest")
		if !found || strings.Contains(enc, "/") {
			http.Error(w, `{"title":"Not Found"}`, http.StatusNotFound)
			return
		}
		name, err := url.PathUnescape(enc)
		if err != nil {
			http.Error(w, "bad name", http.StatusBadRequest)
			return
		}
		for _, s := range servers {
			if s.name() == name {
				writeJSON(w, response(s))
				return
			}
		}
		http.Error(w, `{"title":"Not Found","detail":"Server not found"}`, http.StatusNotFound)
		return
	}
	if r.URL.Path != "/v0.1/servers" {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	q := r.URL.Query()
	if q.Get("version") != "latest" {
		http.Error(w, "the fake only serves version=latest", http.StatusBadRequest)
		return
	}
	limit := 30
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			http.Error(w, "bad limit", http.StatusUnprocessableEntity)
			return
		}
		limit = n
	}
	limit = min(limit, f.maxPage)
	var match []fakeServer
	search := strings.ToLower(q.Get("search"))
	for _, s := range servers {
		if strings.Contains(strings.ToLower(s.name()), search) {
			match = append(match, s)
		}
	}
	start := 0
	if c := q.Get("cursor"); c != "" {
		start = -1
		for i, s := range match {
			if s.name()+":"+s.version() == c {
				start = i + 1
			}
		}
		if start < 0 && mode == modeLoop {
			start = 0
		}
		if start < 0 {
			http.Error(w, "unknown cursor", http.StatusBadRequest)
			return
		}
	}
	end := min(start+limit, len(match))
	page := map[string]any{}
	var list []any
	for _, s := range match[start:end] {
		list = append(list, response(s))
	}
	page["servers"] = list
	meta := map[string]any{"count": len(list)}
	if end < len(match) {
		last := match[end-1]
		meta["nextCursor"] = last.name() + ":" + last.version()
	}
	if mode == modeLoop {
		meta["nextCursor"] = "io.example/loop:1.0.0"
	}
	page["metadata"] = meta
	writeJSON(w, page)
}

func response(s fakeServer) map[string]any {
	r := map[string]any{"server": s.doc}
	if s.status != "" {
		r["_meta"] = map[string]any{
			"io.modelcontextprotocol.registry/official": map[string]any{
				"status": s.status, "publishedAt": "2026-01-02T03:04:05Z", "isLatest": true,
			},
		}
	}
	return r
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// npmServer is a registry server with one stdio npm package.
func npmServer(name, version, pkg string) fakeServer {
	return fakeServer{status: StatusActive, doc: map[string]any{
		"$schema":     "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
		"name":        name,
		"description": "A test server called " + name,
		"version":     version,
		"packages": []any{map[string]any{
			"registryType": "npm", "identifier": pkg, "version": version,
			"transport": map[string]any{"type": "stdio"},
			"environmentVariables": []any{map[string]any{
				"name": "API_KEY", "description": "The key", "isRequired": true, "isSecret": true,
			}},
		}},
	}}
}

func withStatus(s fakeServer, status string) fakeServer {
	s.status = status
	return s
}
