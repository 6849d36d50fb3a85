package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/daemon"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/app/internal/testutil/oauthfake"
)

var updateShapes = flag.Bool("update-shapes", false, "rewrite testdata/api-shapes.golden from this run")

// shapesGolden records the field names and JSON types of every endpoint's
// response, so that moving the wire types cannot change the JSON.
const shapesGolden = "testdata/api-shapes.golden"

// TestAPIResponseShapes calls every endpoint of the daemon's API in one
// scenario (servers, a call in the history, an install from a registry, a
// client connected, imported from and restored) and compares the shape of
// each response (field names and JSON types, not values) with the golden
// file. go test -run TestAPIResponseShapes ./app/e2e -update-shapes
// rewrites it.
func TestAPIResponseShapes(t *testing.T) {
	isolateClientEnv(t)
	const entry = "io.github.switchboard-test/notes"
	t.Setenv(daemon.RegistryEnv, fakeRegistry(t, entry).URL)
	t.Setenv(daemon.TestBrowserEnv, "follow") // a remote's sign-in, below
	oauth := oauthfake.New(t)
	home := filepath.Join(t.TempDir(), "home")
	writeConfig(t, home, "alpha")
	setProfiles(t, home, map[string]any{"coding": map[string]any{"servers": []string{"alpha"}, "tools": map[string]any{"alpha": []string{"echo"}}}})
	d := startDaemon(t, home)
	d.waitRunning(t, "alpha")

	// A call, so the history, stats and usage have a row.
	transport := &mcp.StreamableClientTransport{Endpoint: d.info.Address + "/mcp/alpha",
		HTTPClient: &http.Client{Transport: bearerTransport(d.client.Token)}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "shapes", Version: "1"}, nil).Connect(t.Context(), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	testutil.Eventually(t, 20*time.Second, "the call in the history and a usage sample", func() bool {
		s, err := d.client.Server(t.Context(), "alpha")
		page, herr := d.client.History(t.Context(), nil)
		return err == nil && s.Usage != nil && len(s.Processes) == 1 && s.Processes[0].Usage != nil && herr == nil && len(page.Calls) == 1
	})
	// Cursor has a config with a server of its own: something to import,
	// and a backup once Switchboard writes the file.
	cursorFile := filepath.Join(d.userHome, ".cursor", "mcp.json")
	if err := os.MkdirAll(filepath.Dir(cursorFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cursorFile, []byte(`{"mcpServers":{"old":{"command":"/bin/true"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}

	do := func(method, path, body string) (*http.Response, []byte, error) {
		req, err := http.NewRequestWithContext(t.Context(), method, d.info.Address+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+d.client.Token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp, data, err
	}
	var got []string
	call := func(method, path, label, body string, want int) map[string]any {
		t.Helper()
		resp, data, err := do(method, path, body)
		if err != nil || resp.StatusCode != want {
			t.Fatalf("%s %s: status %d (%v), want %d\n%s", method, path, resp.StatusCode, err, want, data)
		}
		if label == "" {
			label = path
		}
		var v any
		switch ct := resp.Header.Get("Content-Type"); {
		case len(data) == 0:
			got = append(got, fmt.Sprintf("%s %s %d: (no body)", method, label, resp.StatusCode))
		case strings.HasPrefix(ct, "application/json"):
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("%s %s: %v\n%s", method, path, err, data)
			}
			if strings.HasSuffix(label, "/start") || strings.HasSuffix(label, "/stop") || strings.HasSuffix(label, "/restart") {
				dropUsage(v)
			}
			got = append(got, fmt.Sprintf("%s %s %d: %s", method, label, resp.StatusCode, shapeOf(v)))
		default: // an export: its first line (CSV header, or one JSON object)
			first, _, _ := strings.Cut(string(data), "\n")
			if json.Unmarshal([]byte(first), &v) == nil {
				first = shapeOf(v)
			}
			got = append(got, fmt.Sprintf("%s %s %d: %s %s", method, label, resp.StatusCode, ct, first))
		}
		m, _ := v.(map[string]any)
		return m
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }

	call("GET", "/api/v1/status", "", "", 200)
	call("GET", "/api/v1/servers", "", "", 200)
	call("GET", "/api/v1/servers/alpha", "/api/v1/servers/{name}", "", 200)
	beta := `{"command":"/bin/true","enabled":false}`
	call("POST", "/api/v1/servers", "", `{"name":"beta","server":`+beta+`}`, 201)
	call("PUT", "/api/v1/servers/beta", "/api/v1/servers/{name}", beta, 200)
	call("DELETE", "/api/v1/servers/beta", "/api/v1/servers/{name}", "", 204)
	call("POST", "/api/v1/servers/alpha/restart", "/api/v1/servers/{name}/restart", "", 200)
	call("POST", "/api/v1/servers/alpha/stop", "/api/v1/servers/{name}/stop", "", 200)
	call("POST", "/api/v1/servers/alpha/start", "/api/v1/servers/{name}/start", "", 200)
	call("GET", "/api/v1/servers/alpha/logs?n=5", "/api/v1/servers/{name}/logs", "", 200)
	call("POST", "/api/v1/login-codes", "", `{"keep":true}`, 201)

	page := call("GET", "/api/v1/history", "", "", 200)
	calls, _ := page["calls"].([]any)
	if len(calls) == 0 {
		t.Fatal("no calls in the history")
	}
	id := fmt.Sprint(calls[0].(map[string]any)["id"])
	call("GET", "/api/v1/history/"+id, "/api/v1/history/{id}", "", 200)
	call("GET", "/api/v1/history/export?format=jsonl", "", "", 200)
	call("GET", "/api/v1/history/export?format=csv", "", "", 200)
	call("GET", "/api/v1/stats?since=1h", "", "", 200)
	call("GET", "/api/v1/stats?since=1h&by=tool", "", "", 200)
	call("GET", "/api/v1/servers/alpha/tools/echo", "/api/v1/servers/{name}/tools/{tool}", "", 200)
	call("POST", "/api/v1/servers/alpha/tools/echo/call", "/api/v1/servers/{name}/tools/{tool}/call", `{"arguments":{"text":"hi"}}`, 200)
	// Resource samples and lifecycle events reach the history in the
	// background: wait until a sample of alpha is stored, and until the
	// stop above is recorded (a stopped event carries its reason, so the
	// lifecycle's shape has a message whatever else has come by then).
	testutil.Eventually(t, 20*time.Second, "a usage sample and alpha's stop in the history", func() bool {
		_, data, err := do("GET", "/api/v1/usage?server=alpha&since=1h", "")
		var samples []json.RawMessage
		if err != nil || json.Unmarshal(data, &samples) != nil || len(samples) == 0 {
			return false
		}
		evs, err := d.client.Lifecycle(t.Context(), url.Values{"server": {"alpha"}})
		return err == nil && slices.ContainsFunc(evs, func(e wire.LifecycleEvent) bool { return e.Kind == "stopped" && e.Message != "" })
	})
	call("GET", "/api/v1/usage?server=alpha&since=1h", "", "", 200)
	call("GET", "/api/v1/lifecycle?server=alpha", "", "", 200)

	call("GET", "/api/v1/catalog?q=notes", "", "", 200)
	call("GET", "/api/v1/catalog/"+entry, "/api/v1/catalog/{name}", "", 200)
	inst := call("POST", "/api/v1/installs", "", `{"entry":"`+entry+`"}`, 202)
	instPath := "/api/v1/installs/" + str(inst, "id")
	testutil.Eventually(t, 60*time.Second, "the install to end", func() bool {
		v, err := d.client.InstallStatus(t.Context(), str(inst, "id"))
		return err == nil && v.Done
	})
	call("GET", instPath, "/api/v1/installs/{id}", "", 200)
	call("GET", "/api/v1/installs", "", "", 200)
	call("POST", instPath+"/cancel", "/api/v1/installs/{id}/cancel", "", 200)
	server := str(inst, "server")
	call("GET", "/api/v1/servers/"+server+"/update", "/api/v1/servers/{name}/update", "", 200)
	call("POST", "/api/v1/servers/"+server+"/uninstall", "/api/v1/servers/{name}/uninstall", `{}`, 200)
	call("POST", "/api/v1/remotes", "", `{"name":"remote","url":"http://`+closedLoopbackPort(t)+`/mcp","headers":{"X-Team":"a"},`+
		`"secretHeaders":{"Authorization":"Bearer x"},"transport":"sse","enabled":false}`, 201)
	call("POST", "/api/v1/servers/remote/uninstall", "/api/v1/servers/{name}/uninstall", `{}`, 200)
	// A remote behind OAuth, signed in (the test browser follows the
	// redirects, so the sign-in is over when login answers) and out.
	if resp, data, err := do("POST", "/api/v1/remotes", `{"name":"oauth","url":"`+oauth.URL("/mcp")+`","enabled":false}`); err != nil || resp.StatusCode != 201 {
		t.Fatalf("adding the OAuth remote: %v %s", err, data)
	}
	call("POST", "/api/v1/servers/oauth/login", "/api/v1/servers/{name}/login", "", 200)
	call("GET", "/api/v1/servers/oauth", "/api/v1/servers/{name} (a signed-in remote)", "", 200)
	call("POST", "/api/v1/servers/oauth/logout", "/api/v1/servers/{name}/logout", "", 200)
	if resp, data, err := do("DELETE", "/api/v1/servers/oauth", ""); err != nil || resp.StatusCode != 204 {
		t.Fatalf("removing the OAuth remote: %v %s", err, data)
	}

	call("GET", "/api/v1/settings", "", "", 200)
	call("PUT", "/api/v1/settings", "", `{"redactValues":true}`, 200)
	call("POST", "/api/v1/paths/check", "", `{"path":"/nonexistent-switchboard-dir","kind":"directory"}`, 200)

	call("GET", "/api/v1/clients", "", "", 200)
	plan := call("POST", "/api/v1/clients/cursor/plan", "/api/v1/clients/{id}/plan", `{"action":"connect"}`, 200)
	call("POST", "/api/v1/clients/cursor/apply", "/api/v1/clients/{id}/apply", `{"action":"connect","hash":"`+str(plan, "hash")+`"}`, 200)
	imp := call("POST", "/api/v1/clients/cursor/import/plan", "/api/v1/clients/{id}/import/plan", `{"servers":["old"]}`, 200)
	call("POST", "/api/v1/clients/cursor/import/apply", "/api/v1/clients/{id}/import/apply", `{"servers":["old"],"hash":"`+str(imp, "hash")+`"}`, 200)
	_, data, err := do("GET", "/api/v1/clients/cursor/backups", "")
	if err != nil {
		t.Fatalf("cursor's backups: %v", err)
	}
	var bs []map[string]any
	if err := json.Unmarshal(data, &bs); err != nil || len(bs) == 0 {
		t.Fatalf("cursor's backups: %s %v", data, err)
	}
	call("GET", "/api/v1/clients/cursor/backups", "/api/v1/clients/{id}/backups", "", 200)
	restore := `{"backup":"` + str(bs[0], "name") + `"`
	rp := call("POST", "/api/v1/clients/cursor/restore/plan", "/api/v1/clients/{id}/restore/plan", restore+`}`, 200)
	call("POST", "/api/v1/clients/cursor/restore/apply", "/api/v1/clients/{id}/restore/apply", restore+`,"hash":"`+str(rp, "hash")+`"}`, 200)

	// Cherry Studio keeps no file: it is offered an install link.
	call("POST", "/api/v1/clients/cherry-studio/offer", "/api/v1/clients/{id}/offer", "{}", 200)

	// Cursor connected again (not recorded: the shapes are above), then
	// its token revoked: the list shows it needs connecting again.
	_, data, err = do("POST", "/api/v1/clients/cursor/plan", `{"action":"connect"}`)
	if err != nil {
		t.Fatalf("connecting cursor again: %v", err)
	}
	var again map[string]any
	if err := json.Unmarshal(data, &again); err != nil {
		t.Fatalf("connecting cursor again: %s %v", data, err)
	}
	if resp, data, err := do("POST", "/api/v1/clients/cursor/apply", `{"action":"connect","hash":"`+str(again, "hash")+`"}`); err != nil || resp.StatusCode != 200 {
		t.Fatalf("connecting cursor again: %v %s", err, data)
	}
	call("GET", "/api/v1/tokens", "", "", 200)
	call("GET", "/api/v1/profiles", "", "", 200)
	call("POST", "/api/v1/profiles", "", `{"name":"review","servers":["alpha"],"toolSearch":true}`, 201)
	call("PUT", "/api/v1/profiles/review", "/api/v1/profiles/{name}", `{"servers":["alpha"],"tools":{"alpha":["echo"]}}`, 200)
	call("DELETE", "/api/v1/profiles/review", "/api/v1/profiles/{name}", "", 204)
	call("DELETE", "/api/v1/tokens/cursor", "/api/v1/tokens/{label}", "", 200)
	call("GET", "/api/v1/clients", "/api/v1/clients (a client's token revoked)", "", 200)

	// Tool approvals (their shapes with a held tool are in TestChangedToolIsHeldUntilApproved).
	call("GET", "/api/v1/held-tools", "", "", 200)
	call("GET", "/api/v1/held-tools?server=alpha", "", "", 200)
	call("POST", "/api/v1/servers/alpha/approve", "/api/v1/servers/{name}/approve", `{"tool":"echo"}`, 404)

	text := strings.Join(got, "\n") + "\n"
	if *updateShapes {
		if err := os.WriteFile(shapesGolden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(shapesGolden)
	if err != nil {
		t.Fatalf("%v (run with -update-shapes to record it)", err)
	}
	if string(want) != text {
		wantLines := strings.Split(string(want), "\n")
		for _, l := range got {
			if !slices.Contains(wantLines, l) {
				t.Errorf("response shape changed or new:\n  %s", l)
			}
		}
		gotLines := strings.Split(text, "\n")
		for _, l := range wantLines {
			if l != "" && !slices.Contains(gotLines, l) {
				t.Errorf("response shape gone:\n  %s", l)
			}
		}
	}
}

// dropUsage removes the resource samples from a server view answered
// right after a start, stop or restart: whether a sample has come (or gone)
// by then is a matter of timing. GET /servers and /servers/{name} record
// their shape, once a sample is there.
func dropUsage(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	delete(m, "usage")
	procs, _ := m["processes"].([]any)
	for _, p := range procs {
		if pm, ok := p.(map[string]any); ok {
			delete(pm, "usage")
		}
	}
}

// mapFields are the objects whose keys are data (environment variables,
// headers, a call's arguments), not field names: their shape is that of
// their values.
var mapFields = map[string]bool{"env": true, "Env": true, "headers": true, "Headers": true, "arguments": true, "values": true}

// shapeOf is v's JSON shape: objects with their sorted field names and the
// shape of each value, arrays with the merged shape of their elements, and
// the JSON type of anything else.
func shapeOf(v any) string {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			if m, ok := v[k].(map[string]any); ok && mapFields[k] {
				parts[i] = k + ":" + mapShape(m)
				continue
			}
			parts[i] = k + ":" + shapeOf(v[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		if len(v) == 0 {
			return "[]"
		}
		return "[" + shapeOf(mergeElements(v)) + "]"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// mapShape is the shape of an object whose keys are data: map of the
// merged shape of its values.
func mapShape(m map[string]any) string {
	if len(m) == 0 {
		return "map{}"
	}
	vs := make([]any, 0, len(m))
	for _, v := range m {
		vs = append(vs, v)
	}
	return "map{" + shapeOf(mergeElements(vs)) + "}"
}

// mergeElements folds an array's elements into one value of their shape:
// objects into one object with every field any of them has (a field's
// first non-null value wins), anything else into its first element.
func mergeElements(vs []any) any {
	if _, ok := vs[0].(map[string]any); !ok {
		return vs[0]
	}
	out := map[string]any{}
	for _, e := range vs {
		m, ok := e.(map[string]any)
		if !ok {
			return vs[0]
		}
		for k, v := range m {
			if cur, seen := out[k]; !seen || cur == nil {
				out[k] = v
			}
		}
	}
	return out
}
