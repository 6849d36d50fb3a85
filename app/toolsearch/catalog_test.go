package toolsearch

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// catalogServer is one server of testdata/catalog-tools.json.
type catalogServer struct {
	Server  string `json:"server"`
	Package string `json:"package"`
	Version string `json:"version"`
	Tools   []struct {
		Name        string          `json:"name"`
		Title       string          `json:"title"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
}

// loadCatalog reads the snapshot of the catalog servers' tools.
func loadCatalog(t testing.TB) []catalogServer {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "catalog-tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Servers []catalogServer `json:"servers"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("testdata/catalog-tools.json: %v", err)
	}
	if len(file.Servers) == 0 {
		t.Fatal("testdata/catalog-tools.json has no servers")
	}
	return file.Servers
}

// aggregatedKey is the name /mcp gives a tool (without the gateway's
// shortening of long names, which no catalog tool needs).
func aggregatedKey(server, tool string) string { return server + "__" + tool }

// toolsOf returns s's tools as the index takes them, under server name as.
func toolsOf(s catalogServer, as string) []Tool {
	out := make([]Tool, 0, len(s.Tools))
	for _, t := range s.Tools {
		out = append(out, Tool{Key: aggregatedKey(as, t.Name), Name: t.Name, Title: t.Title,
			Description: t.Description, InputSchema: t.InputSchema})
	}
	return out
}

// indexCatalog makes an index of every catalog server's tools.
func indexCatalog(t testing.TB, servers []catalogServer) *Index {
	t.Helper()
	ix, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	for _, s := range servers {
		if err := ix.Replace(context.Background(), s.Server, toolsOf(s, s.Server)); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

type relevanceQuery struct {
	Query  string `json:"query"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Written is "before tuning" or "after tuning" (see the file's comment).
	Written string `json:"written"`
}

func loadQueries(t testing.TB) []relevanceQuery {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Queries []relevanceQuery `json:"queries"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("testdata/queries.json: %v", err)
	}
	return file.Queries
}
