package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/wire"
)

// A remote server added by hand: its entry in the config with the secret
// header named, the value in the secret store and in no answer.
func TestAddRemote(t *testing.T) {
	e := newClientsEnv(t)
	const secret = "Bearer lin_api_h4ndAdd3d0123456789"
	v, err := e.client.AddRemote(t.Context(), wire.AddRemoteRequest{Name: "linear", URL: "https://mcp.linear.app/mcp",
		Headers: map[string]string{"X-Team": "platform"}, SecretHeaders: map[string]string{"Authorization": secret}, Transport: "streamable-http"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(v.Config)
	if want := `{"url":"https://mcp.linear.app/mcp","transport":"streamable-http",` +
		`"headers":{"X-Team":"platform"},"secretHeaders":{"Authorization":"Authorization"}}`; string(got) != want {
		t.Errorf("config in the answer:\n got  %s\n want %s", got, want)
	}
	sc := e.cfg.Current().Servers["linear"]
	if sc.URL != "https://mcp.linear.app/mcp" || sc.SecretHeaders["Authorization"] != "Authorization" || sc.Headers["X-Team"] != "platform" {
		t.Errorf("config: %+v", sc)
	}
	if data, _ := json.Marshal(e.cfg.Current()); strings.Contains(string(data), "lin_api_h4nd") {
		t.Errorf("the secret is in the config:\n%s", data)
	}
	if s, err := e.secrets.Get("linear", "Authorization"); err != nil || s != secret {
		t.Errorf("secret store: %q, %v", s, err)
	}
	list, _ := e.client.Servers(t.Context())
	if data, _ := json.Marshal(list); strings.Contains(string(data), "lin_api_h4nd") {
		t.Errorf("GET /servers shows the secret:\n%s", data)
	}
	// Without secret headers, no secret is stored; the transport defaults.
	v, err = e.client.AddRemote(t.Context(), wire.AddRemoteRequest{Name: "local", URL: "http://127.0.0.1:9/mcp"})
	if err != nil || v.Config.URL != "http://127.0.0.1:9/mcp" || v.Config.Transport != "" || v.Config.SecretHeaders != nil {
		t.Errorf("add without headers: %+v %v", v.Config, err)
	}
	if keys, _ := e.secrets.Keys("local"); len(keys) != 0 {
		t.Errorf("secrets of a server without secret headers: %v", keys)
	}
}

// A remote with a pre-registered OAuth client: the client's secret goes
// to the secret store and config.json names it; no answer shows it.
func TestAddRemoteWithOAuthClient(t *testing.T) {
	e := newClientsEnv(t)
	const secret = "cs_0authCl13ntS3cr3t"
	v, err := e.client.AddRemote(t.Context(), wire.AddRemoteRequest{Name: "linear", URL: "https://mcp.linear.app/mcp",
		OAuth: &wire.AddRemoteOAuth{ClientID: "switchboard-desktop", ClientSecret: secret, Scopes: []string{"read", "write"}}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(v.Config.OAuth)
	if want := `{"clientId":"switchboard-desktop","clientSecret":"oauth.clientSecret","scopes":["read","write"]}`; string(got) != want {
		t.Errorf("oauth in the answer:\n got  %s\n want %s", got, want)
	}
	if s, err := e.secrets.Get("linear", wire.OAuthClientSecretName); err != nil || s != secret {
		t.Errorf("secret store: %q, %v", s, err)
	}
	cfg, _ := json.Marshal(e.cfg.Current())
	list, _ := e.client.Servers(t.Context())
	answers, _ := json.Marshal(list)
	for what, data := range map[string][]byte{"config": cfg, "GET /servers": answers} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the client secret is in %s:\n%s", what, data)
		}
	}
	// A public client (no secret) and a metadata document store nothing.
	v, err = e.client.AddRemote(t.Context(), wire.AddRemoteRequest{Name: "pub", URL: "https://a.example/mcp",
		OAuth: &wire.AddRemoteOAuth{ClientMetadataURL: "https://switchboard.example/client.json"}})
	if err != nil || v.Config.OAuth == nil || v.Config.OAuth.ClientMetadataURL != "https://switchboard.example/client.json" || v.Config.OAuth.ClientSecret != "" {
		t.Errorf("a public client: %+v, %v", v.Config.OAuth, err)
	}
	if keys, _ := e.secrets.Keys("pub"); len(keys) != 0 {
		t.Errorf("secrets of a public client: %v", keys)
	}
}

// Bad requests name what is wrong and change nothing: no config entry,
// no secret stored.
func TestAddRemoteBadRequests(t *testing.T) {
	e := newClientsEnv(t)
	self := e.srv.URL + "/mcp" // this very listener
	tests := []struct {
		name, body string
		status     int
		want       string
	}{
		{"no name", `{"url": "https://a.example/mcp"}`, http.StatusBadRequest, `"name" is missing`},
		{"no url", `{"name": "r"}`, http.StatusBadRequest, `"url" is missing`},
		{"bad name", `{"name": "a b", "url": "https://a.example/mcp"}`, http.StatusBadRequest, `servers.a b`},
		{"not http", `{"name": "r", "url": "ftp://a.example/mcp"}`, http.StatusBadRequest,
			`servers.r.url: invalid URL "ftp://a.example/mcp": use https://`},
		{"http to another machine", `{"name": "r", "url": "http://mcp.example.com/mcp", "secretHeaders": {"Authorization": "Bearer x"}}`,
			http.StatusBadRequest, `servers.r.url: invalid URL "http://mcp.example.com/mcp": http:// is only for this machine`},
		{"no host", `{"name": "r", "url": "https:///mcp"}`, http.StatusBadRequest, "it has no host"},
		{"a password in the URL", `{"name": "r", "url": "https://me:pw@a.example/mcp"}`, http.StatusBadRequest, "user name or password"},
		{"bad transport", `{"name": "r", "url": "https://a.example/mcp", "transport": "websocket"}`, http.StatusBadRequest,
			`servers.r.transport: invalid value "websocket"`},
		{"a header of the transport", `{"name": "r", "url": "https://a.example/mcp", "headers": {"Content-Type": "text/plain"}}`,
			http.StatusBadRequest, `header "Content-Type" is set by the MCP transport itself`},
		{"plain and secret", `{"name": "r", "url": "https://a.example/mcp", "headers": {"Authorization": "a"}, "secretHeaders": {"authorization": "b"}}`,
			http.StatusBadRequest, "is both in headers and in secretHeaders"},
		{"a line break in a secret", `{"name": "r", "url": "https://a.example/mcp", "secretHeaders": {"Authorization": "Bearer x\r\nX-Evil: 1"}}`,
			http.StatusBadRequest, "secretHeaders.Authorization: a header value cannot contain line breaks"},
		{"Switchboard itself", `{"name": "r", "url": "` + self + `"}`, http.StatusBadRequest, "points at Switchboard's own listener"},
		{"a name taken", `{"name": "fs", "url": "https://a.example/mcp", "secretHeaders": {"Authorization": "Bearer x"}}`,
			http.StatusConflict, `server "fs" already exists`},
		{"unknown key", `{"name": "r", "url": "https://a.example/mcp", "header": {"A": "b"}}`, http.StatusBadRequest, `unknown field "header"`},
		{"an http metadata URL", `{"name": "r", "url": "https://a.example/mcp", "oauth": {"clientId": "c", "clientSecret": "s", "clientMetadataUrl": "http://a.example/c.json"}}`,
			http.StatusBadRequest, "servers.r.oauth.clientMetadataUrl"},
		{"a misspelt oauth key", `{"name": "r", "url": "https://a.example/mcp", "oauth": {"client_id": "c"}}`, http.StatusBadRequest, `unknown field "client_id"`},
	}
	before, _ := json.Marshal(e.cfg.Current())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := e.request(t, http.MethodPost, "/api/v1/remotes", tt.body, nil)
			var er wire.ErrorResponse
			json.NewDecoder(resp.Body).Decode(&er)
			if resp.StatusCode != tt.status || !strings.Contains(er.Error, tt.want) {
				t.Errorf("%d %q, want %d with %q", resp.StatusCode, er.Error, tt.status, tt.want)
			}
			for _, name := range []string{"r", "fs"} {
				if keys, _ := e.secrets.Keys(name); len(keys) != 0 {
					t.Errorf("a refused add stored secrets of %s: %v", name, keys)
				}
			}
		})
	}
	if after, _ := json.Marshal(e.cfg.Current()); string(after) != string(before) {
		t.Errorf("refused adds changed the config:\n%s\n%s", before, after)
	}
}

// A daemon without a secret store takes a remote server without secret
// headers and refuses one with them.
func TestAddRemoteWithoutSecretStore(t *testing.T) {
	e := newClientsEnvWith(t, func(o *api.Options) { o.Secrets = nil })
	_, err := e.client.AddRemote(t.Context(), wire.AddRemoteRequest{Name: "r", URL: "https://a.example/mcp",
		SecretHeaders: map[string]string{"Authorization": "Bearer x"}})
	if statusOf(err) != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "no secret store") {
		t.Errorf("secret headers without a store: %v", err)
	}
	if _, ok := e.cfg.Current().Servers["r"]; ok {
		t.Error("the server was added without its secret")
	}
	if _, err := e.client.AddRemote(t.Context(), wire.AddRemoteRequest{Name: "r", URL: "https://a.example/mcp"}); err != nil {
		t.Errorf("without secret headers: %v", err)
	}
}
