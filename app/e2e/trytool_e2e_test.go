package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
	"github.com/switchboardhq/switchboard/app/internal/testutil"
	"github.com/switchboardhq/switchboard/supervisor/testmcp"
)

// TestTryToolThroughTheDaemon: a tool tried from the dashboard's API is
// called through the daemon's own MCP endpoint, as the client
// "dashboard": its schema is the one clients get, a text, an image and a
// tool error come back as a client sees them, an unknown tool is the
// endpoint's own error, and each call is a history row like any client's
// (client dashboard, server alpha, tool as called, its arguments
// redacted as any call's). The in-memory credential it uses never shows.
func TestTryToolThroughTheDaemon(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	env := map[string]string{}
	for _, kv := range testmcp.Env(testmcp.Options{Content: true}) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	cfg, _ := json.Marshal(map[string]any{"version": 1, "listen": "127.0.0.1:0",
		"servers": map[string]any{"alpha": map[string]any{"command": os.Args[0], "env": env}}})
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, home)
	ctx := t.Context()

	var form wire.TryTool
	testutil.Eventually(t, 30*time.Second, "alpha's form tool", func() bool {
		var err error
		form, err = d.client.TryTool(ctx, "alpha", "form")
		return err == nil
	})
	var schema struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(form.InputSchema, &schema); err != nil || schema.Type != "object" ||
		schema.Properties["color"]["enum"] == nil || schema.Properties["count"]["type"] != "integer" || len(schema.Required) != 1 {
		t.Errorf("form's schema: %s (%v)", form.InputSchema, err)
	}
	if _, err := d.client.TryTool(ctx, "alpha", "nosuch"); err == nil || !strings.Contains(err.Error(), `offers no tool "nosuch"`) {
		t.Errorf("schema of an unknown tool: %v", err)
	}
	if _, err := d.client.TryTool(ctx, "nosuch", "echo"); err == nil || !strings.Contains(err.Error(), `no server "nosuch"`) {
		t.Errorf("schema of a tool of an unknown server: %v", err)
	}

	type result struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Data     string `json:"data"`
			MIMEType string `json:"mimeType"`
		} `json:"content"`
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	}
	try := func(tool, args string) (wire.TryResult, result) {
		t.Helper()
		res, err := d.client.TryCall(ctx, "alpha", tool, wire.TryRequest{Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("try %s: %v", tool, err)
		}
		var r result
		if res.Error == "" {
			if err := json.Unmarshal(res.Result, &r); err != nil {
				t.Fatalf("try %s: result %s: %v", tool, res.Result, err)
			}
		}
		return res, r
	}
	echo, r := try("echo", `{"text":"hello from the dashboard"}`)
	if len(r.Content) != 1 || r.Content[0].Type != "text" || r.Content[0].Text != "hello from the dashboard" ||
		r.StructuredContent["text"] != "hello from the dashboard" || r.IsError || echo.Duration <= 0 || echo.Session == "" {
		t.Errorf("echo: %+v %+v", echo, r)
	}
	_, r = try("image", `{"caption":"a picture"}`)
	if len(r.Content) != 2 || r.Content[1].Type != "image" || r.Content[1].MIMEType != "image/png" {
		t.Fatalf("image: %+v", r)
	}
	if png, err := base64.StdEncoding.DecodeString(r.Content[1].Data); err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("image: the data is not a PNG (%v)", err)
	}
	_, r = try("fail", `{"message":"it broke"}`)
	if !r.IsError || len(r.Content) != 1 || r.Content[0].Text != "it broke" {
		t.Errorf("fail: %+v, want a tool error", r)
	}
	_, r = try("form", `{"text":"x","count":2,"color":"blue","tags":["a","b"],"options":{"k":1},"apiKey":"sk-live-0123456789abcdef"}`)
	if r.StructuredContent["color"] != "blue" || r.StructuredContent["apiKey"] != "sk-live-0123456789abcdef" {
		t.Errorf("form: %+v", r)
	}
	unknown, _ := try("nosuch", `{}`)
	if !strings.Contains(unknown.Error, `unknown tool "nosuch"`) || unknown.Result != nil {
		t.Errorf("an unknown tool: %+v", unknown)
	}
	// Arguments that are not an object are refused before any call.
	if _, err := d.client.TryCall(ctx, "alpha", "echo", wire.TryRequest{Arguments: json.RawMessage(`[1]`)}); err == nil ||
		!strings.Contains(err.Error(), "invalid arguments") {
		t.Errorf("arguments [1]: %v", err)
	}

	// Each call is a history row of the client "dashboard", named as any is.
	var page wire.CallPage
	testutil.Eventually(t, 10*time.Second, "five calls of the dashboard in the history", func() bool {
		var err error
		page, err = d.client.History(ctx, url.Values{"client": {wire.TryClientName}})
		return err == nil && len(page.Calls) == 5
	})
	var got []string
	for _, c := range page.Calls {
		got = append(got, c.Server+"|"+c.Tool+"|"+c.Unknown+"|"+c.Outcome+"|"+c.Client()+"|"+c.Endpoint)
	}
	want := []string{"alpha|nosuch|tool|protocol_error|dashboard|alpha", "alpha|form||ok|dashboard|alpha",
		"alpha|fail||tool_error|dashboard|alpha", "alpha|image||ok|dashboard|alpha", "alpha|echo||ok|dashboard|alpha"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("history of the dashboard's calls:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if page.Calls[4].Session != echo.Session {
		t.Errorf("echo's row has session %q, the try answered %q", page.Calls[4].Session, echo.Session)
	}
	full, err := d.client.Call(ctx, page.Calls[1].ID)
	if err != nil || !strings.Contains(string(full.Arguments), `"color":"blue"`) || strings.Contains(string(full.Arguments), "sk-live") {
		t.Errorf("the form call's arguments: %s (%v); want them recorded, the key redacted", full.Arguments, err)
	}

	// The credential the daemon calls with is no token of the API, and
	// no token file holds it.
	tokensFile, _ := os.ReadFile(filepath.Join(home, "tokens.json"))
	if strings.Contains(string(tokensFile), "sbtry_") {
		t.Error("tokens.json holds the in-memory credential")
	}
	api := &client.Client{BaseURL: d.info.Address, Token: "sbtry_" + strings.Repeat("0", 64)}
	if _, err := api.Status(ctx); err == nil {
		t.Error("a made-up try credential reached the API")
	}
	resp, err := http.Get(d.info.Address + "/api/v1/servers/alpha/tools/echo")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the schema without a token: %d, want 401", resp.StatusCode)
	}
}
