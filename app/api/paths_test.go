package api_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api/wire"
)

// POST /api/v1/paths/check says what the installer would say of a path
// input before the install starts: a missing folder, a file given for a
// folder, a relative path; a file the server creates may be new where its
// folder exists. A client token is refused like on every route.
func TestPathCheck(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("private"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path, kind string
		exists, isDir    bool
		err              string // a part of the error, "" for none
	}{
		{"a folder", dir, "directory", true, true, ""},
		{"a missing folder", filepath.Join(dir, "nope"), "directory", false, false, "does not exist"},
		{"a file for a folder", file, "directory", true, false, "is not a directory"},
		{"a file", file, "filepath", true, false, ""},
		{"a new file in a folder", filepath.Join(dir, "memory.json"), "filepath", false, false, ""},
		{"a new file in no folder", filepath.Join(dir, "nope", "memory.json"), "filepath", false, false, "neither does its folder"},
		{"relative", "docs", "directory", false, false, "not an absolute path"},
		{"home-relative", "~/docs", "directory", false, false, "not an absolute path"},
		{"kind defaults to filepath", file, "", true, false, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, _ := json.Marshal(wire.PathCheckRequest{Path: tt.path, Kind: tt.kind})
			resp := e.request(t, http.MethodPost, "/api/v1/paths/check", string(body), nil)
			defer resp.Body.Close()
			var got wire.PathCheck
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%d %v", resp.StatusCode, err)
			}
			if got.Exists != tt.exists || got.IsDir != tt.isDir || (tt.err == "") != (got.Error == "") || !strings.Contains(got.Error, tt.err) {
				t.Errorf("%s (%s): %+v, want exists %v isDir %v error ~%q", tt.path, tt.kind, got, tt.exists, tt.isDir, tt.err)
			}
			if strings.Contains(got.Error, "private") {
				t.Errorf("the answer has the file's content: %q", got.Error)
			}
		})
	}
	for body, want := range map[string]string{
		`{"path":""}`:                     "path is required",
		`{"path":"/tmp","kind":"socket"}`: "", // checked below: an unknown kind is an error in the answer
		`{"path":"/tmp","mode":"x"}`:      "unknown field",
	} {
		resp := e.request(t, http.MethodPost, "/api/v1/paths/check", body, nil)
		var raw map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&raw)
		resp.Body.Close()
		if want == "" {
			if resp.StatusCode != 200 || !strings.Contains(raw["error"].(string), "unknown path kind") {
				t.Errorf("%s: %d %v", body, resp.StatusCode, raw)
			}
			continue
		}
		if resp.StatusCode != 400 || !strings.Contains(raw["error"].(string), want) {
			t.Errorf("%s: %d %v, want 400 naming %q", body, resp.StatusCode, raw, want)
		}
	}
}
