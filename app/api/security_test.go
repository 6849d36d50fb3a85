package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/app/api"
	"github.com/switchboardhq/switchboard/app/api/client"
	"github.com/switchboardhq/switchboard/app/api/wire"
)

func TestSecurity(t *testing.T) {
	e := newEnv(t)
	u, _ := url.Parse(e.srv.URL)
	port := u.Port()
	cursor, err := e.tokens.Issue("cursor")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		method     string // default GET
		path       string // default /api/v1/status
		header     map[string]string
		wantStatus int
		wantError  string // substring of the error message
	}{
		{name: "good token", wantStatus: 200},
		{name: "a client's token", header: map[string]string{"Authorization": "Bearer " + cursor.Secret}, wantStatus: 403, wantError: "MCP client"},
		{name: "scheme is case-insensitive", header: map[string]string{"Authorization": "bearer " + e.token.Secret}, wantStatus: 200},
		{name: "no token", header: map[string]string{"Authorization": ""}, wantStatus: 401, wantError: "missing token"},
		{name: "wrong token", header: map[string]string{"Authorization": "Bearer sb_wrong"}, wantStatus: 401, wantError: "invalid token"},
		{name: "token prefix", header: map[string]string{"Authorization": "Bearer " + e.token.Secret[:20]}, wantStatus: 401, wantError: "invalid token"},
		{name: "basic auth", header: map[string]string{"Authorization": "Basic " + e.token.Secret}, wantStatus: 401, wantError: "not a bearer token"},
		{name: "bearer without secret", header: map[string]string{"Authorization": "Bearer "}, wantStatus: 401, wantError: "not a bearer token"},
		{name: "no token on an unknown path", path: "/nope", header: map[string]string{"Authorization": ""}, wantStatus: 401},

		{name: "Host evil.com", header: map[string]string{"Host": "evil.com"}, wantStatus: 403, wantError: `Host "evil.com"`},
		{name: "Host evil.com with port", header: map[string]string{"Host": "evil.com:" + port}, wantStatus: 403},
		{name: "Host evil.com without token", header: map[string]string{"Host": "evil.com", "Authorization": ""}, wantStatus: 403},
		{name: "Host 127.0.0.2", header: map[string]string{"Host": "127.0.0.2:" + port}, wantStatus: 403},
		{name: "Host localhost.evil.com", header: map[string]string{"Host": "localhost.evil.com:" + port}, wantStatus: 403},
		{name: "Host localhost", header: map[string]string{"Host": "localhost:" + port}, wantStatus: 200},
		{name: "Host LOCALHOST", header: map[string]string{"Host": "LOCALHOST:" + port}, wantStatus: 200},
		{name: "Host [::1]", header: map[string]string{"Host": "[::1]:" + port}, wantStatus: 200},
		{name: "Host without port", header: map[string]string{"Host": "127.0.0.1"}, wantStatus: 200},

		{name: "Origin https://evil.example", header: map[string]string{"Origin": "https://evil.example"}, wantStatus: 403, wantError: "cross-origin"},
		{name: "Origin evil POST", method: "POST", path: "/api/v1/servers/fs/stop",
			header: map[string]string{"Origin": "https://evil.example"}, wantStatus: 403},
		{name: "Origin null", header: map[string]string{"Origin": "null"}, wantStatus: 403},
		{name: "Origin other port", header: map[string]string{"Origin": "http://127.0.0.1:1"}, wantStatus: 403},
		{name: "Origin https loopback", header: map[string]string{"Origin": "https://127.0.0.1:" + port}, wantStatus: 403},
		{name: "Origin loopback subdomain", header: map[string]string{"Origin": "http://localhost.evil.example:" + port}, wantStatus: 403},
		{name: "same origin", header: map[string]string{"Origin": "http://127.0.0.1:" + port}, wantStatus: 200},
		{name: "same origin POST", method: "POST", path: "/api/v1/servers/fs/stop",
			header: map[string]string{"Origin": "http://127.0.0.1:" + port, "Sec-Fetch-Site": "same-origin"}, wantStatus: 200},
		{name: "localhost origin", header: map[string]string{"Origin": "http://localhost:" + port}, wantStatus: 200},
		{name: "cross-site POST without Origin", method: "POST", path: "/api/v1/servers/fs/stop",
			header: map[string]string{"Sec-Fetch-Site": "cross-site"}, wantStatus: 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method, path := tt.method, tt.path
			if method == "" {
				method = "GET"
			}
			if path == "" {
				path = "/api/v1/status"
			}
			resp := e.request(t, method, path, "", tt.header)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantStatus == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q", resp.Header.Get("WWW-Authenticate"))
			}
			if tt.wantStatus >= 400 {
				var er wire.ErrorResponse
				if err := json.Unmarshal(body, &er); err != nil || er.Error == "" {
					t.Fatalf("error body %s is not an ErrorResponse", body)
				}
				if !strings.Contains(er.Error, tt.wantError) {
					t.Errorf("error %q does not contain %q", er.Error, tt.wantError)
				}
			}
		})
	}
}

// TestRequestLog: requests are logged at Debug with the token's label, never
// with the token.
func TestRequestLog(t *testing.T) {
	e := newEnv(t)
	if _, err := e.client.Status(t.Context()); err != nil {
		t.Fatal(err)
	}
	bad := &client.Client{BaseURL: e.srv.URL, Token: "sb_not-a-token", HTTP: e.srv.Client()}
	if _, err := bad.Status(t.Context()); err == nil {
		t.Fatal("a wrong token was accepted")
	}
	logs := e.logs.String()
	for _, want := range []string{"path=/api/v1/status", "status=200", "client=cli", "status=401"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	for _, secret := range []string{e.token.Secret, "sb_not-a-token"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a token is in the log:\n%s", logs)
		}
	}
	if got := api.TokenLabel(context.Background()); got != "" {
		t.Errorf("TokenLabel of a bare context = %q", got)
	}
}

func TestNotFoundAndMethod(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		method, path string
		wantStatus   int
		wantError    string
		wantAllow    string
	}{
		{"GET", "/api/v1/nope", 404, "no such endpoint: GET /api/v1/nope", ""},
		{"GET", "/", 404, "no such endpoint", ""},
		{"DELETE", "/api/v1/status", 405, "method DELETE is not allowed for /api/v1/status", "GET, HEAD"},
		{"PATCH", "/api/v1/servers/fs", 405, "not allowed", "DELETE, GET, HEAD, PUT"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			resp := e.request(t, tt.method, tt.path, "", nil)
			var er wire.ErrorResponse
			if err := json.NewDecoder(resp.Body).Decode(&er); err != nil {
				t.Fatalf("body is not JSON: %v", err)
			}
			if resp.StatusCode != tt.wantStatus || !strings.Contains(er.Error, tt.wantError) {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, er.Error, tt.wantStatus, tt.wantError)
			}
			if got := resp.Header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type = %q", ct)
			}
		})
	}
}

func TestNewRequiresDependencies(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name string
		opts api.Options
		want string
	}{
		{"no supervisor", api.Options{Config: e.cfg, Tokens: e.tokens}, "Supervisor"},
		{"no config", api.Options{Supervisor: e.sup, Tokens: e.tokens}, "Config"},
		{"no tokens", api.Options{Supervisor: e.sup, Config: e.cfg}, "Tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := api.New(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New error = %v, want one naming %s", err, tt.want)
			}
		})
	}
}

// TestRefusedBeforeTheBody: a request refused from its headers gets its
// answer at once, with Connection: close, though it declares a body it is
// still sending (a Content-Length larger than what it sent), and its
// connection is closed soon after; a refused request without a body keeps
// its connection. The test server has no read timeout: without this, the
// answer would wait for a body that never comes.
func TestRefusedBeforeTheBody(t *testing.T) {
	e := newEnv(t)
	addr := strings.TrimPrefix(e.srv.URL, "http://")
	cursor, err := e.tokens.Issue("cursor")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, method, path, header string
		body                       bool
		want                       int
	}{
		{"no token", "POST", "/api/v1/servers", "", true, http.StatusUnauthorized},
		{"a wrong token", "POST", "/api/v1/servers", "Authorization: Bearer sb_wrong\r\n", true, http.StatusUnauthorized},
		{"a client's token on the API", "POST", "/api/v1/servers", "Authorization: Bearer " + cursor.Secret + "\r\n", true, http.StatusForbidden},
		{"a foreign Origin", "POST", "/api/v1/servers", "Origin: https://evil.example\r\n", true, http.StatusForbidden},
		{"a foreign Host", "POST", "/api/v1/servers", "Host: evil.example\r\n", true, http.StatusForbidden},
		{"no token, no body", "GET", "/api/v1/status", "", false, http.StatusUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			head := tt.method + " " + tt.path + " HTTP/1.1\r\n" + tt.header
			if !strings.Contains(tt.header, "Host:") {
				head += "Host: " + addr + "\r\n"
			}
			if tt.body {
				head += "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
			} else {
				head += "\r\n"
			}
			start := time.Now()
			if _, err := io.WriteString(c, head); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer in %s: %v", time.Since(start).Round(time.Millisecond), err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			answered := time.Since(start)
			if resp.StatusCode != tt.want || answered > time.Second {
				t.Errorf("%d after %s, want %d at once", resp.StatusCode, answered.Round(time.Millisecond), tt.want)
			}
			if resp.Close != tt.body { // Connection: close
				t.Errorf("Connection: close %v, with a body still coming %v", resp.Close, tt.body)
			}
			if !tt.body {
				return
			}
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := br.Read(make([]byte, 1)); n != 0 || err == nil {
				t.Fatalf("read after the answer: %d %v, want the connection closed", n, err)
			}
			if closed := time.Since(start); closed > 2*time.Second {
				t.Errorf("the connection was closed %s after the request, want well under 2s", closed.Round(time.Millisecond))
			}
		})
	}
}
