package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRemoteServerRoundTrip(t *testing.T) {
	in := server(`{"url": "https://mcp.example.com/mcp", "headers": {"X-Team": "a"},
	  "secretHeaders": {"Authorization": "secret-name"}, "transport": "auto", "timeout": "30s"}`)
	cfg, err := Parse("config.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Servers["fs"]
	want := Server{URL: "https://mcp.example.com/mcp", Headers: map[string]string{"X-Team": "a"},
		SecretHeaders: map[string]string{"Authorization": "secret-name"}, Transport: TransportAuto}
	want.Timeout.Duration = 30e9
	if diff := cmp.Diff(want, s, cmpOpts); diff != "" {
		t.Fatalf("parsed remote server (-want +got):\n%s", diff)
	}
	if !s.IsRemote() {
		t.Error("IsRemote() = false for an entry with a url")
	}
	_, data := saveAndRead(t, cfg)
	const wantFile = `    "fs": {
      "url": "https://mcp.example.com/mcp",
      "transport": "auto",
      "headers": {
        "X-Team": "a"
      },
      "secretHeaders": {
        "Authorization": "secret-name"
      },
      "timeout": "30s"
    }`
	if !strings.Contains(string(data), wantFile) {
		t.Errorf("saved file has no command key and the remote keys in order; got:\n%s", data)
	}
	again, err := Parse("config.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, again, cmpOpts); diff != "" {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
	// A clone does not share the maps.
	c := cfg.Clone()
	c.Servers["fs"].Headers["X-Team"] = "b"
	c.Servers["fs"].SecretHeaders["Authorization"] = "other"
	if cfg.Servers["fs"].Headers["X-Team"] != "a" || cfg.Servers["fs"].SecretHeaders["Authorization"] != "secret-name" {
		t.Error("Clone shares headers or secretHeaders")
	}
}

func TestValidateRemote(t *testing.T) {
	remote := func(modify func(*Server)) func(*Config) {
		return func(c *Config) {
			s := Server{URL: "https://mcp.example.com/mcp"}
			modify(&s)
			c.Servers["r"] = s
		}
	}
	for _, tt := range []struct {
		name   string
		modify func(c *Config)
		field  string // "" means valid
		msg    string // part of the message
	}{
		{"https", remote(func(s *Server) {}), "", ""},
		{"all settings", remote(func(s *Server) {
			s.Headers = map[string]string{"X-Team": "a"}
			s.SecretHeaders = map[string]string{"Authorization": "linear-token"}
			s.Transport = TransportStreamableHTTP
			s.DisabledTools = []string{"x"}
			s.Alias = "lin"
		}), "", ""},
		{"transport sse", remote(func(s *Server) { s.Transport = TransportSSE }), "", ""},
		{"http loopback", remote(func(s *Server) { s.URL = "http://127.0.0.1:9000/mcp" }), "", ""},
		{"http loopback 127/8", remote(func(s *Server) { s.URL = "http://127.3.4.5:9000/mcp" }), "", ""},
		{"http ::1", remote(func(s *Server) { s.URL = "http://[::1]:9000/mcp" }), "", ""},
		{"http localhost", remote(func(s *Server) { s.URL = "http://LocalHost:9000/mcp" }), "", ""},
		{"http LAN", remote(func(s *Server) { s.URL = "http://192.168.1.2:9000/mcp" }), "servers.r.url", "http:// is only for this machine"},
		{"http name", remote(func(s *Server) { s.URL = "http://mcp.example.com/mcp" }), "servers.r.url", "use https://"},
		{"ftp", remote(func(s *Server) { s.URL = "ftp://mcp.example.com/" }), "servers.r.url", "use https://"},
		{"no scheme", remote(func(s *Server) { s.URL = "mcp.example.com/mcp" }), "servers.r.url", "use https://"},
		{"no host", remote(func(s *Server) { s.URL = "https:///mcp" }), "servers.r.url", "no host"},
		{"password in url", remote(func(s *Server) { s.URL = "https://me:hunter2@mcp.example.com/" }), "servers.r.url", "secretHeaders"},
		{"unparsable", remote(func(s *Server) { s.URL = "https://[::1/" }), "servers.r.url", "invalid URL"},
		{"own listener", remote(func(s *Server) { s.URL = "http://localhost:7391/mcp" }), "servers.r.url", "own listener"},
		{"own listener by address", remote(func(s *Server) { s.URL = "http://127.0.0.1:7391/mcp/x" }), "servers.r.url", "own listener"},
		{"another loopback port", remote(func(s *Server) { s.URL = "http://127.0.0.1:7392/mcp" }), "", ""},
		{"command too", remote(func(s *Server) { s.Command = "npx" }), "servers.r.command", "takes no command"},
		{"args", remote(func(s *Server) { s.Args = []string{"-y"} }), "servers.r.args", "takes no args"},
		{"env", remote(func(s *Server) { s.Env = map[string]string{"A": "1"} }), "servers.r.env", "takes no env"},
		{"secretEnv", remote(func(s *Server) { s.SecretEnv = []string{"A"} }), "servers.r.secretEnv", "takes no secretEnv"},
		{"cwd", remote(func(s *Server) { s.Cwd = "/tmp" }), "servers.r.cwd", "takes no cwd"},
		{"pool", remote(func(s *Server) { s.Pool = Pool{Max: 2} }), "servers.r.pool", "takes no pool"},
		{"transport unknown", remote(func(s *Server) { s.Transport = "websocket" }), "servers.r.transport", `"websocket"`},
		{"header name", remote(func(s *Server) { s.Headers = map[string]string{"X Team": "a"} }), "servers.r.headers", "invalid header name"},
		{"header value newline", remote(func(s *Server) { s.Headers = map[string]string{"X-Team": "a\r\nX-Evil: 1"} }), "servers.r.headers.X-Team", "line breaks"},
		{"header the transport sets", remote(func(s *Server) { s.Headers = map[string]string{"mcp-session-id": "a"} }), "servers.r.headers", "set by the MCP transport"},
		{"secret header the transport sets", remote(func(s *Server) { s.SecretHeaders = map[string]string{"Content-Type": "a"} }), "servers.r.secretHeaders", "set by the MCP transport"},
		{"header plain and secret", remote(func(s *Server) {
			s.Headers = map[string]string{"authorization": "Bearer x"}
			s.SecretHeaders = map[string]string{"Authorization": "tok"}
		}), "servers.r.secretHeaders.Authorization", "both in headers and in secretHeaders"},
		{"secret name empty", remote(func(s *Server) { s.SecretHeaders = map[string]string{"Authorization": ""} }), "servers.r.secretHeaders.Authorization", "invalid secret name"},
		{"secret name with slash", remote(func(s *Server) { s.SecretHeaders = map[string]string{"Authorization": "a/b"} }), "servers.r.secretHeaders.Authorization", "invalid secret name"},
		{"headers on a local server", func(c *Config) {
			c.Servers["l"] = Server{Command: "x", Headers: map[string]string{"X-Team": "a"}}
		}, "servers.l.headers", "only a remote server"},
		{"transport on a local server", func(c *Config) { c.Servers["l"] = Server{Command: "x", Transport: TransportSSE} }, "servers.l.transport", "only a remote server"},
		{"neither command nor url", func(c *Config) { c.Servers["l"] = Server{} }, "servers.l.command", "or a url"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.modify(c)
			err := c.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error for %s", tt.field)
			}
			e := asError(t, err)
			if e.Field != tt.field || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Validate() = %v (field %q), want field %q and %q in the message", err, e.Field, tt.field, tt.msg)
			}
		})
	}
}

// The value of a header is a secret more often than not: errors about it
// never quote it.
func TestRemoteHeaderErrorsDoNotQuoteValues(t *testing.T) {
	for _, in := range []string{
		server(`{"url": "https://x.example/mcp", "headers": {"Authorization": 12345}}`),
		server(`{"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer sk-12345\n"}}`),
	} {
		_, err := Parse("config.json", []byte(in))
		if err == nil {
			t.Fatalf("Parse(%s) = nil error", in)
		}
		if strings.Contains(err.Error(), "12345") {
			t.Errorf("error quotes the header's value: %v", err)
		}
		if e := asError(t, err); !strings.HasPrefix(e.Field, "servers.fs.headers") || e.Line == 0 {
			t.Errorf("error %v: want a position and the field servers.fs.headers...", err)
		}
	}
}

func TestPointsAt(t *testing.T) {
	for _, tt := range []struct {
		url, listen string
		want        bool
	}{
		{"http://127.0.0.1:7391/mcp", "127.0.0.1:7391", true},
		{"http://localhost:7391/mcp", "127.0.0.1:7391", true},
		{"http://[::1]:7391/mcp", "localhost:7391", true},
		{"http://127.0.0.1:7391/mcp", "127.0.0.1:0", false},
		{"http://127.0.0.1:7392/mcp", "127.0.0.1:7391", false},
		{"https://localhost/mcp", "127.0.0.1:443", true},
		{"http://localhost/mcp", "127.0.0.1:80", true},
		{"https://mcp.example.com:7391/mcp", "127.0.0.1:7391", false},
		{"", "127.0.0.1:7391", false},
	} {
		if got := (Server{URL: tt.url}).PointsAt(tt.listen); got != tt.want {
			t.Errorf("Server{URL: %q}.PointsAt(%q) = %v, want %v", tt.url, tt.listen, got, tt.want)
		}
	}
	cfg := &Config{Servers: map[string]Server{
		"self": {URL: "http://127.0.0.1:40000/mcp"}, "other": {URL: "https://x.example/mcp"}, "local": {Command: "x"}}}
	errs := cfg.CheckNotSelf("127.0.0.1:40000")
	if len(errs) != 1 || errs["self"] == nil || !strings.Contains(errs["self"].Error(), "servers.self.url") {
		t.Errorf("CheckNotSelf = %v, want one error for servers.self.url", errs)
	}
}

func TestRemoteOAuthRoundTrip(t *testing.T) {
	in := server(`{"url": "https://mcp.example.com/mcp", "oauth": {"clientMetadataUrl": "https://example.com/sb.json",
	  "scopes": ["read", "write"], "clientSecret": "client-secret", "clientId": "abc"}}`)
	cfg, err := Parse("config.json", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &OAuth{ClientID: "abc", ClientSecret: "client-secret", Scopes: []string{"read", "write"}, ClientMetadataURL: "https://example.com/sb.json"}
	if diff := cmp.Diff(want, cfg.Servers["fs"].OAuth); diff != "" {
		t.Fatalf("parsed oauth (-want +got):\n%s", diff)
	}
	_, data := saveAndRead(t, cfg)
	const wantFile = `      "oauth": {
        "clientId": "abc",
        "clientSecret": "client-secret",
        "scopes": [
          "read",
          "write"
        ],
        "clientMetadataUrl": "https://example.com/sb.json"
      }`
	if !strings.Contains(string(data), wantFile) {
		t.Errorf("saved file has not the oauth keys in order; got:\n%s", data)
	}
	again, err := Parse("config.json", data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cfg, again, cmpOpts); diff != "" {
		t.Errorf("round trip (-first +second):\n%s", diff)
	}
	c := cfg.Clone()
	c.Servers["fs"].OAuth.Scopes[0] = "admin"
	c.Servers["fs"].OAuth.ClientID = "other"
	if o := cfg.Servers["fs"].OAuth; o.Scopes[0] != "read" || o.ClientID != "abc" {
		t.Error("Clone shares the oauth key")
	}
	// An empty object is no oauth at all, and is not written.
	cfg, err = Parse("config.json", []byte(server(`{"url": "https://mcp.example.com/mcp", "oauth": {}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if o := cfg.Servers["fs"].OAuth; o != nil {
		t.Errorf(`"oauth": {} parsed as %+v, want nil`, o)
	}
}

func TestParseRemoteOAuthErrors(t *testing.T) {
	for _, tt := range []struct {
		entry, field, msg string
	}{
		{`{"url": "https://x.example/mcp", "oauth": "abc"}`, "servers.fs.oauth", "expected an object"},
		{`{"url": "https://x.example/mcp", "oauth": {"clientID": "abc"}}`, "servers.fs.oauth.clientID", "one of clientId"},
		{`{"url": "https://x.example/mcp", "oauth": {"clientId": 12}}`, "servers.fs.oauth.clientId", "a string"},
		{`{"url": "https://x.example/mcp", "oauth": {"scopes": "read"}}`, "servers.fs.oauth.scopes", "an array of strings"},
		// Whatever the value of clientSecret is, it is not quoted.
		{`{"url": "https://x.example/mcp", "oauth": {"clientId": "a", "clientSecret": 987654321}}`, "servers.fs.oauth.clientSecret", "(a number)"},
	} {
		_, err := Parse("config.json", []byte(server(tt.entry)))
		if err == nil {
			t.Errorf("Parse(%s) = nil error, want one for %s", tt.entry, tt.field)
			continue
		}
		if e := asError(t, err); e.Field != tt.field || e.Line == 0 || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("Parse(%s) = %v (field %q), want field %q with a position and %q", tt.entry, err, e.Field, tt.field, tt.msg)
		}
		if strings.Contains(err.Error(), "987654321") {
			t.Errorf("the error quotes the client secret: %v", err)
		}
	}
}

func TestValidateRemoteOAuth(t *testing.T) {
	for _, tt := range []struct {
		name  string
		oauth OAuth
		field string // "" means valid
		msg   string
	}{
		{"client id", OAuth{ClientID: "abc"}, "", ""},
		{"confidential client", OAuth{ClientID: "abc", ClientSecret: "r-secret"}, "", ""},
		{"scopes only", OAuth{Scopes: []string{"read", "mcp:tools"}}, "", ""},
		{"metadata document", OAuth{ClientMetadataURL: "https://example.com/c/sb.json"}, "", ""},
		{"secret without id", OAuth{ClientSecret: "r-secret"}, "servers.r.oauth.clientSecret", "needs the clientId"},
		{"secret name with slash", OAuth{ClientID: "a", ClientSecret: "x/y"}, "servers.r.oauth.clientSecret", "invalid secret name"},
		{"client id with spaces", OAuth{ClientID: " abc"}, "servers.r.oauth.clientId", "surrounding spaces"},
		{"client id with newline", OAuth{ClientID: "a\nb"}, "servers.r.oauth.clientId", "control characters"},
		{"empty scope", OAuth{Scopes: []string{"read", ""}}, "servers.r.oauth.scopes[1]", "invalid scope"},
		{"scope with space", OAuth{Scopes: []string{"read write"}}, "servers.r.oauth.scopes[0]", "without spaces"},
		{"metadata over http", OAuth{ClientMetadataURL: "http://example.com/sb.json"}, "servers.r.oauth.clientMetadataUrl", "https://"},
		{"metadata on loopback http", OAuth{ClientMetadataURL: "http://127.0.0.1/sb.json"}, "servers.r.oauth.clientMetadataUrl", "https://"},
		{"metadata without path", OAuth{ClientMetadataURL: "https://example.com/"}, "servers.r.oauth.clientMetadataUrl", "needs a path"},
		{"metadata with fragment", OAuth{ClientMetadataURL: "https://example.com/sb.json#x"}, "servers.r.oauth.clientMetadataUrl", "fragment"},
		{"metadata without host", OAuth{ClientMetadataURL: "https:///sb.json"}, "servers.r.oauth.clientMetadataUrl", "https://"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			o := tt.oauth
			c.Servers["r"] = Server{URL: "https://mcp.example.com/mcp", OAuth: &o}
			err := c.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error for %s", tt.field)
			}
			if e := asError(t, err); e.Field != tt.field || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Validate() = %v (field %q), want field %q and %q in the message", err, e.Field, tt.field, tt.msg)
			}
		})
	}
	c := validConfig()
	c.Servers["l"] = Server{Command: "x", OAuth: &OAuth{ClientID: "a"}}
	if err := c.Validate(); err == nil || asError(t, err).Field != "servers.l.oauth" {
		t.Errorf("oauth on a local server: Validate() = %v, want an error for servers.l.oauth", err)
	}
}
