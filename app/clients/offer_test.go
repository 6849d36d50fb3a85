package clients

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOfferLink: Cherry Studio gets the install deep link its handler
// reads (base64 of {"mcpServers": {"switchboard": {…}}}, URL-encoded),
// the entry shown with its token masked; it has no file to plan, and is
// installed when its data folder exists but never connected.
func TestOfferLink(t *testing.T) {
	c := mustClient(t, "cherry-studio")
	o, err := OfferLink(c, Connect{URL: testURL, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := strings.CutPrefix(o.Link, "cherrystudio://mcp/install?servers=")
	if !ok {
		t.Fatalf("link %q", o.Link)
	}
	// The link is parsed as a URL by the app: its query must give the
	// base64 back, "+" and "/" included.
	u, err := url.Parse(o.Link)
	if err != nil {
		t.Fatal(err)
	}
	if q := u.Query().Get("servers"); q == raw || q == "" {
		t.Errorf("the base64 is not URL-encoded: query %q, raw %q", q, raw)
	}
	data, err := base64.StdEncoding.DecodeString(u.Query().Get("servers"))
	if err != nil {
		t.Fatalf("servers is not standard base64: %v", err)
	}
	var got map[string]map[string]map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]map[string]any{"mcpServers": {EntryName: {
		"name": EntryName, "type": "streamableHttp", "baseUrl": testURL,
		"headers": map[string]any{"Authorization": "Bearer " + testToken},
	}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("payload (-want +got):\n%s", d)
	}
	if strings.Contains(o.Entry, testToken) || !strings.Contains(o.Entry, "Bearer "+Masked) {
		t.Errorf("the entry shown does not mask the token:\n%s", o.Entry)
	}
	prof, err := OfferLink(c, Connect{URL: testURL, Token: testToken, Profile: "coding"})
	if err != nil || !strings.Contains(prof.Entry, testURL+"/p/coding") {
		t.Errorf("profile offer: %v\n%s", err, prof.Entry)
	}
	if _, err := OfferLink(c, Connect{URL: testURL, PerServer: []string{"github"}}); err == nil {
		t.Error("a per-server entry was offered")
	}
	if _, err := OfferLink(mustClient(t, "cursor"), Connect{URL: testURL}); err == nil {
		t.Error("a client with a file was offered a link")
	}

	env, ed := testEnv(t), testEditor(t)
	if _, err := ed.Plan(c, env, Connect{URL: testURL, Token: testToken}); !errors.Is(err, ErrNoFile) {
		t.Errorf("Plan = %v, want ErrNoFile", err)
	}
	st := detect(t, ed, env, c.ID)
	if st.Installed || st.Connected || st.Exists || st.Err != nil {
		t.Errorf("without its folder: %+v", st)
	}
	dir, _ := c.Path(env)
	if err := os.MkdirAll(filepath.Join(dir, "IndexedDB"), 0o700); err != nil {
		t.Fatal(err)
	}
	if st := detect(t, ed, env, c.ID); !st.Installed || st.Connected || st.Exists || st.Err != nil {
		t.Errorf("with its folder: %+v", st)
	}
}

func detect(t *testing.T, ed *Editor, env Env, id string) Status {
	t.Helper()
	for _, st := range ed.Detect(env) {
		if st.Client.ID == id {
			return st
		}
	}
	t.Fatalf("Detect has no %s", id)
	return Status{}
}
