package toolscan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// catalogFile is the tools/list snapshot of the catalog's servers that
// app/toolsearch keeps; it is read here, never written.
var catalogFile = filepath.Join("..", "toolsearch", "testdata", "catalog-tools.json")

// loadCatalog reads catalogFile as listings, and for each server the
// names of every other server's tools, as if all were installed at once.
func loadCatalog(t testing.TB) (listings []Listing, others [][]string) {
	t.Helper()
	data, err := os.ReadFile(catalogFile)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Servers []struct {
			Server string `json:"server"`
			Tools  []struct {
				Name        string          `json:"name"`
				Title       string          `json:"title"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatalf("%s: %v", catalogFile, err)
	}
	for _, s := range file.Servers {
		l := Listing{Server: s.Server}
		for _, tl := range s.Tools {
			l.Tools = append(l.Tools, Tool{Name: tl.Name, Title: tl.Title, Description: tl.Description, InputSchema: tl.InputSchema})
		}
		listings = append(listings, l)
	}
	for i := range listings {
		var o []string
		for j, l := range listings {
			if j != i {
				for _, tl := range l.Tools {
					o = append(o, tl.Name)
				}
			}
		}
		others = append(others, o)
	}
	return listings, others
}

// TestCatalogHasNoHighFinding scans the real descriptions of the
// catalog's servers, each with all the others' tool names for the
// shadowing rules: none may be held (no high finding). It logs every
// finding, and the count per severity, as the record of false positives.
func TestCatalogHasNoHighFinding(t *testing.T) {
	listings, others := loadCatalog(t)
	tools := 0
	count := map[Severity]int{}
	for i, l := range listings {
		tools += len(l.Tools)
		for _, f := range Scan(l, others[i]) {
			count[f.Severity]++
			t.Logf("%s: %s", l.Server, f)
			if f.Severity >= High {
				t.Errorf("high finding on a catalog tool: %s", f)
			}
		}
	}
	if tools < 100 {
		t.Fatalf("scanned %d catalog tools; the file should hold about 128", tools)
	}
	t.Logf("%d tools: %d high, %d medium, %d low findings", tools, count[High], count[Medium], count[Low])
}
