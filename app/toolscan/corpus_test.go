package toolscan

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// corpus is testdata/corpus.json: labelled listings, malicious and benign.
type corpus struct {
	Others []string `json:"others"`
	Cases  []struct {
		ID     string `json:"id"`
		Label  string `json:"label"`
		Expect []struct {
			Rule string   `json:"rule"`
			Min  Severity `json:"min"`
		} `json:"expect"`
		Listing Listing `json:"listing"`
	} `json:"cases"`
}

func loadCorpus(t *testing.T) corpus {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("testdata/corpus.json: %v", err)
	}
	return c
}

// TestCorpus runs every labelled case: a malicious case must trigger each
// rule it names at least at the severity it names; a benign case may give
// low findings (logged) but nothing above. Every rule of the table must be
// exercised by some malicious case, so a rule cannot go untested.
func TestCorpus(t *testing.T) {
	c := loadCorpus(t)
	malicious, benign := 0, 0
	covered := map[string]int{}
	for _, tc := range c.Cases {
		t.Run(tc.ID, func(t *testing.T) {
			findings := Scan(tc.Listing, c.Others)
			for _, f := range findings {
				t.Log(f)
			}
			switch tc.Label {
			case "malicious":
				malicious++
				if len(tc.Expect) == 0 {
					t.Fatal("a malicious case names no expected rule")
				}
				for _, e := range tc.Expect {
					if e.Min == 0 {
						t.Fatalf("expected rule %s has no minimum severity", e.Rule)
					}
					if !slices.ContainsFunc(findings, func(f Finding) bool { return f.Rule == e.Rule && f.Severity >= e.Min }) {
						t.Errorf("missed: no %s finding at %s or above", e.Rule, e.Min)
						continue
					}
					covered[e.Rule]++
				}
			case "benign":
				benign++
				for _, f := range findings {
					if f.Severity > Low {
						t.Errorf("false positive above low: %s", f)
					}
				}
			default:
				t.Fatalf("label %q is neither malicious nor benign", tc.Label)
			}
		})
	}
	t.Logf("%d malicious and %d benign cases", malicious, benign)
	if malicious < 40 || benign < 30 {
		t.Errorf("the corpus has %d malicious and %d benign cases; it should have at least 40 and 30", malicious, benign)
	}
	for _, r := range Rules() {
		if covered[r.ID] == 0 {
			t.Errorf("rule %s is found by no malicious case", r.ID)
		}
	}
	t.Logf("malicious cases per rule: %v", fmt.Sprint(covered))
}
